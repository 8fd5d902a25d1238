import type { Orm } from '../platform/db/open.js';
import type { ApplicableChange } from './apply.js';
import type { Refusal } from './synced-table.js';
import * as conflictsStore from './conflicts-store.js';

/** Set-aside changes kept per cabinet: the newest, so that a hostile device cannot fill the disk. */
const CONFLICTS_KEPT = 1000;
/**
 * Changes of a newer version kept per cabinet, to be applied after an update: many more, since
 * dropping one loses data (an install left behind while the others create records of a new kind);
 * they keep a short excerpt only, being fetched again whole from the hub.
 */
const NOT_UNDERSTOOD_KEPT = 100_000;
/** What a person is shown of a set-aside change's fields (a pulled one is kept only so much). */
export const FIELDS_SHOWN_CHARS = 4096;
const NOT_UNDERSTOOD_FIELDS_CHARS = 300;

/**
 * Sets a pulled change aside, with an excerpt of its fields for a person to read; seq keys it, so
 * setting it aside again only updates why. A record's state (its fields carry their own stamps) is
 * marked so, to be tried again as the record's state.
 */
export function setAsideChange(orm: Orm, cabinetId: string, change: ApplicableChange, refusal: Refusal, now: number): void {
  const fields = JSON.stringify(change.fields);
  const keep = refusal.reason === 'not_understood' ? NOT_UNDERSTOOD_FIELDS_CHARS : FIELDS_SHOWN_CHARS;
  conflictsStore.insertConflict(orm, {
    cabinetId,
    seq: change.seq,
    deviceId: change.device_id,
    kind: change.kind,
    recordId: change.record_id,
    op: change.op,
    hlc: change.hlc,
    fields: fields.length > keep ? `${fields.slice(0, keep)}…` : fields,
    reason: refusal.reason,
    message: refusal.message.slice(0, 500),
    notUnderstood: refusal.notUnderstood ? JSON.stringify(refusal.notUnderstood) : null,
    fromState: change.stamps !== undefined,
    setAsideAt: now,
  });
}

/** Keeps the newest set-aside changes of each sort, after a page set some aside. */
export function trimSetAside(orm: Orm, cabinetId: string): void {
  conflictsStore.trimConflicts(orm, cabinetId, CONFLICTS_KEPT, NOT_UNDERSTOOD_KEPT);
}
