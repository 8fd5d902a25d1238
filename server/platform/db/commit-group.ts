import type Sqlite from 'better-sqlite3';
import type { Transactions } from './transactions.js';

/**
 * Group commit. A commit writes every page it dirtied to the WAL, two write() calls each: a create
 * through the API dirties many pages, and its commit is a large share of its CPU. Creates that
 * arrive together touch mostly the same pages (the tables' last pages, the time-ordered indexes,
 * the sequence), so the API's idempotent writes of one turn of the event loop share one
 * transaction: what each wrote is undone alone when it throws (the first by rolling back the
 * transaction, which holds nothing else yet, each other one by a savepoint of its own), and every
 * caller hears its result once the shared COMMIT has succeeded, never before. A response still
 * leaves only after what it describes is durable, as with a transaction per request. The robot
 * worker writes through the same group (one per connection, `Database.commitGroup`): a finished
 * job's outcome, and the claim of the next job that it frees a slot for, share the transaction.
 */
export interface CommitGroup {
  /**
   * Runs synchronous `work` in the transaction shared by this turn's work, on a later tick (work
   * that joins while that transaction is open, from inside another member, runs in it too); resolves
   * with what it returned after COMMIT, or rejects with what it threw (its writes undone) or with
   * the error that failed the whole transaction (nothing of the group written).
   */
  run<T>(work: () => T): Promise<T>;
}

export interface CommitGroupOptions {
  /** Work of one turn beyond this waits for the next transaction: a bound on the time the write lock is held. */
  maxSize?: number;
}

interface Member {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

const DEFAULT_MAX_SIZE = 64;

/** `transactions` are the connection's (transactions.ts), so that its write priority covers the group's. */
export function createCommitGroup(sqlite: Sqlite.Database, transactions: Transactions, options: CommitGroupOptions = {}): CommitGroup {
  const { maxSize = DEFAULT_MAX_SIZE } = options;
  /** The flush runs on setImmediate: after the poll phase has handed this turn's requests over. */
  const schedule = () => void setImmediate(flush);
  const waiting: Member[] = [];
  let flushing = false;

  /**
   * Runs waiting members in one IMMEDIATE transaction until none is left or maxSize ran, members
   * that join meanwhile included (a robot's finished job asks for the next claim). The first member
   * needs no savepoint: when it throws, the transaction holds its work only, and is rolled back
   * whole, before any other member was taken from `waiting` (those run in the next transaction).
   * A savepoint copies every page its work changes into the statement journal, so the first
   * member's is the dearest: a finished job's, in the worker's flushes. Stops at an error that
   * ended the transaction itself (SQLite rolls back on a full disk, say).
   */
  function commit(taken: Member[]): Settled[] {
    const outcomes: Settled[] = [];
    const inSavepoint = (member: Member): Settled => {
      try {
        // Inside the group's open transaction, a transaction is a savepoint.
        return { ok: true, value: transactions.transaction(member.work) };
      } catch (error) {
        if (!sqlite.inTransaction) throw error;
        return { ok: false, error };
      }
    };
    transactions.immediateTransaction(() => {
      for (let member = waiting.shift(); member; member = taken.length < maxSize ? waiting.shift() : undefined) {
        taken.push(member);
        outcomes.push(taken.length === 1 ? { ok: true, value: member.work() } : inSavepoint(member));
      }
    });
    return outcomes;
  }

  function flush(): void {
    const taken: Member[] = [];
    let outcomes: Settled[];
    flushing = true;
    try {
      outcomes = commit(taken);
    } catch (error) {
      // When BEGIN itself failed (another process held the file past the busy timeout), nothing
      // ran: the members this flush would have taken hear why, as with a transaction each. When
      // the first member threw, the transaction held its work alone: it hears its own error.
      if (taken.length === 0) taken.push(...waiting.splice(0, maxSize));
      outcomes = taken.map(() => ({ ok: false, error }));
    } finally {
      flushing = false;
    }
    if (waiting.length > 0) schedule();
    taken.forEach((member, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) member.resolve(outcome.value);
      else member.reject(outcome?.error);
    });
  }

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (waiting.length === 1 && !flushing) schedule();
      });
    },
  };
}
