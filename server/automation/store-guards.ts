import { and, eq, gt, isNotNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Orm } from '../platform/db/open.js';
import { placeholdersFor, preparedQuery } from '../platform/db/prepared-query.js';
import { automationSettings, insurerBreakers, insurerLoginChecks, insurerLoginTests, robotPauses } from './schema.js';

/**
 * The rows that hold robots back, beside the jobs' (store.ts and its parts): the insurers' circuit
 * breakers, the install-wide switch (a setting), the cabinets' pauses, and the console's login
 * checks with their last results. guards.ts and login-check.ts read and write them; the claim's
 * query (store-queue.ts) reads the pauses and the checks in SQL.
 */

export type BreakerRow = typeof insurerBreakers.$inferSelect;
export type RobotPauseRow = typeof robotPauses.$inferSelect;
export type LoginTestRow = typeof insurerLoginTests.$inferSelect;

const P = sql.placeholder;

/** Read and written by every enqueue and every job's end (the breaker, the pause, the setting): prepared once (prepared-query.ts). */
const FIND_BREAKER = preparedQuery((orm) =>
  orm
    .select()
    .from(insurerBreakers)
    .where(eq(insurerBreakers.compagnie, P('compagnie'))),
);

export function findBreaker(orm: Orm, compagnie: string): BreakerRow | undefined {
  return FIND_BREAKER(orm).get({ compagnie });
}

/** The value the upsert's row would have inserted, in its DO UPDATE. */
function excluded(column: AnySQLiteColumn): SQL {
  return sql`excluded.${sql.identifier(column.name)}`;
}

const SAVE_BREAKER = preparedQuery((orm) =>
  orm
    .insert(insurerBreakers)
    .values(placeholdersFor(insurerBreakers))
    .onConflictDoUpdate({
      target: insurerBreakers.compagnie,
      set: {
        consecutiveFailures: excluded(insurerBreakers.consecutiveFailures),
        openUntil: excluded(insurerBreakers.openUntil),
        trialJobId: excluded(insurerBreakers.trialJobId),
      },
    }),
);

export function saveBreaker(orm: Orm, row: BreakerRow): void {
  SAVE_BREAKER(orm).run(row);
}

const CLOSED = { consecutiveFailures: 0, openUntil: null, trialJobId: null };

const CLOSE_BREAKER = preparedQuery((orm) =>
  orm
    .insert(insurerBreakers)
    .values({ compagnie: P('compagnie'), ...CLOSED })
    .onConflictDoUpdate({
      target: insurerBreakers.compagnie,
      set: CLOSED,
      setWhere: or(ne(insurerBreakers.consecutiveFailures, 0), isNotNull(insurerBreakers.openUntil), isNotNull(insurerBreakers.trialJobId)),
    }),
);

/**
 * Closes an insurer's breaker, in one statement that writes nothing when it is closed already:
 * every successful job closes it, in its transaction.
 */
export function closeBreaker(orm: Orm, compagnie: string): void {
  CLOSE_BREAKER(orm).run({ compagnie });
}

export function listBreakers(orm: Orm): BreakerRow[] {
  return orm.select().from(insurerBreakers).all();
}

const READ_SETTING = preparedQuery((orm) =>
  orm
    .select({ value: automationSettings.value })
    .from(automationSettings)
    .where(eq(automationSettings.key, P('key'))),
);

export function readSetting(orm: Orm, key: string): string | undefined {
  return READ_SETTING(orm).get({ key })?.value;
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

const FIND_ROBOT_PAUSE = preparedQuery((orm) =>
  orm
    .select()
    .from(robotPauses)
    .where(eq(robotPauses.cabinetId, P('cabinetId'))),
);

export function findRobotPause(orm: Orm, cabinetId: string): RobotPauseRow | undefined {
  return FIND_ROBOT_PAUSE(orm).get({ cabinetId });
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
