import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Database, Orm } from '../platform/db/open.js';
import { IN_JSON_ARRAY, tableSql } from '../platform/db/table-sql.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from './schema.js';

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/**
 * What the dispatcher runs for every delivery (the fan-out's inserts, the claim, the attempt's
 * reads and writes) is prepared once (table-sql.ts): built by drizzle on every call, these
 * statements would take more CPU than the HTTPS requests themselves.
 */
const SUBSCRIPTION = tableSql(webhookSubscriptions);
const DELIVERY = tableSql(webhookDeliveries);
const ATTEMPT = tableSql(webhookAttempts);
const OF_ACTIVE_SUBSCRIPTION = 'subscription_id IN (SELECT id FROM webhook_subscriptions WHERE active = 1)';

export function insertSubscription(orm: Orm, row: SubscriptionRow): void {
  orm.insert(webhookSubscriptions).values(row).run();
}

export function findSubscription(orm: Orm, cabinetId: string, id: string): SubscriptionRow | undefined {
  return SUBSCRIPTION.get(orm, 'WHERE cabinet_id = ? AND id = ?', cabinetId, id);
}

export function updateSubscription(orm: Orm, cabinetId: string, id: string, changes: Partial<SubscriptionRow>): void {
  orm
    .update(webhookSubscriptions)
    .set(changes)
    .where(and(eq(webhookSubscriptions.cabinetId, cabinetId), eq(webhookSubscriptions.id, id)))
    .run();
}

export function deleteSubscription(orm: Orm, cabinetId: string, id: string): boolean {
  return (
    orm
      .delete(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.cabinetId, cabinetId), eq(webhookSubscriptions.id, id)))
      .run().changes > 0
  );
}

export function listSubscriptions(orm: Orm, cabinetId: string, after: CursorPosition | undefined, limit: number): SubscriptionRow[] {
  return orm
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.cabinetId, cabinetId), before(webhookSubscriptions.createdAt, webhookSubscriptions.id, after)))
    .orderBy(desc(webhookSubscriptions.createdAt), desc(webhookSubscriptions.id))
    .limit(limit)
    .all();
}

/** Whether this install has any webhook subscription at all (active or not). */
export function anySubscription(orm: Orm): boolean {
  return orm.prepared('SELECT 1 FROM webhook_subscriptions LIMIT 1').get() !== undefined;
}

export function activeSubscriptions(orm: Orm, cabinetId: string): SubscriptionRow[] {
  return SUBSCRIPTION.all(orm, 'WHERE cabinet_id = ? AND active = 1', cabinetId);
}

export function fanoutPosition(orm: Orm): number {
  return (orm.prepared('SELECT last_seq FROM webhook_fanout WHERE id = 1').pluck(true).get() as number | undefined) ?? 0;
}

export function setFanoutPosition(orm: Orm, lastSeq: number): void {
  orm
    .prepared('INSERT INTO webhook_fanout (id, last_seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET last_seq = excluded.last_seq')
    .run(lastSeq);
}

/** Inserts a delivery unless the subscription already has one for that event (replays excepted). */
export function insertDelivery(orm: Orm, row: DeliveryRow): boolean {
  return DELIVERY.insertIfAbsent(orm, row);
}

export function findDelivery(orm: Orm, cabinetId: string, id: string): DeliveryRow | undefined {
  return orm
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.cabinetId, cabinetId), eq(webhookDeliveries.id, id)))
    .get();
}

export function listDeliveries(
  orm: Orm,
  cabinetId: string,
  subscriptionId: string,
  filters: { status?: DeliveryRow['status']; eventType?: string; after?: CursorPosition },
  limit: number,
): DeliveryRow[] {
  return orm
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.cabinetId, cabinetId),
        eq(webhookDeliveries.subscriptionId, subscriptionId),
        filters.status ? eq(webhookDeliveries.status, filters.status) : undefined,
        filters.eventType ? eq(webhookDeliveries.eventType, filters.eventType) : undefined,
        before(webhookDeliveries.createdAt, webhookDeliveries.id, filters.after),
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit)
    .all();
}

