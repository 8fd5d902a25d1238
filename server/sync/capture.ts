import { formatHlc, type SyncedKind } from '../../shared/sync-protocol.js';
import type { Deps } from '../deps.js';
import { tick } from './hlc.js';
import * as store from './store.js';

export type ChangeFields = Record<string, unknown>;

/**
 * Queues a change of a cabinet's record for the hub, when the cabinet syncs. Call it inside the
 * transaction of the change: the change and its outbox entry commit together or not at all, so a
 * crash can neither lose a change nor queue one that did not happen. The change gets the device's
 * next number and a tick of its hybrid clock, and its fields that clock (last writer wins per field).
 */
export function recordChange(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  change: { kind: SyncedKind; recordId: string; op?: 'upsert' | 'erase'; fields: ChangeFields },
): void {
  const orm = deps.db.orm;
  const connection = store.findConnection(orm, cabinetId);
  if (!connection) return;
  const clock = tick({ time: connection.clockTime, counter: connection.clockCounter }, deps.clock.now());
  const hlc = formatHlc({ ...clock, device: connection.deviceId });
  const op = change.op ?? 'upsert';
  store.appendOutbox(orm, { cabinetId, number: connection.nextNumber, kind: change.kind, recordId: change.recordId, op, hlc, fields: JSON.stringify(change.fields) });
  store.advanceConnection(orm, cabinetId, { nextNumber: connection.nextNumber + 1, clockTime: clock.time, clockCounter: clock.counter });
  store.mergeFieldClocks(orm, cabinetId, change.kind, change.recordId, Object.fromEntries(Object.keys(change.fields).map((field) => [field, hlc])), op === 'erase');
  deps.syncChanges.notify();
}
