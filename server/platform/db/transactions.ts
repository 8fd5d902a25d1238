import type Sqlite from 'better-sqlite3';
import { writePriority, type WritePriority } from './write-priority.js';

/**
 * The one way the service runs a transaction on a connection. better-sqlite3's `transaction(fn)`
 * builds wrapper functions and defines properties on each through `Object.defineProperties`, which
 * costs more than the INSERT of a row. Built on every call, as `sqlite.transaction(() => …)()`
 * does, they are a large share of a create's work. These take the work as an argument of
 * transaction functions built once per connection; the BEGIN, COMMIT, ROLLBACK and savepoint logic
 * is better-sqlite3's own, unchanged.
 */
export interface Transactions {
  /**
   * Runs `work` in a transaction (BEGIN, deferred), or in a savepoint of the transaction open on
   * the connection: all of it is written, or none of it when it throws (and the error goes on).
   * Returns what `work` returned; `work` must be synchronous.
   */
  transaction<T>(work: () => T): T;
  /** The same with BEGIN IMMEDIATE: the write lock from the start, so that a read followed by a write never meets SQLITE_BUSY between the two. */
  immediateTransaction<T>(work: () => T): T;
  /**
   * From now on, raises a counter shared with another thread for the length of every transaction
   * of this connection (write-priority.ts): the webhook dispatcher's thread begins none meanwhile.
   * The same memory on every call.
   */
  prioritizeWrites(): WritePriority;
}

type Work = () => unknown;

export function connectionTransactions(sqlite: Sqlite.Database): Transactions {
  const run = sqlite.transaction((work: Work) => work());
  const { immediate } = run;
  let priority: ReturnType<typeof writePriority> | undefined;
  const within = <T>(begin: (work: Work) => unknown, work: () => T): T =>
    priority ? priority.during(() => begin(work) as T) : (begin(work) as T);
  return {
    transaction: (work) => within(run, work),
    immediateTransaction: (work) => within(immediate, work),
    prioritizeWrites() {
      priority ??= writePriority();
      return { buffer: priority.buffer };
    },
  };
}
