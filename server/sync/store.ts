import { and, count, desc, eq, inArray, lt } from 'drizzle-orm';
import { parseHlc } from '../../shared/sync-protocol.js';
import type { Orm } from '../platform/db/open.js';
import { later, type ClockState } from './hlc.js';
import {
  syncConflicts,
  syncConnections,
  syncDetached,
  syncFieldClocks,
  syncOutbox,
  syncOwnDevices,
  syncRefused,
  syncStagedBlobs,
} from './schema.js';

export type ConnectionRow = typeof syncConnections.$inferSelect;
export type OutboxRow = typeof syncOutbox.$inferSelect;

/**
 * The queries of the hot paths — each captured change (read the link and the queue's newest
 * change, append), each push (read the queue, forget what the hub acknowledged) and each applied
 * change (field clocks) — are raw statements prepared once per connection (`orm.prepared`); the
 * rest goes through drizzle.
 */
const SQL = {
  findConnection: `SELECT cabinet_id, hub_url, device_id, device_name, paused, next_number, acknowledged_number, pull_cursor, clock_time, clock_counter, acknowledged_clock_time, remote_clock_time, hub_epoch, resyncing, state,
      last_error, last_error_code, last_error_at, offline_since, hub_clock_offset, last_push_at, last_pull_at, caught_up_at, connected_at
    FROM sync_connections WHERE cabinet_id = ?`,
  // The link and the newest queued change, or the clock of a disconnected cabinet, in one read: what a capture needs (see captureState).
  captureState: `SELECT c.device_id, c.next_number, c.clock_time, c.clock_counter, t.number, t.hlc, 0
    FROM sync_connections c LEFT JOIN (SELECT number, hlc FROM sync_outbox WHERE cabinet_id = ? ORDER BY number DESC LIMIT 1) t
    WHERE c.cabinet_id = ?
    UNION ALL SELECT device_id, 0, clock_time, clock_counter, NULL, NULL, 1 FROM sync_detached WHERE cabinet_id = ?`,
  findQueued: 'SELECT hlc FROM sync_outbox WHERE cabinet_id = ? AND number = ?',
  acknowledge: `UPDATE sync_connections SET acknowledged_number = max(acknowledged_number, ?), last_push_at = ?,
      next_number = max(next_number, ? + 1), clock_time = ?, clock_counter = ?, acknowledged_clock_time = max(acknowledged_clock_time, ?)
    WHERE cabinet_id = ?`,
  appendOutbox: 'INSERT INTO sync_outbox (cabinet_id, number, kind, record_id, op, hlc, fields) VALUES (?, ?, ?, ?, ?, ?, ?)',
  readOutboxAfter:
    'SELECT cabinet_id AS cabinetId, number, kind, record_id AS recordId, op, hlc, fields FROM sync_outbox WHERE cabinet_id = ? AND number > ? ORDER BY number LIMIT ?',
  deleteOutboxThrough: 'DELETE FROM sync_outbox WHERE cabinet_id = ? AND number <= ?',
  findFieldClocks: 'SELECT clocks, erased FROM sync_field_clocks WHERE cabinet_id = ? AND kind = ? AND record_id = ?',
  // json_patch keeps the clocks of the fields the change does not name; max() never undoes an erasure.
  mergeFieldClocks: `INSERT INTO sync_field_clocks (cabinet_id, kind, record_id, clocks, erased) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (cabinet_id, kind, record_id) DO UPDATE SET clocks = json_patch(clocks, excluded.clocks), erased = max(erased, excluded.erased)`,
} as const;

export function insertConnection(orm: Orm, row: ConnectionRow): void {
  orm.insert(syncConnections).values(row).run();
}

export function findConnection(orm: Orm, cabinetId: string): ConnectionRow | undefined {
  const r = orm.prepared(SQL.findConnection).get(cabinetId) as Record<string, unknown> | undefined;
  if (!r) return undefined;
  return {
    cabinetId: r.cabinet_id as string,
    hubUrl: r.hub_url as string,
    deviceId: r.device_id as string,
    deviceName: r.device_name as string,
    paused: r.paused === 1,
    nextNumber: r.next_number as number,
    acknowledgedNumber: r.acknowledged_number as number,
    pullCursor: r.pull_cursor as number,
    clockTime: r.clock_time as number,
    clockCounter: r.clock_counter as number,
    acknowledgedClockTime: r.acknowledged_clock_time as number,
    remoteClockTime: r.remote_clock_time as number,
    hubEpoch: r.hub_epoch as string | null,
    resyncing: r.resyncing === 1,
    state: r.state as ConnectionRow['state'],
    lastError: r.last_error as string | null,
    lastErrorCode: r.last_error_code as string | null,
    lastErrorAt: r.last_error_at as number | null,
    offlineSince: r.offline_since as number | null,
    hubClockOffset: r.hub_clock_offset as number | null,
    lastPushAt: r.last_push_at as number | null,
    lastPullAt: r.last_pull_at as number | null,
    caughtUpAt: r.caught_up_at as number | null,
    connectedAt: r.connected_at as number,
  };
}

