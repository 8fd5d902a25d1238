/**
 * SQLite's write lock is not fair. A connection that finds it taken sleeps 1, 2, 5, 10, 15 ms…
 * before trying again, while a writer on another thread that takes it in a loop gets it back at
 * once: the API's connection, behind the webhook dispatcher's thread, could wait through several of
 * those sleeps per create. So the API says when it writes, in memory the thread shares: its
 * connection raises a counter for the length of each transaction, and the thread begins none while
 * it is raised. The API then waits at most for the one transaction of the thread under way. The
 * API's connection raises it through its Transactions (transactions.ts: prioritizeWrites).
 */
export interface WritePriority {
  /** Shared with the thread that yields (see yieldsTo). */
  readonly buffer: SharedArrayBuffer;
}

/** The counter and the way to raise it around a piece of work (a transaction, transactions.ts). */
export function writePriority(): WritePriority & { during<T>(work: () => T): T } {
  const buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const writers = new Int32Array(buffer);
  return {
    buffer,
    during(work) {
      Atomics.add(writers, 0, 1);
      try {
        return work();
      } finally {
        Atomics.sub(writers, 0, 1);
      }
    },
  };
}

/** For the yielding thread: whether the prioritized connection is in a transaction now. */
export function yieldsTo(buffer: SharedArrayBuffer): () => boolean {
  const writers = new Int32Array(buffer);
  return () => Atomics.load(writers, 0) > 0;
}
