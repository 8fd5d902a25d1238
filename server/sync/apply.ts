import type { PulledChange, SyncedKind } from '../../shared/sync-protocol.js';
import type { Orm } from '../db/open.js';
import * as store from './store.js';
import type { ApplyContext, Refusal, SyncedRecords } from './synced-table.js';

export type RecordsByKind = ReadonlyMap<SyncedKind, SyncedRecords>;

/**
 * Applies another device's change to this install, field by field: a field takes the change's value
 * only if the change's clock is later than the clock of the value it holds (last writer wins per
 * field, so two people editing different fields of one record both keep their edit). An erasure
 * wins over every edit, earlier or later: once erased, a record takes no more values. A change its
 * kind's rules refuse is not applied: the refusal is returned, for the caller to set it aside.
 * Runs inside the pull's transaction, and never emits an event or a change of its own.
 */
export function applyChange(orm: Orm, cabinetId: string, records: RecordsByKind, change: PulledChange, context: ApplyContext): Refusal | 'applied' | 'skipped' {
  // A kind this version does not know (a newer install's) is skipped; its fields stay on the hub.
  const adapter = records.get(change.kind);
  if (!adapter) return 'skipped';
  const held = store.findFieldClocks(orm, cabinetId, change.kind, change.record_id);
  if (held?.erased) return 'skipped';
  // An erasure a hub emptied (older hubs emptied every earlier change of an erased record): a later
  // erasure of the record follows it, and it carries nothing to apply.
  if (change.op === 'erase' && Object.keys(change.fields).length === 0) return 'skipped';
  const refusal = adapter.refusal(orm, cabinetId, { op: change.op, recordId: change.record_id, fields: change.fields });
  if (refusal) return refusal;
  if (change.op === 'erase') {
    adapter.write(orm, cabinetId, change.record_id, change.fields, context);
    store.mergeFieldClocks(orm, cabinetId, change.kind, change.record_id, clocksOf(Object.keys(change.fields), change.hlc), true);
    adapter.afterErase?.(context, cabinetId, change.record_id);
    return 'applied';
  }
  const winning = Object.entries(change.fields).filter(([field]) => {
    const clock = held?.clocks[field];
    // No clock: the value was never held here, or was created here (or uploaded at connect) and not
    // changed since, and then any other device's change to it is later (capture.ts).
    return clock === undefined || change.hlc > clock;
  });
  if (winning.length === 0) return 'skipped';
  const fields = Object.fromEntries(winning);
  if (!adapter.write(orm, cabinetId, change.record_id, fields, context)) return 'skipped';
  store.mergeFieldClocks(orm, cabinetId, change.kind, change.record_id, clocksOf(Object.keys(fields), change.hlc), false);
  return 'applied';
}

function clocksOf(fields: string[], hlc: string): Record<string, string> {
  return Object.fromEntries(fields.map((field) => [field, hlc]));
}
