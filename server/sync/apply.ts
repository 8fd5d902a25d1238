import type { PulledChange } from '../../shared/sync-protocol.js';
import type { RecordState } from '../../shared/sync-state.js';
import type { Orm } from '../platform/db/open.js';
import * as store from './store.js';
import type { ApplyContext, Refusal, SyncedRecords } from './synced-table.js';

export type RecordsByKind = ReadonlyMap<string, SyncedRecords>;

/**
 * A pulled change, or a record's state read from the hub, whose fields each carry their own stamp
 * (`stamps`; the change's `hlc` is the latest of them): applied field by field the same way.
 */
export type ApplicableChange = PulledChange & { stamps?: Readonly<Record<string, string>> };

/** A record's state as the change that applies it: each field with its own stamp, the latest as the change's clock. */
export function stateChange(record: RecordState): ApplicableChange {
  const hlc = Object.values(record.stamps).reduce((max, stamp) => (stamp > max ? stamp : max), '');
  return {
    seq: record.seq,
    device_id: record.device_id,
    kind: record.kind,
    record_id: record.record_id,
    op: record.erased ? 'erase' : 'upsert',
    hlc: hlc || '000000000000000-000000-0',
    fields: record.fields,
    stamps: record.stamps,
  };
}

const stampOf = (change: ApplicableChange, field: string): string => change.stamps?.[field] ?? change.hlc;

/**
 * Applies another device's change to this install, field by field: a field takes the change's value
 * only if the change's clock is later than the clock of the value it holds (last writer wins per
 * field, so two people editing different fields of one record both keep their edit). An erasure
 * wins over every edit, earlier or later: once erased, a record takes no more values. A change its
 * kind's rules refuse is not applied: the refusal is returned, for the caller to set it aside; one
 * its kind drops (skips: data an erasure removed) is neither applied nor set aside.
 * Runs inside the pull's transaction, and never emits an event or a change of its own.
 */
export function applyChange(
  orm: Orm,
  cabinetId: string,
  records: RecordsByKind,
  change: ApplicableChange,
  context: ApplyContext,
): Refusal | 'applied' | 'skipped' {
  // A kind this version does not know (a newer install's) is kept aside, and applied once it is updated.
  const adapter = records.get(change.kind);
  if (!adapter)
    return {
      reason: 'not_understood',
      message: `this version of Courtier does not know records of kind ${change.kind}: applied once it is updated`,
      notUnderstood: [],
    };
  const held = store.findFieldClocks(orm, cabinetId, change.kind, change.record_id);
  // Erased, the record takes no more edits; two erasures (made offline on two installs) merge their tombstones.
  if (held?.erased && change.op !== 'erase') return 'skipped';
  // An erasure a hub emptied (older hubs emptied every earlier change of an erased record): a later
  // erasure of the record follows it, and it carries nothing to apply.
  if (change.op === 'erase' && Object.keys(change.fields).length === 0) return 'skipped';
  const recordChange = { op: change.op, recordId: change.record_id, fields: change.fields, deviceId: change.device_id };
  if (adapter.skips?.(context, cabinetId, recordChange)) return 'skipped';
  const refusal = adapter.refusal(orm, cabinetId, recordChange);
  if (refusal) return refusal;
  // Fields of a newer install have no column here: never clocked (a clock without its value would
  // make the value lose once this install can store it), and the change is kept for then.
  const unknown = adapter.unknownFields(change.fields);
  const known = Object.keys(change.fields).filter((field) => !unknown.includes(field));
  const outcome =
    change.op === 'erase' && !held?.erased
      ? erase(orm, cabinetId, adapter, change, known, context)
      : merge(orm, cabinetId, adapter, change, known, held, context);
  if (unknown.length === 0) return outcome;
  return {
    reason: 'not_understood',
    message: `this version of Courtier does not know the field(s) ${unknown.join(', ')} of a ${change.kind}: the others were applied, these will be once it is updated`,
    notUnderstood: unknown,
  };
}

function erase(
  orm: Orm,
  cabinetId: string,
  adapter: SyncedRecords,
  change: ApplicableChange,
  known: string[],
  context: ApplyContext,
): 'applied' {
  adapter.beforeErase?.(context, cabinetId, change.record_id);
  adapter.write(orm, cabinetId, change.record_id, change.fields, context);
  store.mergeFieldClocks(orm, cabinetId, change.kind, change.record_id, clocksOf(known, change), true);
  adapter.afterErase?.(context, cabinetId, change.record_id);
  return 'applied';
}

function merge(
  orm: Orm,
  cabinetId: string,
  adapter: SyncedRecords,
  change: ApplicableChange,
  known: string[],
  held: store.FieldClocks | undefined,
  context: ApplyContext,
): 'applied' | 'skipped' {
  const winning = known.filter((field) => {
    const clock = held?.clocks[field];
    // No clock: the value was never held here, or was created here (or uploaded at connect) and not
    // changed since, and then any other device's change to it is later (capture.ts).
    return clock === undefined || stampOf(change, field) > clock;
  });
  if (winning.length === 0) return 'skipped';
  const fields = Object.fromEntries(winning.map((field) => [field, change.fields[field]]));
  if (!adapter.write(orm, cabinetId, change.record_id, fields, { ...context, origin: { deviceId: change.device_id, seq: change.seq } }))
    return 'skipped';
  store.mergeFieldClocks(orm, cabinetId, change.kind, change.record_id, clocksOf(winning, change), false);
  return 'applied';
}

function clocksOf(fields: string[], change: ApplicableChange): Record<string, string> {
  return Object.fromEntries(fields.map((field) => [field, stampOf(change, field)]));
}
