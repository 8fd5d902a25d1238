import type Sqlite from 'better-sqlite3';

/**
 * Runs `work` all or nothing: inside the caller's transaction when one is open (its COMMIT or
 * ROLLBACK covers this work too), else in an IMMEDIATE transaction of its own. better-sqlite3 would
 * nest a savepoint instead (a SAVEPOINT and a RELEASE run), and build a new transaction function on
 * every call: building them was 6% of a drained job's CPU. A caller inside a transaction that goes on
 * after catching an error from `work` must catch it at a savepoint of its own, as the commit
 * group's members are (db/commit-group.ts); none of the callers catches it otherwise.
 */
export function atomically<T>(sqlite: Sqlite.Database, work: () => T): T {
  return sqlite.inTransaction ? work() : sqlite.transaction(work).immediate();
}
