import { sqliteTable, text, integer, primaryKey, index } from 'drizzle-orm/sqlite-core';

/** One row per (cabinet, endpoint, Idempotency-Key): in progress, then the stored 2xx response. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    cabinetId: text('cabinet_id').notNull(),
    /** METHOD + route pattern, e.g. "POST /api/v1/public/opportunities". */
    endpoint: text('endpoint').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_progress', 'done'] }).notNull(),
    statusCode: integer('status_code'),
    responseBody: text('response_body'),
    /** JSON of the response headers worth replaying (Content-Type, Location). */
    responseHeaders: text('response_headers'),
    lockedAt: integer('locked_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.endpoint, t.key] }), index('idempotency_expires_idx').on(t.expiresAt)],
);
