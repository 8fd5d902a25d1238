import type Sqlite from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite's automatic checkpoint copies the WAL into the database file, and syncs it, inside the
 * commit that crosses 1,000 WAL pages: a stall of the event loop that makes up a create's whole p99
 * under load. The service instead checkpoints from a worker thread holding its own connection to
 * the same file, with `wal_checkpoint(PASSIVE)`, which never blocks a writer, and turns the
 * automatic checkpoint off on its own connection. Short-lived CLI connections keep SQLite's default.
 */
export interface BackgroundCheckpoints {
  /** Stops the worker and waits (boundedly) until its connection is closed, so that the service's close is the last and removes the WAL. */
  stop(): void;
}

export interface CheckpointOptions {
  /** How often the worker checkpoints; a PASSIVE checkpoint of an empty WAL costs a read lock and no I/O. */
  intervalMs?: number;
  /** Told when the worker fails; the service's connection is then back on SQLite's automatic checkpoint. */
  onFailure?: (err: Error) => void;
}

/** The service's options: a failure is logged (the service goes on, with SQLite's own checkpoints). */
export function checkpointsLoggedTo(logger: { warn(fields: object, message: string): void }): CheckpointOptions {
  return {
    onFailure: (err) => logger.warn({ err: String(err) }, 'the background checkpoint stopped: SQLite checkpoints in commits again'),
  };
}

const DEFAULT_INTERVAL_MS = 200;
/** SQLite's default `wal_autocheckpoint`, restored when the worker fails. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
const STOP_WAIT_MS = 5_000;

/** The worker sets this shared Int32Array's one slot to 1 once its connection is closed. */
const CLOSED = 0;

/**
 * The worker's source, run with `eval: true`: a file beside this one would not load the same way
 * from vitest's TypeScript sources, from dist/ and from the desktop app's archive. It requires
 * better-sqlite3 by the path this thread resolved, so that it finds the same native module.
 */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const Sqlite = require(workerData.betterSqlite3);
const closed = new Int32Array(workerData.closed);
const db = new Sqlite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => checkpoint.get(), workerData.intervalMs);
require('node:worker_threads').parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  Atomics.store(closed, ${CLOSED}, 1);
  Atomics.notify(closed, ${CLOSED});
});
`;

export function checkpointInBackground(sqlite: Sqlite.Database, file: string, options: CheckpointOptions = {}): BackgroundCheckpoints {
  const closed = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      file,
      closed: closed.buffer,
      intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS,
      betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'),
    },
  });
  // The worker must never keep the process alive: `serve` ends by closing the database.
  worker.unref();
  sqlite.pragma('wal_autocheckpoint = 0');
  let failed = false;
  worker.on('error', (err) => {
    failed = true;
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    options.onFailure?.(err);
  });
  return {
    stop() {
      if (failed) return;
      worker.postMessage('stop');
      // A checkpoint under way finishes first; a stuck worker is dropped after the bound.
      if (Atomics.wait(closed, CLOSED, 0, STOP_WAIT_MS) === 'timed-out') void worker.terminate();
    },
  };
}

/** WAL pages a bulk download lets pile up before SQLite checkpoints inside a commit: 64 MiB at 4 KiB pages. */
const BULK_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Runs a long series of write transactions (a join's download of the whole cabinet) with SQLite's
 * automatic checkpoint every 64 MiB of WAL rather than every 4 MiB: each checkpoint copies again
 * the index pages that every transaction touches, a large share of a join's time. A connection
 * whose checkpoints run in the background (automatic checkpoint off) is left as it is.
 */
export async function withFewerCheckpoints<T>(sqlite: Sqlite.Database, work: () => Promise<T>): Promise<T> {
  const pages = Number(sqlite.pragma('wal_autocheckpoint', { simple: true }));
  if (pages === 0 || pages >= BULK_AUTOCHECKPOINT_PAGES) return work();
  sqlite.pragma(`wal_autocheckpoint = ${BULK_AUTOCHECKPOINT_PAGES}`);
  try {
    return await work();
  } finally {
    sqlite.pragma(`wal_autocheckpoint = ${pages}`);
  }
}
