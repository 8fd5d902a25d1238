import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { UnattendedHumanSteps } from '../../shared/tenancy.js';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { cabinets, users } from './schema.js';

export type CabinetRow = typeof cabinets.$inferSelect;
export type UserRow = typeof users.$inferSelect;

/** The role in effect on this install: a promotion made on another waits for an administrator of this one. */
export const roleInEffect = (row: UserRow): UserRow['role'] => row.heldRole ?? row.role;

/** Since when the account is disabled on this install, or null: an enabling made on another waits for an administrator of this one. */
export const disabledInEffect = (row: UserRow): number | null => row.disabledAt ?? row.heldDisabledAt;

/** Whether the account acts as an administrator on this install. */
export const actsAsAdmin = (row: UserRow): boolean =>
  row.removedAt === null && roleInEffect(row) === 'admin' && disabledInEffect(row) === null;

export function insertCabinet(orm: Orm, row: CabinetRow): void {
  orm.insert(cabinets).values(row).run();
}

/** The row as inserted: an account is active and keeps its password unless said otherwise. */
export function insertUser(orm: Orm, row: typeof users.$inferInsert): void {
  orm.insert(users).values(row).run();
}

/** The whole row, for the modules that check a cabinet exists or show its name: prepared once (prepared-query.ts). */
const CABINET = preparedQuery((orm) =>
  orm
    .select()
    .from(cabinets)
    .where(eq(cabinets.id, sql.placeholder('cabinetId'))),
);

export function findCabinet(orm: Orm, cabinetId: string): CabinetRow | undefined {
  return CABINET(orm).get({ cabinetId });
}

/** Read on every MCP tool call and every webhook delivery: one column, not the row. */
const LLM_DATA_SHARING = preparedQuery((orm) =>
  orm
    .select({ llmDataSharing: cabinets.llmDataSharing })
    .from(cabinets)
    .where(eq(cabinets.id, sql.placeholder('cabinetId'))),
);

/** The cabinet's data-sharing switch, undefined when there is no such cabinet; the column reads on only when it holds 1. */
export function findLlmDataSharing(orm: Orm, cabinetId: string): boolean | undefined {
  return LLM_DATA_SHARING(orm).get({ cabinetId })?.llmDataSharing;
}

export function listCabinets(orm: Orm): CabinetRow[] {
  return orm.select().from(cabinets).orderBy(cabinets.createdAt).all();
}

/** Every account with this email, one per cabinet at most. */
export function findUsersByEmail(orm: Orm, email: string): UserRow[] {
  return orm.select().from(users).where(eq(users.email, email)).all();
}

export function findUserInCabinetByEmail(orm: Orm, cabinetId: string, email: string): UserRow | undefined {
  return orm
    .select()
    .from(users)
    .where(and(eq(users.cabinetId, cabinetId), eq(users.email, email)))
    .get();
}

export function findUnattendedHumanSteps(orm: Orm, cabinetId: string): UnattendedHumanSteps | undefined {
  return orm.select({ value: cabinets.unattendedHumanSteps }).from(cabinets).where(eq(cabinets.id, cabinetId)).get()?.value;
}

export function setUnattendedHumanSteps(orm: Orm, cabinetId: string, value: UnattendedHumanSteps): boolean {
  return orm.update(cabinets).set({ unattendedHumanSteps: value }).where(eq(cabinets.id, cabinetId)).run().changes > 0;
}

export function setLlmDataSharing(orm: Orm, cabinetId: string, enabled: boolean): boolean {
  return orm.update(cabinets).set({ llmDataSharing: enabled }).where(eq(cabinets.id, cabinetId)).run().changes > 0;
}

export function findUser(orm: Orm, userId: string): UserRow | undefined {
  return orm.select().from(users).where(eq(users.id, userId)).get();
}

export function countCabinets(orm: Orm): number {
  return orm.select({ n: count() }).from(cabinets).get()?.n ?? 0;
}

export function listUsers(orm: Orm, cabinetId: string): UserRow[] {
  return orm.select().from(users).where(eq(users.cabinetId, cabinetId)).orderBy(asc(users.createdAt), asc(users.email)).all();
}

export function findUserInCabinet(orm: Orm, cabinetId: string, userId: string): UserRow | undefined {
  return orm
    .select()
    .from(users)
    .where(and(eq(users.cabinetId, cabinetId), eq(users.id, userId)))
    .get();
}

/**
 * Administrators who can act here: neither disabled (nor held disabled), removed, nor holding a
 * promotion an administrator of this install has not confirmed.
 */
export function countActiveAdmins(orm: Orm, cabinetId: string): number {
  return (
    orm
      .select({ n: count() })
      .from(users)
      .where(
        and(
          eq(users.cabinetId, cabinetId),
          eq(users.role, 'admin'),
          isNull(users.heldRole),
          isNull(users.disabledAt),
          isNull(users.heldDisabledAt),
          isNull(users.removedAt),
        ),
      )
      .get()?.n ?? 0
  );
}

/** Writes some columns of an account (the staff list's own changes and the ones pulled from other installs). */
export function updateUser(
  orm: Orm,
  cabinetId: string,
  userId: string,
  changes: Partial<Omit<UserRow, 'id' | 'cabinetId' | 'email'>>,
): boolean {
  return (
    orm
      .update(users)
      .set(changes)
      .where(and(eq(users.cabinetId, cabinetId), eq(users.id, userId)))
      .run().changes > 0
  );
}

export function setUserPassword(orm: Orm, cabinetId: string, userId: string, passwordHash: string, mustChangePassword: boolean): boolean {
  return updateUser(orm, cabinetId, userId, { passwordHash, mustChangePassword });
}

export function findIdentity(orm: Orm, cabinetId: string): { orias: string | null; address: string | null } | undefined {
  return orm.select({ orias: cabinets.orias, address: cabinets.address }).from(cabinets).where(eq(cabinets.id, cabinetId)).get();
}

export function setIdentity(orm: Orm, cabinetId: string, identity: { orias?: string | null; address?: string | null }): boolean {
  return orm.update(cabinets).set(identity).where(eq(cabinets.id, cabinetId)).run().changes > 0;
}
