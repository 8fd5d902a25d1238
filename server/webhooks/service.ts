import { randomUUID } from 'node:crypto';
import type { EventType } from '../../shared/events.js';
import type { Page } from '../../shared/pagination.js';
import {
  SECRET_WARNING,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRET_RANDOM_LENGTH,
  isSubscribable,
  type CreateWebhookInput,
  type Delivery,
  type UpdateWebhookInput,
  type Webhook,
} from '../../shared/webhooks.js';
import { randomBase62 } from '../api-keys/service.js';
import { atomically } from '../platform/db/atomically.js';
import type { Deps } from '../deps.js';
import { toIso, toIsoOrNull } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { newestOutboxSeq, readOutbox, recordEvent } from '../events/service.js';
import { cursorCodec, toPage } from '../platform/http/cursor.js';
import { encryptSecret } from '../secrets/cipher.js';
import * as store from './store.js';

export const DELIVERY_RETENTION_MS = 90 * 24 * 3600 * 1000;

function toWebhook(row: store.SubscriptionRow, now: number): Webhook {
  const rotating = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    active: row.active,
    disabled_reason: row.disabledReason,
    failing_since: toIsoOrNull(row.failingSince),
    secret_rotation_ends_at: rotating ? toIsoOrNull(row.previousSecretExpiresAt) : null,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function notFound(id: string): ApiError {
  return new ApiError('not_found', `No webhook subscription with id ${id} in this cabinet.`);
}

function checkWebhookUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('invalid_webhook_url', `"${raw.slice(0, 100)}" is not an absolute URL; use https://…`);
  }
  if (url.protocol !== 'https:')
    throw new ApiError('invalid_webhook_url', `Webhook URLs must use https, not ${url.protocol.replace(':', '')}.`);
  if (url.username || url.password)
    throw new ApiError('invalid_webhook_url', 'Webhook URLs must not carry credentials; verify the signature instead.');
  return url.toString();
}

