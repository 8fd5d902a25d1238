import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { UNATTENDED_HUMAN_STEPS, USER_ROLES } from '../../shared/tenancy.js';

export const cabinets = sqliteTable('cabinets', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Off by default: personal data in webhook payloads and MCP results is masked. */
  llmDataSharing: integer('llm_data_sharing', { mode: 'boolean' }).notNull().default(false),
  /**
   * A job an integration enqueued (an API key, at any hour) whose portal needs a person: wait for
   * one as any job does, or stop before the portal sends a code (this install's robots).
   */
  unattendedHumanSteps: text('unattended_human_steps', { enum: UNATTENDED_HUMAN_STEPS }).notNull().default('wait'),
  /** Its ORIAS registration number and postal address, printed on the documents it gives clients (advice). */
  orias: text('orias'),
  address: text('address'),
  createdAt: integer('created_at').notNull(),
});

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    /**
     * Stored lower-cased; unique within a cabinet only, so that a cabinet never learns that an
     * address has an account elsewhere. Sign-in finds every account with the email.
     */
    email: text('email').notNull(),
    /**
     * scrypt$N$r$p$salt$hash, never the password; this install's own (passwords never sync). Null: no
     * password on this computer yet (an account added on another install of the cabinet, or removed).
     */
    passwordHash: text('password_hash'),
    role: text('role', { enum: USER_ROLES }).notNull(),
    createdAt: integer('created_at').notNull(),
    /** Set by an administrator: the account cannot sign in, and every session of it is refused. */
    disabledAt: integer('disabled_at'),
    /** Its password was reset to a temporary one: the person chooses a new one before anything else. */
    mustChangePassword: integer('must_change_password', { mode: 'boolean' }).notNull().default(false),
    /** Removed from the cabinet: kept as a tombstone (the staff list syncs), its password and access gone. */
    removedAt: integer('removed_at'),
    /**
     * The role still in effect here while a promotion made on another install waits for an
     * administrator of this one (server/tenancy/sync.ts); null when `role` is in effect.
     */
    heldRole: text('held_role', { enum: USER_ROLES }),
    /** The account stays disabled here, since then, while its enabling on another install waits for an administrator of this one. */
    heldDisabledAt: integer('held_disabled_at'),
  },
  // The unique index also serves lookups by cabinet (its first column).
  (t) => [uniqueIndex('users_cabinet_email_unique').on(t.cabinetId, t.email), index('users_email_idx').on(t.email)],
);
