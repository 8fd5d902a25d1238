import { and, eq, gt } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { tableSql } from '../platform/db/table-sql.js';
import { automationSettings, insurerBreakers, insurerLoginChecks, insurerLoginTests, robotPauses } from './schema.js';

/**
 * The rows that hold robots back, beside the jobs' (store.ts): the insurers' circuit breakers, the
 * install-wide switch (a setting), the cabinets' pauses, and the console's login checks with their
 * last results. guards.ts and login-check.ts read and write them; the claim's query reads the
 * pauses and the checks in SQL.
 */

export type BreakerRow = typeof insurerBreakers.$inferSelect;
export type RobotPauseRow = typeof robotPauses.$inferSelect;
export type LoginTestRow = typeof insurerLoginTests.$inferSelect;

/** Read by every enqueue (the breaker, the pause): prepared once (table-sql.ts). */
const BREAKER = tableSql(insurerBreakers);
const ROBOT_PAUSE = tableSql(robotPauses);

export function findBreaker(orm: Orm, compagnie: string): BreakerRow | undefined {
  return BREAKER.get(orm, 'WHERE compagnie = ?', compagnie);
}

export function saveBreaker(orm: Orm, row: BreakerRow): void {
  orm
    .prepared(
      'INSERT INTO insurer_breakers (compagnie, consecutive_failures, open_until, trial_job_id) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (compagnie) DO UPDATE SET consecutive_failures = excluded.consecutive_failures, open_until = excluded.open_until, trial_job_id = excluded.trial_job_id',
    )
    .run(row.compagnie, row.consecutiveFailures, row.openUntil, row.trialJobId);
}

/**
 * Closes an insurer's breaker, in one statement that writes nothing when it is closed already:
 * every successful job closes it, in its transaction.
 */
export function closeBreaker(orm: Orm, compagnie: string): void {
  orm
    .prepared(
      'INSERT INTO insurer_breakers (compagnie, consecutive_failures, open_until, trial_job_id) VALUES (?, 0, NULL, NULL) ' +
        'ON CONFLICT (compagnie) DO UPDATE SET consecutive_failures = 0, open_until = NULL, trial_job_id = NULL ' +
        'WHERE consecutive_failures <> 0 OR open_until IS NOT NULL OR trial_job_id IS NOT NULL',
    )
    .run(compagnie);
}

export function listBreakers(orm: Orm): BreakerRow[] {
  return orm.select().from(insurerBreakers).all();
}

export function readSetting(orm: Orm, key: string): string | undefined {
  return orm.prepared('SELECT value FROM automation_settings WHERE key = ?').pluck(true).get(key) as string | undefined;
}

export function writeSetting(orm: Orm, key: string, value: string | null, now: number): void {
  if (value === null) {
    orm.delete(automationSettings).where(eq(automationSettings.key, key)).run();
    return;
  }
  orm
    .insert(automationSettings)
    .values({ key, value, updatedAt: now })
    .onConflictDoUpdate({ target: automationSettings.key, set: { value, updatedAt: now } })
    .run();
}

export function findRobotPause(orm: Orm, cabinetId: string): RobotPauseRow | undefined {
  return ROBOT_PAUSE.get(orm, 'WHERE cabinet_id = ?', cabinetId);
}

export function saveRobotPause(orm: Orm, row: RobotPauseRow): void {
  orm
    .insert(robotPauses)
    .values(row)
    .onConflictDoUpdate({ target: robotPauses.cabinetId, set: { reason: row.reason, pausedBy: row.pausedBy, createdAt: row.createdAt } })
    .run();
}

export function deleteRobotPause(orm: Orm, cabinetId: string): void {
  orm.delete(robotPauses).where(eq(robotPauses.cabinetId, cabinetId)).run();
}

/** Whether a login check holds this insurer login now. */
export function loginCheckRunning(orm: Orm, cabinetId: string, robotCompagnie: string, now: number): boolean {
  return (
    orm
      .select({ id: insurerLoginChecks.checkId })
      .from(insurerLoginChecks)
      .where(
        and(
          eq(insurerLoginChecks.cabinetId, cabinetId),
          eq(insurerLoginChecks.robotCompagnie, robotCompagnie),
          gt(insurerLoginChecks.leaseUntil, now),
        ),
      )
      .get() !== undefined
  );
}

/** Takes the login for a check (replacing an expired one of a crashed process). */
export function startLoginCheck(orm: Orm, row: typeof insurerLoginChecks.$inferInsert): void {
  orm
    .insert(insurerLoginChecks)
    .values(row)
    .onConflictDoUpdate({
      target: [insurerLoginChecks.cabinetId, insurerLoginChecks.robotCompagnie],
      set: { checkId: row.checkId, leaseUntil: row.leaseUntil },
    })
    .run();
}

export function renewLoginCheck(orm: Orm, checkId: string, leaseUntil: number): void {
  orm.update(insurerLoginChecks).set({ leaseUntil }).where(eq(insurerLoginChecks.checkId, checkId)).run();
}

export function endLoginCheck(orm: Orm, checkId: string): void {
  orm.delete(insurerLoginChecks).where(eq(insurerLoginChecks.checkId, checkId)).run();
}

export function saveLoginTest(orm: Orm, row: LoginTestRow): void {
  const { cabinetId: _, compagnie: __, ...rest } = row;
  orm
    .insert(insurerLoginTests)
    .values(row)
    .onConflictDoUpdate({ target: [insurerLoginTests.cabinetId, insurerLoginTests.compagnie], set: rest })
    .run();
}

export function lastLoginTests(orm: Orm, cabinetId: string): LoginTestRow[] {
  return orm.select().from(insurerLoginTests).where(eq(insurerLoginTests.cabinetId, cabinetId)).all();
}

/** Forgotten with the credentials they tested. */
export function forgetLoginTest(orm: Orm, cabinetId: string, compagnie: string): void {
  orm
    .delete(insurerLoginTests)
    .where(and(eq(insurerLoginTests.cabinetId, cabinetId), eq(insurerLoginTests.compagnie, compagnie)))
    .run();
}
