import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

/**
 * The audit log: append-only (no code path updates a row but the one-time sealing of rows written
 * before the chain), per cabinet, kept one year. It never holds a secret: details name things (a key
 * id, a URL's host), never their values. Each row is sealed in a chain (see service.ts).
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
    /**
     * HMAC-SHA-256 (hex), under a key derived from the server secret, of the previous row's chain
     * and this row's fields: a row changed, removed or inserted out of turn breaks every chain after it.
     */
    chain: text('chain').notNull().default(''),
  },
  (t) => [index('audit_events_cabinet_at_idx').on(t.cabinetId, t.at), index('audit_events_at_idx').on(t.at)],
);

/**
 * Where the chain starts: the chain of the last row removed by the retention purge (or '' before
 * any purge), so that removing old rows any other way is seen by `courtier audit verify`. The row
 * exists from the moment the log is chained (rows written before are sealed then, once); it is
 * sealed itself, so that it cannot be moved to hide rows removed from the start.
 */
export const auditChainStart = sqliteTable('audit_chain_start', {
  id: integer('id').primaryKey(),
  chain: text('chain').notNull(),
  /** When the purge that set it ran, and how many rows it removed in all. */
  purgedAt: integer('purged_at'),
  purged: integer('purged').notNull().default(0),
  seal: text('seal').notNull(),
});
