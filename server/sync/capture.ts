import type { SyncedKind } from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import type { Deps } from '../deps.js';
import { tick } from './hlc.js';
import * as store from './store.js';

export type ChangeFields = Record<string, unknown>;

/**
 * How a record changed. A creation writes no field clocks: no other device can know the record
 * before it pulls this very change, so any change another device makes to it comes later (its
 * clock moved past this one when it pulled it) and wins, as apply.ts lets a field without a clock
 * be taken. Its first edit here writes the clocks of the fields it changes.
 */
export type ChangeKind = 'create' | 'update' | 'erase';

/**
 * Queues a change of a cabinet's record for the hub, when the cabinet syncs. Call it inside the
 * transaction of the change: the change and its outbox entry commit together or not at all, so a
 * crash can neither lose a change nor queue one that did not happen. The change gets the device's
 * next number and a tick of its hybrid clock, and its fields that clock (last writer wins per field).
 * Those live in the queue's newest change (store.captureState), so a capture writes one row.
 * The fields are made only then: a cabinet that does not sync pays one lookup per change.
 */
export function recordChange(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  change: { kind: SyncedKind; recordId: string; how?: ChangeKind; fields: () => ChangeFields },
): void {
  const orm = deps.db.orm;
  const state = store.captureState(orm, cabinetId);
  if (!state) return;
  const fields = change.fields();
  // A write of local columns only (a lease, a file on this install) is nobody else's.
  if (Object.keys(fields).length === 0) return;
  const clock = tick(state.clock, deps.clock.now());
  const hlc = formatHlc({ time: clock.time, counter: clock.counter, device: state.deviceId });
  const how = change.how ?? 'update';
  const op = how === 'erase' ? 'erase' : 'upsert';
  if (state.detached) {
    // Disconnected: nothing is queued, but every field (a creation's too) keeps when it changed, for a reconnect.
    store.mergeFieldClocks(
      orm,
      cabinetId,
      change.kind,
      change.recordId,
      Object.fromEntries(Object.keys(fields).map((field) => [field, hlc])),
      how === 'erase',
    );
    store.advanceDetachedClock(orm, cabinetId, clock);
    return;
  }
  // The row carries the new number and clock: captureState reads them from it next time.
  store.appendOutbox(orm, {
    cabinetId,
    number: state.nextNumber,
    kind: change.kind,
    recordId: change.recordId,
    op,
    hlc,
    fields: JSON.stringify(fields),
  });
  if (how !== 'create') {
    store.mergeFieldClocks(
      orm,
      cabinetId,
      change.kind,
      change.recordId,
      Object.fromEntries(Object.keys(fields).map((field) => [field, hlc])),
      how === 'erase',
    );
  }
  deps.syncChanges.notify();
}
