import type Sqlite from 'better-sqlite3';

/**
 * Group commit. A commit writes every page it dirtied to the WAL, two write() calls each: a create
 * through the API dirties 12 pages, and its commit was a quarter of its CPU. Creates that arrive
 * together touch mostly the same pages (the tables' last pages, the time-ordered indexes, the
 * sequence), so the API's idempotent writes of one turn of the event loop share one transaction:
 * each runs in a savepoint of its own (what it wrote is undone alone when it throws), and every
 * caller hears its result once the shared COMMIT has succeeded, never before. A response still
 * leaves only after what it describes is durable, as with a transaction per request.
 */
export interface CommitGroup {
  /**
   * Runs synchronous `work` in the transaction shared by this turn's work, on a later tick; resolves
   * with what it returned after COMMIT, or rejects with what it threw (its writes undone) or with
   * the error that failed the whole transaction (nothing of the group written).
   */
  run<T>(work: () => T): Promise<T>;
}

export interface CommitGroupOptions {
  /** Work of one turn beyond this waits for the next transaction: a bound on the time the write lock is held. */
  maxSize?: number;
  /** Runs the flush after the work of this turn has joined; setImmediate (after the poll phase's requests) by default. */
  schedule?: (flush: () => void) => void;
}

interface Member {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

const DEFAULT_MAX_SIZE = 64;

export function createCommitGroup(sqlite: Sqlite.Database, options: CommitGroupOptions = {}): CommitGroup {
  const { maxSize = DEFAULT_MAX_SIZE, schedule = (flush) => void setImmediate(flush) } = options;
  const waiting: Member[] = [];

  /** Each member in its savepoint; stops at an error that ended the transaction itself (SQLite rolls back on a full disk, say). */
  function runInSavepoints(members: readonly Member[]): Settled[] {
    const savepoint = sqlite.transaction((member: Member) => member.work());
    return members.map((member): Settled => {
      try {
        return { ok: true, value: savepoint(member) };
      } catch (error) {
        if (!sqlite.inTransaction) throw error;
        return { ok: false, error };
      }
    });
  }

  /** Transaction functions are made per flush, not once: write-priority.ts may wrap the connection's later. */
  function commit(members: readonly Member[]): Settled[] {
    try {
      // Alone, a member needs no savepoint: the transaction is its own (and costs no more statements than before).
      if (members.length === 1 && members[0]) return [{ ok: true, value: sqlite.transaction(members[0].work).immediate() }];
      return sqlite.transaction(runInSavepoints).immediate(members);
    } catch (error) {
      return members.map(() => ({ ok: false, error }));
    }
  }

  function flush(): void {
    const members = waiting.splice(0, maxSize);
    if (waiting.length > 0) schedule(flush);
    commit(members).forEach((outcome, i) => {
      const member = members[i];
      if (!member) return;
      if (outcome.ok) member.resolve(outcome.value);
      else member.reject(outcome.error);
    });
  }

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (waiting.length === 1) schedule(flush);
      });
    },
  };
}
