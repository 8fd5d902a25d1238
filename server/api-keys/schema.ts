import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import { cabinets } from '../tenancy/schema.js';

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    name: text('name').notNull(),
    environment: text('environment', { enum: API_KEY_ENVIRONMENTS }).notNull(),
    /** JSON array of scopes. */
    scopes: text('scopes').notNull(),
    /** SHA-256 of the whole key, hex: the only trace of the value. */
    keyHash: text('key_hash').notNull().unique(),
    keyPrefix: text('key_prefix').notNull(),
    /** JSON array of addresses and CIDR blocks, or null for any address. */
    ipAllowlist: text('ip_allowlist'),
    expiresAt: integer('expires_at'),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [index('api_keys_cabinet_created_idx').on(t.cabinetId, t.createdAt)],
);
