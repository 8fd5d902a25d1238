import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { apiKeys } from './schema.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export function insertKey(orm: Orm, row: ApiKeyRow): void {
  orm.insert(apiKeys).values(row).run();
}

/** The hot path of every request: a prepared statement, looked up by the unique hash index. */
export function prepareFindByHash(orm: Orm) {
  const statement = orm
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
    .prepare();
  return (hash: string): ApiKeyRow | undefined => statement.get({ hash });
}

export function listKeys(orm: Orm, cabinetId: string): ApiKeyRow[] {
  return orm.select().from(apiKeys).where(eq(apiKeys.cabinetId, cabinetId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)).all();
}

export function findKey(orm: Orm, cabinetId: string, keyId: string): ApiKeyRow | undefined {
  return orm.select().from(apiKeys).where(and(eq(apiKeys.cabinetId, cabinetId), eq(apiKeys.id, keyId))).get();
}

/** Operator lookup for `courtier keys revoke --key-id`, which is not told the cabinet. */
export function findKeyCabinet(orm: Orm, keyId: string): string | undefined {
  return orm.select({ cabinetId: apiKeys.cabinetId }).from(apiKeys).where(eq(apiKeys.id, keyId)).get()?.cabinetId;
}

export function revokeKey(orm: Orm, cabinetId: string, keyId: string, at: number): boolean {
  const result = orm
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.cabinetId, cabinetId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .run();
  return result.changes > 0;
}

export function touchLastUsed(orm: Orm, cabinetId: string, keyId: string, at: number): void {
  orm.update(apiKeys).set({ lastUsedAt: at }).where(and(eq(apiKeys.cabinetId, cabinetId), eq(apiKeys.id, keyId))).run();
}
