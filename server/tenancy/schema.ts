import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { USER_ROLES } from '../../shared/tenancy.js';

export const cabinets = sqliteTable('cabinets', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Off by default: personal data in webhook payloads and MCP results is masked. */
  llmDataSharing: integer('llm_data_sharing', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at').notNull(),
});

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    /** Stored lower-cased; unique across the install so that sign-in needs only the email. */
    email: text('email').notNull().unique(),
    /** scrypt$N$r$p$salt$hash, never the password. */
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: USER_ROLES }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('users_cabinet_idx').on(t.cabinetId)],
);
