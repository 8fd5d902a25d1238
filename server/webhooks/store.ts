import { and, asc, desc, eq, inArray, lt, min, sql } from 'drizzle-orm';
import { before } from '../db/keyset.js';
import type { Database, Orm } from '../db/open.js';
import type { CursorPosition } from '../http/cursor.js';
import { webhookAttempts, webhookDeliveries, webhookFanout, webhookSubscriptions } from './schema.js';

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

export function insertSubscription(orm: Orm, row: SubscriptionRow): void {
  orm.insert(webhookSubscriptions).values(row).run();
}

export function findSubscription(orm: Orm, cabinetId: string, id: string): SubscriptionRow | undefined {
  return orm
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.cabinetId, cabinetId), eq(webhookSubscriptions.id, id)))
    .get();
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

export function activeSubscriptions(orm: Orm, cabinetId: string): SubscriptionRow[] {
  return orm
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.cabinetId, cabinetId), eq(webhookSubscriptions.active, true)))
    .all();
}

export function fanoutPosition(orm: Orm): number {
  return orm.select().from(webhookFanout).where(eq(webhookFanout.id, 1)).get()?.lastSeq ?? 0;
}

export function setFanoutPosition(orm: Orm, lastSeq: number): void {
  orm
    .insert(webhookFanout)
    .values({ id: 1, lastSeq })
    .onConflictDoUpdate({ target: webhookFanout.id, set: { lastSeq } })
    .run();
}

/** Inserts a delivery unless the subscription already has one for that event (replays excepted). */
export function insertDelivery(orm: Orm, row: DeliveryRow): boolean {
  return orm.insert(webhookDeliveries).values(row).onConflictDoNothing().run().changes > 0;
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
  return db.sqlite
    .transaction(() => {
      const candidates = db.orm
        .select({ delivery: webhookDeliveries })
        .from(webhookDeliveries)
        .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
        .where(
          and(
            eq(webhookDeliveries.status, 'pending'),
            lt(webhookDeliveries.nextAttemptAt, now + 1),
            eq(webhookSubscriptions.active, true),
          ),
        )
        .orderBy(asc(webhookDeliveries.nextAttemptAt))
        .limit(options.limit * 4)
        .all();
      const taken = new Map(options.busy);
      const chosen: DeliveryRow[] = [];
      for (const { delivery } of candidates) {
        if (chosen.length >= options.limit) break;
        const count = taken.get(delivery.subscriptionId) ?? 0;
        if (count >= options.perSubscription) continue;
        taken.set(delivery.subscriptionId, count + 1);
        chosen.push(delivery);
      }
      if (chosen.length > 0) {
        db.orm
          .update(webhookDeliveries)
          .set({ leaseUntil: now + options.leaseMs, nextAttemptAt: now + options.leaseMs })
          .where(inArray(webhookDeliveries.id, chosen.map((d) => d.id)))
          .run();
      }
      return chosen;
    })
    .immediate();
}

/** A delivery's own lease, for an attempt made right away (test deliveries). */
export function leaseDelivery(orm: Orm, id: string, until: number): void {
  orm.update(webhookDeliveries).set({ leaseUntil: until, nextAttemptAt: until }).where(eq(webhookDeliveries.id, id)).run();
}

export function recordAttempt(orm: Orm, attempt: Omit<AttemptRow, 'id'>, delivery: { id: string; changes: Partial<DeliveryRow> }): void {
  orm.insert(webhookAttempts).values(attempt).run();
  orm.update(webhookDeliveries).set(delivery.changes).where(eq(webhookDeliveries.id, delivery.id)).run();
}

/** When the next pending delivery of an active subscription falls due, to sleep until then. */
export function nextDueAt(orm: Orm): number | null {
  return (
    orm
      .select({ at: min(webhookDeliveries.nextAttemptAt) })
      .from(webhookDeliveries)
      .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
      .where(and(eq(webhookDeliveries.status, 'pending'), eq(webhookSubscriptions.active, true)))
      .get()?.at ?? null
  );
}

export function purgeDeliveriesBefore(orm: Orm, cutoff: number): number {
  return orm.delete(webhookDeliveries).where(and(lt(webhookDeliveries.createdAt, cutoff), sql`status != 'pending'`)).run().changes;
}
