import type { ParseArgsConfig } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { InsurerAdapter } from '../robots/adapter.js';
import type { MachineNetwork } from '../lan/plan.js';
import { loadConfig, type Config } from '../config.js';
import { databaseFile, openDatabase } from '../db/open.js';
import { defaultDeps, type Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { parseOptions, required } from './args.js';

export { print, required } from './args.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  /** The insurers (robots) of this install; the built-in ones unless a test gives others. */
  insurers?: readonly InsurerAdapter[];
  /** The machine's host name and addresses for `lan` (tests give their own). */
  network?: MachineNetwork;
  /** `serve` only: called with the app before it listens (crash tests add a hook there). */
  beforeListen?: (app: FastifyInstance) => void;
}

const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsConfig['options'];

/** An agent command's options: its own and the common ones (--data-dir, --json). */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  return parseOptions(args, { ...COMMON_OPTIONS, ...options });
}

export function withDeps<T>(dataDir: string | undefined, io: Pick<CliIo, 'env' | 'insurers'>, body: (deps: Deps, config: Config) => T | Promise<T>): Promise<T> {
  const config = loadConfig({ dataDir }, io.env);
  const db = openDatabase(databaseFile(config.dataDir));
  return Promise.resolve()
    .then(() => body(defaultDeps(db, config, { insurers: io.insurers, env: io.env }), config))
    .finally(() => db.close());
}

export async function readPassword(io: CliIo, values: Record<string, unknown>): Promise<string> {
  if (values['password-stdin'] === true) {
    if (values.password !== undefined) throw new UsageError('give --password or --password-stdin, not both');
    return (await io.readStdin()).replace(/\r?\n$/, '');
  }
  return required(values, 'password');
}

