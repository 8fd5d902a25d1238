import type { Database } from './open.js';

/**
 * Runs `work` all or nothing: inside the caller's transaction when one is open (its COMMIT or
 * ROLLBACK covers this work too), else in an IMMEDIATE transaction of its own. A transaction would
 * nest a savepoint instead (a SAVEPOINT and a RELEASE run). A caller inside a transaction that goes
 * on after catching an error from `work` must catch it at a savepoint of its own, as the commit
 * group's members are (db/commit-group.ts); none of the callers catches it otherwise.
 */
export function atomically<T>(db: Pick<Database, 'sqlite' | 'immediateTransaction'>, work: () => T): T {
  return db.sqlite.inTransaction ? work() : db.immediateTransaction(work);
}
