import type Sqlite from 'better-sqlite3';
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { apiKeys } from './schema.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export function insertKey(orm: Orm, row: ApiKeyRow): void {
  orm.insert(apiKeys).values(row).run();
}

/**
 * The hot path of every request: one raw prepared statement on the unique hash index (drizzle's
 * query wrapper costs more than the lookup itself at this rate), mapped to the row type here.
 */
export function prepareFindByHash(sqlite: Sqlite.Database) {
  const statement = sqlite.prepare(
    `SELECT id, cabinet_id, name, environment, scopes, key_hash, key_prefix, ip_allowlist, expires_at, created_at, revoked_at, last_used_at
     FROM api_keys WHERE key_hash = ?`,
  );
  return (hash: string): ApiKeyRow | undefined => {
    const r = statement.get(hash) as Record<string, unknown> | undefined;
    if (!r) return undefined;
    return {
      id: r.id as string,
      cabinetId: r.cabinet_id as string,
      name: r.name as string,
      environment: r.environment as ApiKeyRow['environment'],
      scopes: r.scopes as string,
      keyHash: r.key_hash as string,
      keyPrefix: r.key_prefix as string,
      ipAllowlist: r.ip_allowlist as string | null,
      expiresAt: r.expires_at as number | null,
      createdAt: r.created_at as number,
      revokedAt: r.revoked_at as number | null,
      lastUsedAt: r.last_used_at as number | null,
    };
  };
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
