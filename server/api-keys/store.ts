import type Sqlite from 'better-sqlite3';
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { apiKeys } from './schema.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export function insertKey(orm: Orm, row: ApiKeyRow): void {
  orm.insert(apiKeys).values(row).run();
}

/**
 * What the key check reads of a key on its first use: what never changes in its row after its
 * creation (nothing updates these columns: a key is revoked, never edited), which the check keeps,
 * with its revocation and last use as they are then. Later requests read the revocation only.
 */
export type KeyIdentityRow = Pick<
  ApiKeyRow,
  'id' | 'cabinetId' | 'environment' | 'scopes' | 'ipAllowlist' | 'expiresAt' | 'revokedAt' | 'lastUsedAt'
>;

/**
 * The hot path of every request: raw prepared statements on the unique hash index (drizzle's
 * query wrapper costs more than the lookup itself at this rate). The driver builds a row through
 * V8's API one value at a time, strings copied from UTF-8 (reading every column would cost most of
 * the lookup), so a known key's request reads its one changing column only.
 */
export function prepareKeyLookups(sqlite: Sqlite.Database) {
  const identity = sqlite.prepare<[string], KeyIdentityRow>(
    `SELECT id, cabinet_id AS cabinetId, environment, scopes, ip_allowlist AS ipAllowlist, expires_at AS expiresAt,
       revoked_at AS revokedAt, last_used_at AS lastUsedAt FROM api_keys WHERE key_hash = ?`,
  );
  const revocation = sqlite.prepare(`SELECT revoked_at FROM api_keys WHERE key_hash = ?`).pluck(true);
  return {
    /** Read on a key's first use only (the caller keeps what never changes). */
    findByHash: (hash: string): KeyIdentityRow | undefined => identity.get(hash),
    /** When the key was revoked: null if it is not, undefined if no key has this hash (any more). */
    revokedAtByHash(hash: string): number | null | undefined {
      return revocation.get(hash) as number | null | undefined;
    },
  };
}

export function listKeys(orm: Orm, cabinetId: string): ApiKeyRow[] {
  return orm.select().from(apiKeys).where(eq(apiKeys.cabinetId, cabinetId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)).all();
}

export function findKey(orm: Orm, cabinetId: string, keyId: string): ApiKeyRow | undefined {
  return orm
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.cabinetId, cabinetId), eq(apiKeys.id, keyId)))
    .get();
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
  orm
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.cabinetId, cabinetId), eq(apiKeys.id, keyId)))
    .run();
}
