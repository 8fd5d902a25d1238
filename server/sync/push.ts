import { formatHlc, MAX_CLOCK_AHEAD_MS, MAX_PUSH_BYTES, type SyncChange } from '../../shared/sync-protocol.js';
import { tick, type ClockState } from './hlc.js';
import type { Deps } from '../deps.js';
import type { RecordsByKind } from './apply.js';
import { HubRefusal, type HubClient } from './hub-client.js';
import * as store from './store.js';

/** Changes sent per push at most (the hub takes 1 to 1000, within MAX_PUSH_BYTES). */
export const PUSH_BATCH = 1000;

export interface PushContext {
  deps: Pick<Deps, 'db' | 'clock'>;
  records: RecordsByKind;
  client: HubClient;
}

/** The hub has lost changes this install already forgot (it was restored from an older backup). */
export class HubMissingChanges extends Error {
  override name = 'HubMissingChanges';
}

function toWire(row: store.OutboxRow): SyncChange {
  return { number: row.number, kind: row.kind as SyncChange['kind'], record_id: row.recordId, op: row.op, hlc: row.hlc, fields: JSON.parse(row.fields) as Record<string, unknown> };
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
 * and after everything pulled from other devices: nobody has seen the old ones, and without this
 * they would wait until the hub's clock caught up with them (a clock a year ahead: a year). While
 * the clock is still wrong, nothing changes and the refusal stands.
 */
function restampIfClockRight(context: PushContext, cabinetId: string, refusal: HubRefusal): void {
  const hubTime = Date.parse(String((refusal.details as { hub_time?: unknown } | undefined)?.hub_time));
  const now = context.deps.clock.now();
  if (!Number.isFinite(hubTime) || now - hubTime > MAX_CLOCK_AHEAD_MS / 2) return;
  const { orm, sqlite } = context.deps.db;
  sqlite
    .transaction(() => {
      const connection = store.findConnection(orm, cabinetId);
      if (!connection) return;
      let clock: ClockState = { time: Math.max(now, connection.remoteClockTime + 1), counter: 0 };
      for (const row of store.readOutbox(orm, cabinetId, Number.MAX_SAFE_INTEGER)) {
        const hlc = formatHlc({ ...clock, device: connection.deviceId });
        store.restampChange(orm, cabinetId, row, hlc);
        clock = tick(clock, now);
      }
      store.updateConnection(orm, cabinetId, { clockTime: clock.time, clockCounter: clock.counter });
    })
    .immediate();
}

/**
 * Sends the oldest queued changes and forgets those the hub acknowledged, and only those: the
 * outbox entries are deleted after the hub's commit, never before. Returns how many were sent.
 */
export async function pushOnce(context: PushContext, cabinetId: string): Promise<number> {
  const { orm, sqlite } = context.deps.db;
  const changes = withinBytes(store.readOutbox(orm, cabinetId, PUSH_BATCH)).map(toWire);
  const first = changes[0];
  if (first === undefined) return 0;
  await uploadBlobs(context, cabinetId, changes);
  let acknowledged: number;
  try {
    acknowledged = (await context.client.push({ changes })).acknowledged_number;
  } catch (err) {
    if (err instanceof HubRefusal && err.code === 'clock_skew') restampIfClockRight(context, cabinetId, err);
    if (!(err instanceof HubRefusal) || err.code !== 'sync_gap') throw err;
    const expected = (err.details as { expected_number?: unknown } | undefined)?.expected_number;
    if (typeof expected !== 'number' || expected < first.number) {
      throw new HubMissingChanges(`the hub lacks changes of this install before number ${first.number} (it expects ${String(expected)}); it may have been restored from an older backup: disconnect and connect again`);
    }
    // The hub already holds the changes before `expected` (an acknowledgement that never arrived).
    acknowledged = expected - 1;
  }
  sqlite
    .transaction(() => {
      store.deleteOutboxThrough(orm, cabinetId, acknowledged);
      const connection = store.findConnection(orm, cabinetId);
      if (connection) store.updateConnection(orm, cabinetId, { acknowledgedNumber: Math.max(connection.acknowledgedNumber, acknowledged), lastPushAt: context.deps.clock.now() });
    })
    .immediate();
  return changes.length;
}