export function attemptsOf(orm: Orm, deliveryIds: string[]): AttemptRow[] {
  if (deliveryIds.length === 0) return [];
  return orm.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveryIds)).orderBy(asc(webhookAttempts.id)).all();
}

/**
 * Leases due deliveries of active subscriptions, at most perSubscription in flight for each
 * (counting those already busy). A lease pushes next_attempt_at to its end, like a visibility
 * timeout: if the process dies mid-attempt, the delivery falls due again when the lease ends.
 * IMMEDIATE, so that two dispatchers never lease one delivery.
 */
export function claimDueDeliveries(
  db: Database,
  now: number,
  options: { leaseMs: number; limit: number; perSubscription: number; busy: ReadonlyMap<string, number> },
): DeliveryRow[] {
  return db.immediateTransaction(() => {
    const candidates = DELIVERY.all(
      db.orm,
      `WHERE status = 'pending' AND next_attempt_at <= ? AND ${OF_ACTIVE_SUBSCRIPTION} ORDER BY next_attempt_at LIMIT ?`,
      now,
      options.limit * 4,
    );
    const taken = new Map(options.busy);
    const chosen: DeliveryRow[] = [];
    for (const delivery of candidates) {
      if (chosen.length >= options.limit) break;
      const count = taken.get(delivery.subscriptionId) ?? 0;
      if (count >= options.perSubscription) continue;
      taken.set(delivery.subscriptionId, count + 1);
      chosen.push(delivery);
    }
    if (chosen.length > 0) {
      db.orm
        .prepared(`UPDATE webhook_deliveries SET lease_until = ?, next_attempt_at = ? WHERE id ${IN_JSON_ARRAY}`)
        .run(now + options.leaseMs, now + options.leaseMs, JSON.stringify(chosen.map((d) => d.id)));
    }
    return chosen;
  });
}

/** A delivery's own lease, for an attempt made right away (test deliveries). */
export function leaseDelivery(orm: Orm, id: string, until: number): void {
  orm.update(webhookDeliveries).set({ leaseUntil: until, nextAttemptAt: until }).where(eq(webhookDeliveries.id, id)).run();
}

/** A delivery's state after an attempt: done, failed for good, or pending until its next try. */
export type DeliveryProgress = Pick<DeliveryRow, 'status' | 'attemptCount' | 'nextAttemptAt' | 'leaseUntil' | 'updatedAt'>;

/**
 * Records an attempt and its delivery's new state; false, writing nothing, when the delivery is
 * gone (its subscription was deleted during the attempt), so that the other outcomes recorded in
 * the same transaction do not fail with it on the attempt's foreign key.
 */
export function recordAttempt(orm: Orm, attempt: Omit<AttemptRow, 'id'>, delivery: { id: string; progress: DeliveryProgress }): boolean {
  const { status, attemptCount, nextAttemptAt, leaseUntil, updatedAt } = delivery.progress;
  const updated = orm
    .prepared(
      'UPDATE webhook_deliveries SET status = ?, attempt_count = ?, next_attempt_at = ?, lease_until = ?, updated_at = ? WHERE id = ?',
    )
    .run(status, attemptCount, nextAttemptAt, leaseUntil, updatedAt, delivery.id);
  if (updated.changes === 0) return false;
  ATTEMPT.insert(orm, attempt);
  return true;
}

/** When the next pending delivery of an active subscription falls due, to sleep until then. */
export function nextDueAt(orm: Orm): number | null {
  const at = orm
    .prepared(`SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND ${OF_ACTIVE_SUBSCRIPTION}`)
    .pluck(true)
    .get();
  return typeof at === 'number' ? at : null;
}

export function purgeDeliveriesBefore(orm: Orm, cutoff: number): number {
  return orm
    .delete(webhookDeliveries)
    .where(and(lt(webhookDeliveries.createdAt, cutoff), sql`status != 'pending'`))
    .run().changes;
}
