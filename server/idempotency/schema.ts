import { sqliteTable, text, integer, primaryKey, index } from 'drizzle-orm/sqlite-core';

/**
 * One row per (cabinet, caller, endpoint, Idempotency-Key). A synchronous endpoint writes its row
 * already done, in the transaction that creates the resource; an asynchronous one (a webhook test)
 * claims it in_progress first, then stores its response.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    cabinetId: text('cabinet_id').notNull(),
    /** Who sent it: `key:<api key id>` (or `grant:<oauth grant id>`); one caller's key never replays to another. */
    caller: text('caller').notNull(),
    /** METHOD + route pattern, e.g. "POST /api/v1/public/opportunities". */
    endpoint: text('endpoint').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['in_progress', 'done'] }).notNull(),
    statusCode: integer('status_code'),
    /** The response as replayed: secrets shown once are not in it. */
    responseBody: text('response_body'),
    /** JSON of the response headers worth replaying (Content-Type, Location). */
    responseHeaders: text('response_headers'),
    /** The server instance running an in_progress request (random per start). */
    owner: text('owner'),
    /** Renewed while an in_progress request runs: a claim left alone longer than the lock belongs to a dead process. */
    lockedAt: integer('locked_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cabinetId, t.caller, t.endpoint, t.key] }), index('idempotency_expires_idx').on(t.expiresAt)],
);
