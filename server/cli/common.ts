import type { ParseArgsConfig } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Insurer } from '../insurers/registry.js';
import { createLoadedRegistry, localServiceUrl } from '../insurers/service.js';
import type { MachineNetwork } from '../lan/plan.js';
import { loadConfig, type Config } from '../config.js';
import { databaseFile, openDatabase } from '../platform/db/open.js';
import { defaultDeps, type Deps } from '../deps.js';
import { ApiError, UsageError } from '../errors.js';
import { HubRefusal } from '../sync/hub-client.js';
import type { ErrorCode } from '../../shared/errors.js';
import { canonicalDataDir, listRunningServices, runningServicesDir, type RunningService } from '../running-services.js';
import { parseOptions, required } from './args.js';

export { print, required } from './args.js';

/**
 * Runs a service's work and adds, to an error of one of the given codes, what to type on the
 * command line: services speak of the product (the console calls them too), the CLI of its flags.
 */
export async function withFlagHints<T>(work: () => Promise<T>, hints: Partial<Record<ErrorCode, string>>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) {
      const hint = hints[err.code];
      if (hint !== undefined) throw new ApiError(err.code, `${err.message} ${hint}`, err.details, err.headers);
    }
    // The hub's refusals, as the install heard them.
    if (err instanceof HubRefusal) {
      const hint = hints[err.code as ErrorCode];
      if (hint !== undefined) throw new HubRefusal(err.code, `${err.message} ${hint}`, err.status, err.details);
    }
    throw err;
  }
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  /** Set when standard input is a terminal: reads one line without echoing it, after a prompt on standard error. */
  readHiddenLine?: (prompt: string) => Promise<string>;
  env: NodeJS.ProcessEnv;
  /** The insurers (robots) of this install; the built-in ones unless a test gives others. */
  insurers?: readonly Insurer[];
  /** The machine's host name and addresses for `lan` (tests give their own). */
  network?: MachineNetwork;
  /** `serve` only: called with the app before it listens (crash tests add a hook there). */
  beforeListen?: (app: FastifyInstance) => void;
}

/** A command that printed its own outcome, a failure (exit 1): nothing more is said. */
export class ReportedFailure extends Error {
  override name = 'ReportedFailure';
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

/** Where the data dir a command uses was chosen. */
type DataDirSource = '--data-dir' | 'COURTIER_DATA_DIR' | 'default';

/** A path as a shell would need it typed. */
const shellWord = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);

/**
 * What a command says on standard error before it touches a data dir: which one, and, when services
 * are running but none on that data dir, each of them with its own — the service would not see
 * what the command does (an API key made here would be refused there as unknown).
 */
export function dataDirNotice(dataDir: string, source: DataDirSource, running: readonly RunningService[]): string[] {
  const origin = source === 'default' ? 'the default; --data-dir or COURTIER_DATA_DIR chooses another' : `from ${source}`;
  const lines = [`courtier: data dir ${dataDir} (${origin})`];
  const here = canonicalDataDir(dataDir);
  if (running.some((service) => canonicalDataDir(service.data_dir) === here)) return lines;
  for (const service of running) {
    lines.push(
      `courtier: warning: the Courtier service at ${service.url} (pid ${service.pid}) uses another data dir, ${service.data_dir}: ` +
        `it will not see what this command does. Run the command with --data-dir ${shellWord(service.data_dir)} (or the same COURTIER_DATA_DIR as the service).`,
    );
  }
  return lines;
}

function dataDirSource(flag: string | undefined, env: NodeJS.ProcessEnv): DataDirSource {
  if (flag !== undefined) return '--data-dir';
  return env.COURTIER_DATA_DIR ? 'COURTIER_DATA_DIR' : 'default';
}

/**
 * Like withDeps, with the insurers loaded for a service at `serviceUrl` (the running one, whose
 * sandbox portal a demo insurer's robot reaches), or none of the demo ones when it is not running.
 */
export async function withInsurerDeps<T>(
  config: Config,
  io: Pick<CliIo, 'env' | 'insurers'>,
  serviceUrl: string | undefined,
  body: (deps: Deps) => Promise<T>,
): Promise<T> {
  const db = openDatabase(databaseFile(config.dataDir));
  try {
    const insurers = io.insurers ?? (await createLoadedRegistry(config, { serviceUrl: serviceUrl ? () => serviceUrl : undefined }));
    return await body(defaultDeps(db, config, { insurers, env: io.env }));
  } finally {
    db.close();
  }
}

export function withDeps<T>(
  dataDir: string | undefined,
  io: Pick<CliIo, 'env' | 'insurers' | 'stderr'>,
  body: (deps: Deps, config: Config) => T | Promise<T>,
): Promise<T> {
  const config = loadConfig({ dataDir }, io.env);
  const running = listRunningServices(runningServicesDir(io.env));
  for (const line of dataDirNotice(config.dataDir, dataDirSource(dataDir, io.env), running)) io.stderr(`${line}\n`);
  const db = openDatabase(databaseFile(config.dataDir));
  return Promise.resolve()
    .then(async () => {
      const insurers =
        io.insurers ??
        (await createLoadedRegistry(config, { serviceUrl: config.sandbox ? () => localServiceUrl(config.host, config.port) : undefined }));
      return body(defaultDeps(db, config, { insurers, env: io.env }), config);
    })
    .finally(() => db.close());
}

/**
 * A password given with --password-stdin: typed at the prompt without echo when standard input is
 * a terminal, else all of standard input (a pipe or a file) less one trailing newline.
 */
export async function readStdinPassword(
  io: Pick<CliIo, 'readStdin' | 'readHiddenLine'>,
  prompt = 'Password (not shown): ',
): Promise<string> {
  if (io.readHiddenLine) return io.readHiddenLine(prompt);
  return (await io.readStdin()).replace(/\r?\n$/, '');
}

export async function readPassword(io: CliIo, values: Record<string, unknown>): Promise<string> {
  if (values['password-stdin'] === true) {
    if (values.password !== undefined) throw new UsageError('give --password or --password-stdin, not both');
    return readStdinPassword(io);
  }
  return required(values, 'password');
}
