import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { DELIVERY_STATUSES } from '../../shared/webhooks.js';
import { cabinets } from '../tenancy/schema.js';

export const webhookSubscriptions = sqliteTable(
  'webhook_subscriptions',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    url: text('url').notNull(),
    /** JSON array of event types, or ["*"]. */
    events: text('events').notNull(),
    description: text('description'),
    active: integer('active', { mode: 'boolean' }).notNull(),
    /** AES-256-GCM of the whsec_ secret; never stored in clear. */
    secretEnc: text('secret_enc').notNull(),
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: integer('previous_secret_expires_at'),
    failingSince: integer('failing_since'),
    disabledReason: text('disabled_reason'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhook_subscriptions_page_idx').on(t.cabinetId, t.createdAt, t.id)],
);

/** One delivery per (subscription, event); retries are attempts of the same delivery. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    cabinetId: text('cabinet_id').notNull(),
    subscriptionId: text('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer('attempt_count').notNull(),
    /** Test deliveries get one attempt; others the whole retry schedule. */
    maxAttempts: integer('max_attempts').notNull(),
    nextAttemptAt: integer('next_attempt_at'),
    leaseUntil: integer('lease_until'),
    replayOf: text('replay_of'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_page_idx').on(t.subscriptionId, t.createdAt, t.id),
    index('webhook_deliveries_created_idx').on(t.createdAt),
    // The fan-out and a job callback may both target one subscription: one delivery, not two.
    uniqueIndex('webhook_deliveries_once_idx')
      .on(t.subscriptionId, t.eventId)
      .where(sql`replay_of IS NULL`),
  ],
);

export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attemptedAt: integer('attempted_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    httpStatus: integer('http_status'),
    error: text('error'),
    responseBody: text('response_body'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId)],
);

/** How far the fan-out has read the events outbox (a single row). */
export const webhookFanout = sqliteTable('webhook_fanout', {
  id: integer('id').primaryKey(),
  lastSeq: integer('last_seq').notNull(),
});
