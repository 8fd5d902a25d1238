import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
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

const KEY_IDENTITY = preparedQuery((orm) =>
  orm
    .select({
      id: apiKeys.id,
      cabinetId: apiKeys.cabinetId,
      environment: apiKeys.environment,
      scopes: apiKeys.scopes,
      ipAllowlist: apiKeys.ipAllowlist,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder('keyHash'))),
);

const KEY_REVOCATION = preparedQuery((orm) =>
  orm
    .select({ revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder('keyHash'))),
);

/**
 * The hot path of every request: statements prepared once (prepared-query.ts) on the unique hash
 * index. The driver copies each string it reads (reading every column would cost most of the
 * lookup), so a known key's request reads its one changing column only.
 */
export function prepareKeyLookups(orm: Orm) {
  const identity = KEY_IDENTITY(orm);
  const revocation = KEY_REVOCATION(orm);
  return {
    /** Read on a key's first use only (the caller keeps what never changes). */
    findByHash: (keyHash: string): KeyIdentityRow | undefined => identity.get({ keyHash }),
    /** When the key was revoked: null if it is not, undefined if no key has this hash (any more). */
    revokedAtByHash(keyHash: string): number | null | undefined {
      return revocation.get({ keyHash })?.revokedAt;
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
