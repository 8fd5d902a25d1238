import { MAX_CLOCK_AHEAD_MS, MAX_PUSH_BYTES, type SyncChange } from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import { tick, type ClockState } from './hlc.js';
import type { Deps } from '../deps.js';
import type { RecordsByKind } from './apply.js';
import { HubRefusal, type HubClient } from './hub-client.js';
import { HubEpochChanged, resyncWithHub } from './resync.js';
import * as refused from './store-refused.js';
import * as store from './store.js';

/** Changes sent per push at most (the hub takes 1 to 1000, within MAX_PUSH_BYTES). */
export const PUSH_BATCH = 1000;

export interface PushContext {
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges' | 'keys'>;
  records: RecordsByKind;
  client: HubClient;
}

function toWire(row: store.OutboxRow): SyncChange {
  return {
    number: row.number,
    kind: row.kind as SyncChange['kind'],
    record_id: row.recordId,
    op: row.op,
    hlc: row.hlc,
    fields: JSON.parse(row.fields) as Record<string, unknown>,
  };
}

/** A batch stays well under the hub's body limit, whatever the size of its records (at least one change). */
function withinBytes(rows: store.OutboxRow[]): store.OutboxRow[] {
  let bytes = 0;
  const kept: store.OutboxRow[] = [];
  for (const row of rows) {
    bytes += row.fields.length * 3 + 300;
    if (kept.length > 0 && bytes > MAX_PUSH_BYTES / 2) break;
    kept.push(row);
  }
  return kept;
}

/** PDFs the batch names go first, so that the hub never serves a quote whose PDF it lacks. */
async function uploadBlobs(context: PushContext, cabinetId: string, changes: SyncChange[]): Promise<void> {
  const sent = new Set<string>();
  for (const change of changes) {
    const adapter = context.records.get(change.kind);
    for (const sha of adapter?.blobsOf?.(change.fields) ?? []) {
      if (sent.has(sha)) continue;
      sent.add(sha);
      const bytes = adapter?.readBlob?.(context.deps.db.orm, cabinetId, sha);
      if (bytes) await context.client.putBlob(sha, bytes);
    }
  }
}

/**
 * The hub refused changes stamped while this machine's clock was ahead. Once the clock is right
 * again (the hub's time in the refusal says so), the queued changes get new stamps, in their order
 * and after everything pulled from other devices and everything of this device the hub holds (a
 * device's stamps only grow): nobody has seen the old ones, and without this
 * they would wait until the hub's clock caught up with them (a clock a year ahead: a year). While
 * the clock is still wrong, nothing changes and the refusal stands.
 */
function restampIfClockRight(context: PushContext, cabinetId: string, refusal: HubRefusal): void {
  const hubTime = Date.parse(String((refusal.details as { hub_time?: unknown } | undefined)?.hub_time));
  const now = context.deps.clock.now();
  if (!Number.isFinite(hubTime) || now - hubTime > MAX_CLOCK_AHEAD_MS / 2) return;
  const { orm } = context.deps.db;
  context.deps.db.immediateTransaction(() => {
    const connection = store.findConnection(orm, cabinetId);
    if (!connection) return;
    let clock: ClockState = { time: Math.max(now, connection.remoteClockTime + 1, connection.acknowledgedClockTime + 1), counter: 0 };
    for (const row of store.readOutboxAfter(orm, cabinetId, 0, Number.MAX_SAFE_INTEGER)) {
      const hlc = formatHlc({ time: clock.time, counter: clock.counter, device: connection.deviceId });
      store.restampChange(orm, cabinetId, row, hlc);
      clock = tick(clock, now);
    }
    store.updateConnection(orm, cabinetId, { clockTime: clock.time, clockCounter: clock.counter });
  });
}

/** Batches on their way at once: the hub parses and checks one while PostgreSQL stores the one before. */
const IN_FLIGHT = 2;

type Sent = { acknowledged: number } | { error: unknown };

/** One batch to the hub, its PDFs first. Settles, never rejects: the caller looks at each in order. */
async function send(context: PushContext, cabinetId: string, changes: SyncChange[]): Promise<Sent> {
  try {
    await uploadBlobs(context, cabinetId, changes);
    return { acknowledged: (await context.client.push({ changes })).acknowledged_number };
  } catch (error) {
    return { error };
  }
}

/** Forgets the changes up to the hub's acknowledgement, and only those. */
function forgetAcknowledged(context: PushContext, cabinetId: string, acknowledged: number): void {
  const { orm } = context.deps.db;
  context.deps.db.immediateTransaction(() => store.forgetThrough(orm, cabinetId, acknowledged, context.deps.clock.now()));
}

/** The path of a change's content in a push's validation issues: `body.changes.<index>` and below, its number aside. */
const CHANGE_CONTENT = /^body\.changes\.(\d+)(?:\.(?!number$).*)?$/;

/**
 * The changes of a batch that the hub refused for what they hold — a value it cannot store, a rule
 * of the protocol, a size over its limit — by number; none when the refusal is about the batch, this
 * device or this moment. Those changes would be refused again at every try, and the queue behind them with them.
 */
