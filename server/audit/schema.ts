import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

/**
 * The audit log: append-only (no code path updates a row), per cabinet, kept one year. It never
 * holds a secret: details name things (a key id, a URL's host), never their values.
 */
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: text('id').primaryKey(),
    /** Null for install-wide actions (LAN mode, certificates), shown to every cabinet's admins. */
    cabinetId: text('cabinet_id'),
    at: integer('at').notNull(),
    action: text('action').notNull(),
    result: text('result', { enum: ['success', 'failure'] }).notNull(),
    actorKind: text('actor_kind', { enum: ['user', 'api_key', 'oauth_client', 'cli', 'system', 'anonymous'] }).notNull(),
    actorId: text('actor_id'),
    /** What a person reads: an email, a key's name, a client's name. */
    actorLabel: text('actor_label'),
    address: text('address'),
    listener: text('listener', { enum: ['loopback', 'lan', 'cli', 'internal'] }).notNull(),
    target: text('target'),
    /** JSON object of non-secret facts. */
    details: text('details').notNull(),
  },
  (t) => [index('audit_events_cabinet_at_idx').on(t.cabinetId, t.at), index('audit_events_at_idx').on(t.at)],
);
