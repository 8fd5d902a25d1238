import { and, count, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { parseHlc } from '../../shared/hlc.js';
import type { Orm } from '../platform/db/open.js';
import { placeholdersFor, preparedQuery } from '../platform/db/prepared-query.js';
import { later, type ClockState } from './hlc.js';
import { syncConflicts, syncConnections, syncDetached, syncFieldClocks, syncOutbox, syncOwnDevices, syncStagedBlobs } from './schema.js';

export type ConnectionRow = typeof syncConnections.$inferSelect;
export type OutboxRow = typeof syncOutbox.$inferSelect;

const P = sql.placeholder;

/** The value a row to insert proposed for a column, in an upsert's DO UPDATE. */
const excluded = (column: AnySQLiteColumn) => sql`excluded.${sql.identifier(column.name)}`;

/*
 * The queries of the hot paths (each captured change: the link and the queue's newest change, the
 * append; each push: the queue, the acknowledgement; each applied change: the field clocks) are
 * prepared once per connection (prepared-query.ts); the rest is built on each call.
 */

const FIND_CONNECTION = preparedQuery((orm) =>
  orm
    .select()
    .from(syncConnections)
    .where(eq(syncConnections.cabinetId, P('cabinetId'))),
);

/**
 * The link and the queue's newest change, or a disconnected cabinet's clock, in one read: what a
 * capture needs (captureState). The newest change is at most one row, joined without a condition
 * so that the link comes with or without it.
 */
const CAPTURE_STATE = preparedQuery((orm) => {
  const newest = orm
    .select({ number: syncOutbox.number, hlc: syncOutbox.hlc })
    .from(syncOutbox)
    .where(eq(syncOutbox.cabinetId, P('cabinetId')))
    .orderBy(desc(syncOutbox.number))
    .limit(1)
    .as('newest');
  return orm
    .select({
      deviceId: syncConnections.deviceId,
      nextNumber: syncConnections.nextNumber,
      clockTime: syncConnections.clockTime,
      clockCounter: syncConnections.clockCounter,
      newest: newest.number,
      newestHlc: newest.hlc,
      detached: sql<boolean>`0`.mapWith(Boolean),
    })
    .from(syncConnections)
    .leftJoin(newest, undefined)
    .where(eq(syncConnections.cabinetId, P('cabinetId')))
    .unionAll(
      orm
        .select({
          deviceId: syncDetached.deviceId,
          nextNumber: sql<number>`0`,
          clockTime: syncDetached.clockTime,
          clockCounter: syncDetached.clockCounter,
          newest: sql<number | null>`NULL`,
          newestHlc: sql<string | null>`NULL`,
          detached: sql<boolean>`1`.mapWith(Boolean),
        })
        .from(syncDetached)
        .where(eq(syncDetached.cabinetId, P('cabinetId'))),
    );
});

const FIND_QUEUED = preparedQuery((orm) =>
  orm
    .select({ hlc: syncOutbox.hlc })
    .from(syncOutbox)
    .where(and(eq(syncOutbox.cabinetId, P('cabinetId')), eq(syncOutbox.number, P('number')))),
);

/**
 * Numbers and clocks only move forward: an acknowledgement that arrives late undoes nothing. The
 * plain values are `sql` fragments because `.set()`'s types take no placeholder.
 */
const ACKNOWLEDGE = preparedQuery((orm) =>
  orm
    .update(syncConnections)
    .set({
      acknowledgedNumber: sql`max(${syncConnections.acknowledgedNumber}, ${P('number')})`,
      lastPushAt: sql`${P('now')}`,
      nextNumber: sql`max(${syncConnections.nextNumber}, ${P('number')} + 1)`,
      clockTime: sql`${P('clockTime')}`,
      clockCounter: sql`${P('clockCounter')}`,
      acknowledgedClockTime: sql`max(${syncConnections.acknowledgedClockTime}, ${P('acknowledgedClockTime')})`,
    })
    .where(eq(syncConnections.cabinetId, P('cabinetId'))),
);

const APPEND_OUTBOX = preparedQuery((orm) => orm.insert(syncOutbox).values(placeholdersFor(syncOutbox)));

const OUTBOX_AFTER = preparedQuery((orm) =>
  orm
    .select()
    .from(syncOutbox)
    .where(and(eq(syncOutbox.cabinetId, P('cabinetId')), gt(syncOutbox.number, P('number'))))
    .orderBy(syncOutbox.number)
    .limit(P('limit')),
);

const DELETE_OUTBOX_THROUGH = preparedQuery((orm) =>
  orm.delete(syncOutbox).where(and(eq(syncOutbox.cabinetId, P('cabinetId')), lte(syncOutbox.number, P('number')))),
);

const FIND_FIELD_CLOCKS = preparedQuery((orm) =>
  orm
    .select({ clocks: syncFieldClocks.clocks, erased: syncFieldClocks.erased })
    .from(syncFieldClocks)
    .where(
      and(eq(syncFieldClocks.cabinetId, P('cabinetId')), eq(syncFieldClocks.kind, P('kind')), eq(syncFieldClocks.recordId, P('recordId'))),
    ),
);

/** json_patch keeps the clocks of the fields the change does not name; max() never undoes an erasure. */
const MERGE_FIELD_CLOCKS = preparedQuery((orm) =>
  orm
    .insert(syncFieldClocks)
    .values(placeholdersFor(syncFieldClocks))
    .onConflictDoUpdate({
      target: [syncFieldClocks.cabinetId, syncFieldClocks.kind, syncFieldClocks.recordId],
      set: {
        clocks: sql`json_patch(${syncFieldClocks.clocks}, ${excluded(syncFieldClocks.clocks)})`,
        erased: sql`max(${syncFieldClocks.erased}, ${excluded(syncFieldClocks.erased)})`,
      },
    }),
);

export function insertConnection(orm: Orm, row: ConnectionRow): void {
  orm.insert(syncConnections).values(row).run();
}

export function findConnection(orm: Orm, cabinetId: string): ConnectionRow | undefined {
  return FIND_CONNECTION(orm).get({ cabinetId });
}

/** Read at every claim of the robot worker (the cabinets that hold their jobs back). */
const CONNECTIONS = preparedQuery((orm) => orm.select().from(syncConnections));

export function listConnections(orm: Orm): ConnectionRow[] {
  return CONNECTIONS(orm).all();
}

export function updateConnection(orm: Orm, cabinetId: string, changes: Partial<Omit<ConnectionRow, 'cabinetId'>>): void {
  orm.update(syncConnections).set(changes).where(eq(syncConnections.cabinetId, cabinetId)).run();
}

/** What a change captured now gets: this device, the next number and the clock to tick from; detached: clocks only, no queue. */
export interface CaptureState {
  deviceId: string;
  nextNumber: number;
  clock: ClockState;
  detached: boolean;
}

/**
 * The next number and the clock live in the queue's newest change while there is one, and in the
 * link once the hub acknowledged everything (forgetThrough moves them there): a capture then
 * writes one row, not that row and the link's — one page less in every commit of a change.
 */
export function captureState(orm: Orm, cabinetId: string): CaptureState | undefined {
  const row = CAPTURE_STATE(orm).get({ cabinetId });
  if (!row) return undefined;
  const { deviceId, nextNumber, clockTime: time, clockCounter: counter, newest, newestHlc, detached } = row;
  const linked = { time, counter };
  if (newest === null || newestHlc === null) return { deviceId, nextNumber, clock: linked, detached };
  const queued = parseHlc(newestHlc);
  return {
    deviceId,
    nextNumber: Math.max(nextNumber, newest + 1),
    clock: later(linked, { time: queued.time, counter: queued.counter }),
    detached: false,
  };
}

/** A disconnected cabinet's clock moves on with each change made here. */
export function advanceDetachedClock(orm: Orm, cabinetId: string, clock: ClockState): void {
  orm.update(syncDetached).set({ clockTime: clock.time, clockCounter: clock.counter }).where(eq(syncDetached.cabinetId, cabinetId)).run();
}

export function findDetached(orm: Orm, cabinetId: string): typeof syncDetached.$inferSelect | undefined {
  return orm.select().from(syncDetached).where(eq(syncDetached.cabinetId, cabinetId)).get();
}

export function rememberOwnDevice(orm: Orm, cabinetId: string, deviceId: string): void {
  orm.insert(syncOwnDevices).values({ cabinetId, deviceId }).onConflictDoNothing().run();
}

export function ownDevices(orm: Orm, cabinetId: string): Set<string> {
  return new Set(
    orm
      .select({ id: syncOwnDevices.deviceId })
      .from(syncOwnDevices)
      .where(eq(syncOwnDevices.cabinetId, cabinetId))
      .all()
      .map((row) => row.id),
  );
}

/**
 * Forgets the link and its queue, and keeps the field clocks, now moved on by a detached clock:
 * the queued changes' fields keep the clocks of their changes (a creation writes none), so that a
 * reconnect sends them again with when they were made.
 */
export function detachConnection(orm: Orm, connection: ConnectionRow): void {
  const { cabinetId } = connection;
  let clock: ClockState = { time: connection.clockTime, counter: connection.clockCounter };
  for (const row of readOutboxAfter(orm, cabinetId, 0, Number.MAX_SAFE_INTEGER)) {
    const stamp = parseHlc(row.hlc);
    clock = later(clock, { time: stamp.time, counter: stamp.counter });
    const held = findFieldClocks(orm, cabinetId, row.kind, row.recordId);
    const unclocked = Object.keys(JSON.parse(row.fields) as Record<string, unknown>).filter((field) => held?.clocks[field] === undefined);
    if (unclocked.length > 0)
      mergeFieldClocks(orm, cabinetId, row.kind, row.recordId, Object.fromEntries(unclocked.map((field) => [field, row.hlc])), false);
  }
  orm.delete(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).run();
  orm.delete(syncStagedBlobs).where(eq(syncStagedBlobs.cabinetId, cabinetId)).run();
  orm.delete(syncConflicts).where(eq(syncConflicts.cabinetId, cabinetId)).run();
  orm.delete(syncConnections).where(eq(syncConnections.cabinetId, cabinetId)).run();
  orm
    .insert(syncDetached)
    .values({ cabinetId, deviceId: connection.deviceId, clockTime: clock.time, clockCounter: clock.counter })
    .onConflictDoUpdate({
      target: syncDetached.cabinetId,
      set: { deviceId: connection.deviceId, clockTime: clock.time, clockCounter: clock.counter },
    })
    .run();
}

/** A link replaces the detached clock: the link's clock starts past it. */
export function endDetached(orm: Orm, cabinetId: string): void {
  orm.delete(syncDetached).where(eq(syncDetached.cabinetId, cabinetId)).run();
}

/**
 * Gives the queued changes new numbers from `first` on, in their order, keeping their stamps: the
 * hub's numbering of this device went another way (it, or this install, was restored from a backup).
 */
export function renumberOutbox(orm: Orm, cabinetId: string, first: number): number {
  const rows = readOutboxAfter(orm, cabinetId, 0, Number.MAX_SAFE_INTEGER);
  orm.delete(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).run();
  rows.forEach((row, i) => appendOutbox(orm, { ...row, number: first + i }));
  orm
    .update(syncConnections)
    .set({ nextNumber: first + rows.length, acknowledgedNumber: first - 1 })
    .where(eq(syncConnections.cabinetId, cabinetId))
    .run();
  return rows.length;
}

export function appendOutbox(orm: Orm, row: OutboxRow): void {
  APPEND_OUTBOX(orm).run(row);
}

/** The queued changes numbered after `number`, oldest first. */
export function readOutboxAfter(orm: Orm, cabinetId: string, number: number, limit: number): OutboxRow[] {
  return OUTBOX_AFTER(orm).all({ cabinetId, number, limit });
}

export function countOutbox(orm: Orm, cabinetId: string): number {
  return orm.select({ n: count() }).from(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).get()?.n ?? 0;
}

/**
 * Deletes what the hub acknowledged, and nothing after it, and notes the acknowledgement; the link
 * takes over the number and clock of the last change deleted (captureState reads them there once
 * the queue is empty).
 */
export function forgetThrough(orm: Orm, cabinetId: string, number: number, now: number): void {
  const connection = findConnection(orm, cabinetId);
  if (!connection) return;
  const last = FIND_QUEUED(orm).get({ cabinetId, number });
  const parsed = last ? parseHlc(last.hlc) : undefined;
  const clock = later(
    { time: connection.clockTime, counter: connection.clockCounter },
    parsed ? { time: parsed.time, counter: parsed.counter } : { time: 0, counter: 0 },
  );
  ACKNOWLEDGE(orm).run({
    cabinetId,
    number,
    now,
    clockTime: clock.time,
    clockCounter: clock.counter,
    acknowledgedClockTime: parsed?.time ?? 0,
  });
  DELETE_OUTBOX_THROUGH(orm).run({ cabinetId, number });
}

export interface FieldClocks {
  clocks: Record<string, string>;
  erased: boolean;
}

export function findFieldClocks(orm: Orm, cabinetId: string, kind: string, recordId: string): FieldClocks | undefined {
  const row = FIND_FIELD_CLOCKS(orm).get({ cabinetId, kind, recordId });
  return row ? { clocks: JSON.parse(row.clocks) as Record<string, string>, erased: row.erased } : undefined;
}

/** Sets the clock of some fields (json_patch keeps the others'); an erasure is never undone. */
export function mergeFieldClocks(
  orm: Orm,
  cabinetId: string,
  kind: string,
  recordId: string,
  clocks: Record<string, string>,
  erased: boolean,
): void {
  MERGE_FIELD_CLOCKS(orm).run({ cabinetId, kind, recordId, clocks: JSON.stringify(clocks), erased });
}

/** Gives a queued change a new clock, and its fields too where they still hold the old one. */
export function restampChange(orm: Orm, cabinetId: string, row: OutboxRow, hlc: string): void {
  orm
    .update(syncOutbox)
    .set({ hlc })
    .where(and(eq(syncOutbox.cabinetId, cabinetId), eq(syncOutbox.number, row.number)))
    .run();
  const held = findFieldClocks(orm, cabinetId, row.kind, row.recordId);
  if (!held) return;
  const clocks = Object.fromEntries(Object.entries(held.clocks).map(([field, clock]) => [field, clock === row.hlc ? hlc : clock]));
  orm
    .update(syncFieldClocks)
    .set({ clocks: JSON.stringify(clocks) })
    .where(and(eq(syncFieldClocks.cabinetId, cabinetId), eq(syncFieldClocks.kind, row.kind), eq(syncFieldClocks.recordId, row.recordId)))
    .run();
}
