import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { cabinets, users } from '../tenancy/schema.js';

/** Console sign-ins. The cookie carries a random token; only its SHA-256 is kept. */
export const consoleSessions = sqliteTable(
  'console_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('console_sessions_user_idx').on(t.userId)],
);