function refusedChanges(err: HubRefusal, batch: readonly SyncChange[]): number[] {
  const details = err.details as { number?: unknown } | { path?: unknown }[] | undefined;
  if (err.code === 'payload_too_large' && details && !Array.isArray(details) && typeof details.number === 'number') return [details.number];
  // A body over the hub's limit, of one change alone: that change can never go.
  if (err.code === 'payload_too_large' && batch.length === 1 && batch[0]) return [batch[0].number];
  if (err.code !== 'validation_error' || !Array.isArray(details) || details.length === 0) return [];
  const numbers = details.map((issue) => {
    const index = typeof issue.path === 'string' ? CHANGE_CONTENT.exec(issue.path)?.[1] : undefined;
    return index === undefined ? undefined : batch[Number(index)]?.number;
  });
  // Every issue must name a change's content: anything else is about the batch as a whole.
  return numbers.every((number) => number !== undefined) ? [...new Set(numbers as number[])] : [];
}

/**
 * What a refusal of the oldest batch in flight means for the queue: a hub or an install that went
 * back in time (restored from a backup) starts a resync, and the push ends there (the queue is
 * pushed again at once); any other refusal is thrown.
 */
function onRefused(context: PushContext, cabinetId: string, batch: readonly SyncChange[], err: unknown): void {
  if (err instanceof HubEpochChanged)
    return resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_restored', epoch: err.epoch, reupload: true });
  if (!(err instanceof HubRefusal)) throw err;
  const poisoned = refusedChanges(err, batch);
  if (poisoned.length > 0) {
    const { db, clock } = context.deps;
    return db.immediateTransaction(() =>
      refused.setAsideRefused(db.orm, cabinetId, poisoned, { code: err.code, message: err.message, at: clock.now() }),
    );
  }
  if (err.code === 'clock_skew') restampIfClockRight(context, cabinetId, err);
  const expected = Number((err.details as { expected_number?: unknown } | undefined)?.expected_number);
  // The oldest change queued here is past what the hub holds: the hub lost changes it acknowledged.
  if (err.code === 'sync_gap' && Number.isInteger(expected) && expected >= 1) {
    return resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_lacks_changes', renumberFrom: expected, reupload: true });
  }
  // The hub holds other changes under these numbers: this install was restored from a backup.
  if (err.code === 'device_rewound' && Number.isInteger(expected) && expected >= 1) {
    return resyncWithHub(context.deps, context.records, cabinetId, { reason: 'install_restored', renumberFrom: expected, reupload: false });
  }
  throw err;
}

/**
 * Sends everything queued, oldest first, and forgets what the hub acknowledged, and only that: an
 * outbox entry is deleted after the hub's commit, never before. Two batches are on their way at
 * once, so that a large queue (connect's upload) keeps the hub's PostgreSQL busy rather than
 * waiting for each round trip. The hub stores a device's batches one at a time, so a batch that
 * overtook the one before it is refused as a gap, and sent again once that one is stored. Returns how many changes were sent;
 * `progress` is told after each acknowledgement.
 */
export async function pushQueued(context: PushContext, cabinetId: string, progress?: (sent: number) => void): Promise<number> {
  const inFlight: { changes: SyncChange[]; sent: Promise<Sent>; failed?: boolean }[] = [];
  let readThrough = 0;
  let sent = 0;
  const fill = () => {
    // Behind a batch already refused (to be sent again), another one would be refused too.
    while (inFlight.length < IN_FLIGHT && !inFlight.some((batch) => batch.failed)) {
      const changes = withinBytes(store.readOutboxAfter(context.deps.db.orm, cabinetId, readThrough, PUSH_BATCH)).map(toWire);
      const last = changes[changes.length - 1];
      if (last === undefined) return;
      readThrough = last.number;
      const batch: (typeof inFlight)[number] = { changes, sent: send(context, cabinetId, changes) };
      void batch.sent.then((outcome) => {
        batch.failed = 'error' in outcome;
      });
      inFlight.push(batch);
    }
  };
  fill();
  for (let batch = inFlight.shift(); batch !== undefined; batch = inFlight.shift()) {
    let outcome = await batch.sent;
    const overtook = 'error' in outcome && outcome.error instanceof HubRefusal && outcome.error.code === 'sync_gap' && sent > 0;
    // Sent while the batch before was on its way, and stored on the hub after that one only: again, now.
    if (overtook) outcome = await send(context, cabinetId, batch.changes);
    if ('error' in outcome) {
      // A later batch may still have been stored (this one was, and only its answer was lost): an
      // acknowledgement covers every change up to its number.
      const later = await Promise.all(inFlight.map((next) => next.sent));
      const acknowledged = Math.max(0, ...later.map((next) => ('acknowledged' in next ? next.acknowledged : 0)));
      if (acknowledged > 0) forgetAcknowledged(context, cabinetId, acknowledged);
      onRefused(context, cabinetId, batch.changes, outcome.error);
      return sent;
    }
    forgetAcknowledged(context, cabinetId, outcome.acknowledged);
    sent += batch.changes.length;
    progress?.(sent);
    fill();
  }
  return sent;
}
