import { and, asc, desc, eq, inArray, lt, lte, ne, sql } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Database, Orm } from '../platform/db/open.js';
import { inJsonArray, placeholdersFor, preparedQuery } from '../platform/db/prepared-query.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { webhookAttempts, webhookDeliveries, webhookFanout, webhookSubscriptions } from './schema.js';

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/**
 * Placeholders of the queries prepared once (prepared-query.ts): what the dispatcher runs for every
 * delivery (the fan-out's inserts, the claim, the attempt's reads and writes), built by drizzle on
 * every call, would take more CPU than the HTTPS requests themselves. `.set()`'s types take no
 * placeholder: there it is wrapped in an `sql` fragment.
 */
const P = sql.placeholder;

/** A delivery whose subscription is active. */
function ofActiveSubscription(orm: Orm) {
  return inArray(
    webhookDeliveries.subscriptionId,
    orm.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.active, true)),
  );
}

export function insertSubscription(orm: Orm, row: SubscriptionRow): void {
  orm.insert(webhookSubscriptions).values(row).run();
}

const SUBSCRIPTION = preparedQuery((orm) =>
  orm
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.cabinetId, P('cabinetId')), eq(webhookSubscriptions.id, P('id')))),
);

export function findSubscription(orm: Orm, cabinetId: string, id: string): SubscriptionRow | undefined {
  return SUBSCRIPTION(orm).get({ cabinetId, id });
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

const ANY_SUBSCRIPTION = preparedQuery((orm) =>
  orm
    .select({ one: sql<number>`1` })
    .from(webhookSubscriptions)
    .limit(1),
);

/** Whether this install has any webhook subscription at all (active or not). */
export function anySubscription(orm: Orm): boolean {
  return ANY_SUBSCRIPTION(orm).get() !== undefined;
}

const ACTIVE_SUBSCRIPTIONS = preparedQuery((orm) =>
  orm
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.cabinetId, P('cabinetId')), eq(webhookSubscriptions.active, true))),
);

export function activeSubscriptions(orm: Orm, cabinetId: string): SubscriptionRow[] {
  return ACTIVE_SUBSCRIPTIONS(orm).all({ cabinetId });
}

/** The fan-out's position is a single row, id 1. */
const FANOUT_POSITION = preparedQuery((orm) =>
  orm.select({ lastSeq: webhookFanout.lastSeq }).from(webhookFanout).where(eq(webhookFanout.id, 1)),
);

export function fanoutPosition(orm: Orm): number {
  return FANOUT_POSITION(orm).get()?.lastSeq ?? 0;
}

const SET_FANOUT_POSITION = preparedQuery((orm) =>
  orm
    .insert(webhookFanout)
    .values({ id: 1, lastSeq: P('lastSeq') })
    .onConflictDoUpdate({ target: webhookFanout.id, set: { lastSeq: sql`${P('lastSeq')}` } }),
);

export function setFanoutPosition(orm: Orm, lastSeq: number): void {
  SET_FANOUT_POSITION(orm).run({ lastSeq });
}

const INSERT_DELIVERY = preparedQuery((orm) =>
  orm.insert(webhookDeliveries).values(placeholdersFor(webhookDeliveries)).onConflictDoNothing(),
);

/** Inserts a delivery unless the subscription already has one for that event (replays excepted). */
export function insertDelivery(orm: Orm, row: DeliveryRow): boolean {
  return INSERT_DELIVERY(orm).run(row).changes > 0;
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

const DUE_DELIVERIES = preparedQuery((orm) =>
  orm
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, P('now')), ofActiveSubscription(orm)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(P('limit')),
);

const LEASE_DELIVERIES = preparedQuery((orm) =>
  orm
    .update(webhookDeliveries)
    .set({ leaseUntil: sql`${P('until')}`, nextAttemptAt: sql`${P('until')}` })
    .where(inJsonArray(webhookDeliveries.id, P('ids'))),
);

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
    const candidates = DUE_DELIVERIES(db.orm).all({ now, limit: options.limit * 4 });
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
      LEASE_DELIVERIES(db.orm).run({ until: now + options.leaseMs, ids: JSON.stringify(chosen.map((d) => d.id)) });
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

const SET_PROGRESS = preparedQuery((orm) =>
  orm
    .update(webhookDeliveries)
    .set({
      status: sql`${P('status')}`,
      attemptCount: sql`${P('attemptCount')}`,
      nextAttemptAt: sql`${P('nextAttemptAt')}`,
      leaseUntil: sql`${P('leaseUntil')}`,
      updatedAt: sql`${P('updatedAt')}`,
    })
    .where(eq(webhookDeliveries.id, P('id'))),
);

const INSERT_ATTEMPT = preparedQuery((orm) => orm.insert(webhookAttempts).values(placeholdersFor(webhookAttempts)));

/**
 * Records an attempt and its delivery's new state; false, writing nothing, when the delivery is
 * gone (its subscription was deleted during the attempt), so that the other outcomes recorded in
 * the same transaction do not fail with it on the attempt's foreign key.
 */
export function recordAttempt(orm: Orm, attempt: Omit<AttemptRow, 'id'>, delivery: { id: string; progress: DeliveryProgress }): boolean {
  const { status, attemptCount, nextAttemptAt, leaseUntil, updatedAt } = delivery.progress;
  const updated = SET_PROGRESS(orm).run({ status, attemptCount, nextAttemptAt, leaseUntil, updatedAt, id: delivery.id });
  if (updated.changes === 0) return false;
  INSERT_ATTEMPT(orm).run(attempt);
  return true;
}

const NEXT_DUE_AT = preparedQuery((orm) =>
  orm
    .select({ at: sql<number | null>`min(${webhookDeliveries.nextAttemptAt})` })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), ofActiveSubscription(orm))),
);

/** When the next pending delivery of an active subscription falls due, to sleep until then. */
export function nextDueAt(orm: Orm): number | null {
  return NEXT_DUE_AT(orm).get()?.at ?? null;
}

export function purgeDeliveriesBefore(orm: Orm, cutoff: number): number {
  return orm
    .delete(webhookDeliveries)
    .where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.status, 'pending')))
    .run().changes;
}