export function listConnections(orm: Orm): ConnectionRow[] {
  return orm.select().from(syncConnections).all();
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
  const row = orm.prepared(SQL.captureState).raw().get(cabinetId, cabinetId, cabinetId) as
    [string, number, number, number, number | null, string | null, number] | undefined;
  if (!row) return undefined;
  const [deviceId, nextNumber, time, counter, newest, newestHlc, detached] = row;
  const linked = { time, counter };
  if (newest === null || newestHlc === null) return { deviceId, nextNumber, clock: linked, detached: detached === 1 };
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

export type RefusedRow = typeof syncRefused.$inferSelect;

/**
 * Takes queued changes the hub refused for what they hold out of the queue, keeps them whole in
 * sync_refused, and numbers the rest of the queue from the first number again, so that the ones
 * after them go.
 */
export function setAsideRefused(
  orm: Orm,
  cabinetId: string,
  numbers: readonly number[],
  refusal: { code: string; message: string; at: number },
): void {
  const queue = readOutboxAfter(orm, cabinetId, 0, Number.MAX_SAFE_INTEGER);
  const first = queue[0]?.number;
  if (first === undefined) return;
  for (const row of queue.filter((queued) => numbers.includes(queued.number))) {
    orm
      .insert(syncRefused)
      .values({
        cabinetId,
        hlc: row.hlc,
        kind: row.kind,
        recordId: row.recordId,
        op: row.op,
        fields: row.fields,
        code: refusal.code,
        message: refusal.message.slice(0, 500),
        refusedAt: refusal.at,
      })
      .onConflictDoNothing()
      .run();
    orm
      .delete(syncOutbox)
      .where(and(eq(syncOutbox.cabinetId, cabinetId), eq(syncOutbox.number, row.number)))
      .run();
  }
  renumberOutbox(orm, cabinetId, first);
}

export function listRefused(orm: Orm, cabinetId: string, limit: number): RefusedRow[] {
  return orm.select().from(syncRefused).where(eq(syncRefused.cabinetId, cabinetId)).orderBy(desc(syncRefused.refusedAt)).limit(limit).all();
}

export function countRefused(orm: Orm, cabinetId: string): number {
  return orm.select({ n: count() }).from(syncRefused).where(eq(syncRefused.cabinetId, cabinetId)).get()?.n ?? 0;
}

export function appendOutbox(orm: Orm, row: OutboxRow): void {
  orm.prepared(SQL.appendOutbox).run(row.cabinetId, row.number, row.kind, row.recordId, row.op, row.hlc, row.fields);
}

/** The queued changes numbered after `number`, oldest first. */
export function readOutboxAfter(orm: Orm, cabinetId: string, number: number, limit: number): OutboxRow[] {
  return orm.prepared(SQL.readOutboxAfter).all(cabinetId, number, limit) as OutboxRow[];
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
  const last = orm.prepared(SQL.findQueued).get(cabinetId, number) as { hlc: string } | undefined;
  const parsed = last ? parseHlc(last.hlc) : undefined;
  const clock = later(
    { time: connection.clockTime, counter: connection.clockCounter },
    parsed ? { time: parsed.time, counter: parsed.counter } : { time: 0, counter: 0 },
  );
  orm.prepared(SQL.acknowledge).run(number, now, number, clock.time, clock.counter, parsed?.time ?? 0, cabinetId);
  orm.prepared(SQL.deleteOutboxThrough).run(cabinetId, number);
}

export interface FieldClocks {
  clocks: Record<string, string>;
  erased: boolean;
}

export function findFieldClocks(orm: Orm, cabinetId: string, kind: string, recordId: string): FieldClocks | undefined {
  const row = orm.prepared(SQL.findFieldClocks).get(cabinetId, kind, recordId) as { clocks: string; erased: number } | undefined;
  return row ? { clocks: JSON.parse(row.clocks) as Record<string, string>, erased: row.erased === 1 } : undefined;
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
  orm.prepared(SQL.mergeFieldClocks).run(cabinetId, kind, recordId, JSON.stringify(clocks), erased ? 1 : 0);
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

export function stageBlob(orm: Orm, cabinetId: string, sha256: string, bytes: Buffer, now: number): void {
  orm.insert(syncStagedBlobs).values({ cabinetId, sha256, bytes, stagedAt: now }).onConflictDoNothing().run();
}

export function readStagedBlob(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined {
  return orm
    .select({ bytes: syncStagedBlobs.bytes })
    .from(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), eq(syncStagedBlobs.sha256, sha256)))
    .get()?.bytes;
}

export function hasStagedBlob(orm: Orm, cabinetId: string, sha256: string): boolean {
  return (
    orm
      .select({ sha256: syncStagedBlobs.sha256 })
      .from(syncStagedBlobs)
      .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), eq(syncStagedBlobs.sha256, sha256)))
      .get() !== undefined
  );
}

/** Deletes the staged PDFs of a page once it is applied. */
export function clearStagedBlobs(orm: Orm, cabinetId: string, sha256s: readonly string[]): void {
  if (sha256s.length === 0) return;
  orm
    .delete(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), inArray(syncStagedBlobs.sha256, [...sha256s])))
    .run();
}

/** Deletes what a crash left staged: PDFs older than any pull still applying them (the service's and a CLI's may run at once). */
export function clearStaleStagedBlobs(orm: Orm, cabinetId: string, before: number): void {
  orm
    .delete(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), lt(syncStagedBlobs.stagedAt, before)))
    .run();
}
