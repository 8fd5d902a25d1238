import { createWriteStream, existsSync, mkdirSync, renameSync, statSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/** The server's log is kept to about this size: past it, it becomes server.log.1 (the older one goes). */
export const SERVER_LOG_MAX_BYTES = 10 * 1024 * 1024;

/** Whether a log of this size (null: none yet) is put aside before the server writes again. */
export function needsRotation(sizeBytes: number | null): boolean {
  return sizeBytes !== null && sizeBytes > SERVER_LOG_MAX_BYTES;
}

/** The server's output, in the OS's log folder, rotated at start (server.log, and server.log.1 before it). */
export function openServerLog(dir: string): WriteStream {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'server.log');
  if (needsRotation(existsSync(file) ? statSync(file).size : null)) renameSync(file, `${file}.1`);
  return createWriteStream(file, { flags: 'a', mode: 0o600 });
}
