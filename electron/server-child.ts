import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { utilityProcess } from 'electron';
import type { ChildHandle } from './server-process.js';

const UTILITY_ENTRY = join(fileURLToPath(new URL('.', import.meta.url)), 'utility-bootstrap.cjs');

/** The server in an Electron utility process, its output appended to the server log. */
export function forkServer(utility: typeof utilityProcess, env: Record<string, string>, serverLog: WriteStream | null): ChildHandle {
  const child = utility.fork(UTILITY_ENTRY, [], { env, serviceName: 'Courtier server', stdio: 'pipe' });
  if (serverLog) {
    child.stdout?.pipe(serverLog, { end: false });
    child.stderr?.pipe(serverLog, { end: false });
  }
  return {
    on: (event: 'exit' | 'message', listener: (arg: never) => void) => child.on(event as 'exit', listener as (code: number) => void),
    postMessage: (message) => child.postMessage(message),
    kill: () => child.kill(),
  } as ChildHandle;
}
