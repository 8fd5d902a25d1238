import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

/** The option parsing and printing every command shares, the agent's and the hub's. */

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict: an unknown option or a positional argument is a usage error. */
export function parseOptions<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true }).values;
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0] ?? 'invalid arguments');
  }
}

export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** --json prints exactly one JSON object; without it, lines for a person. */
export function print(io: { stdout: (text: string) => void }, json: boolean, object: object, human: string): void {
  io.stdout(json ? `${JSON.stringify(object)}\n` : `${human}\n`);
}
