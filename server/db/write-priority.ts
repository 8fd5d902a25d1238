import type Sqlite from 'better-sqlite3';

/**
 * SQLite's write lock is not fair. A connection that finds it taken sleeps 1, 2, 5, 10, 15 ms…
 * before trying again, while a writer on another thread that takes it in a loop gets it back at
 * once: the API's connection, behind the webhook dispatcher's thread, waited tens of milliseconds
 * per create. So the API says when it writes, in memory the thread shares: its connection raises
 * a counter for the length of each transaction, and the thread begins none while it is raised.
 * The API then waits at most for the one transaction of the thread under way.
 */
export interface WritePriority {
  /** Shared with the thread that yields (see yieldsTo). */
  readonly buffer: SharedArrayBuffer;
}

type Run = (...args: never[]) => unknown;

/** Raises the counter around every transaction run on this connection (its variants included). */
export function prioritizeTransactions(sqlite: Sqlite.Database): WritePriority {
  const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const writers = new Int32Array(buffer);
  const transaction = sqlite.transaction.bind(sqlite);
  const raised =
    <R extends Run>(run: R) =>
    (...args: Parameters<R>): ReturnType<R> => {
      Atomics.add(writers, 0, 1);
      try {
        return run(...args) as ReturnType<R>;
      } finally {
        Atomics.sub(writers, 0, 1);
      }
    };
  sqlite.transaction = ((fn) => {
    const run = transaction(fn);
    return Object.assign(raised(run), {
      default: raised(run.default),
      deferred: raised(run.deferred),
      immediate: raised(run.immediate),
      exclusive: raised(run.exclusive),
    });
  }) as Sqlite.Database['transaction'];
  return { buffer };
}

/** For the yielding thread: whether the prioritized connection is in a transaction now. */
export function yieldsTo(buffer: SharedArrayBuffer): () => boolean {
  const writers = new Int32Array(buffer);
  return () => Atomics.load(writers, 0) > 0;
}