function checkEventTypes(events: readonly string[]): string[] {
  if (events.includes('*')) {
    if (events.length > 1) throw new ApiError('unknown_event_type', '"*" must be the only value when used.', { unknown: [] });
    return ['*'];
  }
  const unknown = events.filter((e) => !isSubscribable(e));
  if (unknown.length > 0) {
    throw new ApiError('unknown_event_type', `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, { unknown });
  }
  return [...new Set(events)];
}

/** Whether a subscription's list covers an event type; "*" covers all but webhook.test. */
export function subscribesTo(events: readonly string[], type: string): boolean {
  return events.includes(type) || (events.includes('*') && type !== 'webhook.test');
}

function newSecret(deps: Deps): string {
  return WEBHOOK_SECRET_PREFIX + randomBase62(WEBHOOK_SECRET_RANDOM_LENGTH, deps.randomBytes);
}

export function createWebhook(deps: Deps, cabinetId: string, input: CreateWebhookInput): Webhook & { secret: string; _warning: string } {
  const url = checkWebhookUrl(input.url);
  const events = checkEventTypes(input.events);
  const now = deps.clock.now();
  const secret = newSecret(deps);
  const row: store.SubscriptionRow = {
    id: randomUUID(),
    cabinetId,
    url,
    events: JSON.stringify(events),
    description: input.description ?? null,
    active: true,
    secretEnc: encryptSecret(deps.keys.webhookSecrets, secret),
    previousSecretEnc: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
  };
  atomically(deps.db, () => {
    // While the install has no subscription, events are not fanned out (fanOutEvents): the first
    // one starts from the newest event, and receives only what follows it.
    if (!store.anySubscription(deps.db.orm)) store.setFanoutPosition(deps.db.orm, newestOutboxSeq(deps));
    store.insertSubscription(deps.db.orm, row);
  });
  return { ...toWebhook(row, now), secret, _warning: SECRET_WARNING };
}

export function getWebhook(deps: Deps, cabinetId: string, id: string): Webhook {
  const row = store.findSubscription(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  return toWebhook(row, deps.clock.now());
}

export function listWebhooks(deps: Deps, cabinetId: string, query: { limit: number; cursor?: string }): Page<Webhook> {
  const codec = cursorCodec(deps.keys.cursor, { cabinetId, resource: 'webhooks', filters: {} });
  const rows = store.listSubscriptions(deps.db.orm, cabinetId, codec.after(query.cursor), query.limit + 1);
  const now = deps.clock.now();
  return toPage(rows, query.limit, (row) => toWebhook(row, now), codec.next);
}

export function updateWebhook(deps: Deps, cabinetId: string, id: string, patch: UpdateWebhookInput): Webhook {
  const row = store.findSubscription(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  const changes: Partial<store.SubscriptionRow> = { updatedAt: deps.clock.now() };
  if (patch.url !== undefined) changes.url = checkWebhookUrl(patch.url);
  if (patch.events !== undefined) changes.events = JSON.stringify(checkEventTypes(patch.events));
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.active !== undefined) {
    changes.active = patch.active;
    // Resuming clears what the service said when it deactivated it; failures count afresh.
    if (patch.active) Object.assign(changes, { disabledReason: null, failingSince: null });
  }
  store.updateSubscription(deps.db.orm, cabinetId, id, changes);
  if (patch.active) deps.outbox.notify();
  return toWebhook({ ...row, ...changes }, deps.clock.now());
}

export function deleteWebhook(deps: Deps, cabinetId: string, id: string): void {
  if (!store.deleteSubscription(deps.db.orm, cabinetId, id)) throw notFound(id);
}

/** A new secret now; the previous one keeps signing for overlapSeconds (two v1= entries, new first). */
export function rotateWebhookSecret(deps: Deps, cabinetId: string, id: string, overlapSeconds: number) {
  const row = store.findSubscription(deps.db.orm, cabinetId, id);
  if (!row) throw notFound(id);
  const now = deps.clock.now();
  const secret = newSecret(deps);
  const expiresAt = now + overlapSeconds * 1000;
  store.updateSubscription(deps.db.orm, cabinetId, id, {
    secretEnc: encryptSecret(deps.keys.webhookSecrets, secret),
    previousSecretEnc: overlapSeconds > 0 ? row.secretEnc : null,
    previousSecretExpiresAt: overlapSeconds > 0 ? expiresAt : null,
    updatedAt: now,
  });
  return { id, secret, previous_secret_expires_at: toIso(expiresAt), _warning: SECRET_WARNING };
}

function toDelivery(row: store.DeliveryRow, attempts: store.AttemptRow[]): Delivery {
  return {
    id: row.id,
    delivery_id: row.id,
    webhook_id: row.subscriptionId,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: row.status === 'pending' ? toIsoOrNull(row.nextAttemptAt) : null,
    replay_of: row.replayOf,
    created_at: toIso(row.createdAt),
    attempts: attempts.map((a) => ({
      attempted_at: toIso(a.attemptedAt),
      http_status: a.httpStatus,
      duration_ms: a.durationMs,
      error: a.error,
      response_body: a.responseBody,
    })),
  };
}

export function getDelivery(deps: Deps, cabinetId: string, deliveryId: string): Delivery {
  const row = store.findDelivery(deps.db.orm, cabinetId, deliveryId);
  if (!row) throw new ApiError('not_found', `No delivery with id ${deliveryId} in this cabinet.`);
  return toDelivery(row, store.attemptsOf(deps.db.orm, [row.id]));
}

export function listDeliveries(
  deps: Deps,
  cabinetId: string,
  subscriptionId: string,
  query: { limit: number; cursor?: string; status?: Delivery['status']; event_type?: EventType },
): Page<Delivery> {
  if (!store.findSubscription(deps.db.orm, cabinetId, subscriptionId)) throw notFound(subscriptionId);
  const codec = cursorCodec(deps.keys.cursor, {
    cabinetId,
    resource: `webhook-deliveries:${subscriptionId}`,
    filters: { status: query.status, event_type: query.event_type },
  });
  const rows = store.listDeliveries(
    deps.db.orm,
    cabinetId,
    subscriptionId,
    { status: query.status, eventType: query.event_type, after: codec.after(query.cursor) },
    query.limit + 1,
  );
  const attempts = store.attemptsOf(
    deps.db.orm,
    rows.slice(0, query.limit).map((r) => r.id),
  );
  return toPage(
    rows,
    query.limit,
    (row) =>
      toDelivery(
        row,
        attempts.filter((a) => a.deliveryId === row.id),
      ),
    codec.next,
  );
}

function newDelivery(
  deps: Deps,
  cabinetId: string,
  subscriptionId: string,
  event: { id: string; type: string },
  extra: Partial<store.DeliveryRow> = {},
): store.DeliveryRow {
  const now = deps.clock.now();
  return {
    id: randomUUID(),
    cabinetId,
    subscriptionId,
    eventId: event.id,
    eventType: event.type,
    status: 'pending',
    attemptCount: 0,
    maxAttempts: deps.config.webhookRetryDelays.length,
    nextAttemptAt: now + (deps.config.webhookRetryDelays[0] ?? 0) * 1000,
    leaseUntil: null,
    replayOf: null,
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
}

/** Creates the deliveries of a batch of outbox events for the subscriptions that match them. */
export function fanOutEvents(deps: Deps, batch: number): number {
  // Without any subscription (an install before its first webhook), there is nothing to fan out,
  // and no transaction to write after every commit of the API: the first subscription moves the
  // position to the newest event when it is created (createWebhook).
  if (!store.anySubscription(deps.db.orm)) return 0;
  return deps.db.immediateTransaction(() => {
    const after = store.fanoutPosition(deps.db.orm);
    const events = readOutbox(deps, after, batch);
    const byCabinet = new Map<string, store.SubscriptionRow[]>();
    for (const event of events) {
      // Test events go to their own subscription only, created with the event.
      if (event.type === 'webhook.test') continue;
      let subscriptions = byCabinet.get(event.cabinet_id);
      if (!subscriptions) {
        subscriptions = store.activeSubscriptions(deps.db.orm, event.cabinet_id);
        byCabinet.set(event.cabinet_id, subscriptions);
      }
      for (const subscription of subscriptions) {
        if (subscribesTo(JSON.parse(subscription.events) as string[], event.type)) {
          store.insertDelivery(deps.db.orm, newDelivery(deps, event.cabinet_id, subscription.id, event));
        }
      }
    }
    const last = events[events.length - 1];
    if (last) store.setFanoutPosition(deps.db.orm, last.seq);
    return events.length;
  });
}

/**
 * The hook for job callbacks (callback_webhook_id): delivers that event to that subscription even
 * if its event list does not cover it. Call it in the transaction that records the event.
 */
export function enqueueCallbackDelivery(
  deps: Deps,
  cabinetId: string,
  subscriptionId: string,
  event: { id: string; type: string },
): boolean {
  if (!store.findSubscription(deps.db.orm, cabinetId, subscriptionId)) return false;
  store.insertDelivery(deps.db.orm, newDelivery(deps, cabinetId, subscriptionId, event));
  deps.outbox.notify();
  return true;
}

export function webhookExists(deps: Deps, cabinetId: string, id: string): boolean {
  return store.findSubscription(deps.db.orm, cabinetId, id) !== undefined;
}

/** Sends an event again as a new delivery with the same event id, due now. */
export function replayDelivery(deps: Deps, cabinetId: string, subscriptionId: string, deliveryId: string): Delivery {
  if (!store.findSubscription(deps.db.orm, cabinetId, subscriptionId)) throw notFound(subscriptionId);
  const original = store.findDelivery(deps.db.orm, cabinetId, deliveryId);
  if (!original || original.subscriptionId !== subscriptionId)
    throw new ApiError('not_found', `No delivery with id ${deliveryId} for this webhook.`);
  const row = newDelivery(
    deps,
    cabinetId,
    subscriptionId,
    { id: original.eventId, type: original.eventType },
    {
      replayOf: original.id,
      nextAttemptAt: deps.clock.now(),
      maxAttempts: original.maxAttempts,
    },
  );
  store.insertDelivery(deps.db.orm, row);
  deps.outbox.notify();
  return toDelivery(row, []);
}

/** A webhook.test event and its single-attempt delivery to this subscription only. */
export function createTestDelivery(deps: Deps, cabinetId: string, subscriptionId: string): string {
  if (!store.findSubscription(deps.db.orm, cabinetId, subscriptionId)) throw notFound(subscriptionId);
  return deps.db.transaction(() => {
    const event = recordEvent(deps, cabinetId, 'webhook.test', {
      message: 'This is a test delivery from Courtier.',
      webhook_id: subscriptionId,
    });
    const row = newDelivery(deps, cabinetId, subscriptionId, event, { maxAttempts: 1, nextAttemptAt: null });
    store.insertDelivery(deps.db.orm, row);
    return row.id;
  });
}

export function purgeOldDeliveries(deps: Deps): number {
  return store.purgeDeliveriesBefore(deps.db.orm, deps.clock.now() - DELIVERY_RETENTION_MS);
}
