import type { SyncConflict, SyncConflictRetry, SyncRefusedChange } from '../../shared/console-sync.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import type { RecordsByKind } from './apply.js';
import type { HubFetch } from './hub-client.js';
import { retrySetAside, type RetryOutcome } from './retry-set-aside.js';
import { FIELDS_SHOWN_CHARS } from './set-aside.js';
import { connectionOrThrow, hubClientFor, type SyncDeps } from './service.js';
import * as refused from './store-refused.js';
import * as conflictsStore from './conflicts-store.js';

/** What a person sees and does of the changes set aside: pulled ones this install refused, and its own the hub refused. */

/**
 * Forgets the set-aside changes that name a record, pulled ones and this install's own that the hub
 * refused (an erased client's data must not stay in them).
 */
export function forgetSetAsideAbout(deps: Pick<Deps, 'db'>, cabinetId: string, recordId: string): void {
  conflictsStore.deleteConflictsNaming(deps.db.orm, cabinetId, recordId);
  refused.deleteRefusedNaming(deps.db.orm, cabinetId, recordId);
}

/** Forgets a set-aside change for good: a person looked at it and decided it must not apply. */
export function discardSyncConflict(deps: SyncDeps, cabinetId: string, seq: number, actor: AuditActor): void {
  connectionOrThrow(deps, cabinetId);
  deps.db.immediateTransaction(() => {
    const conflict = conflictsStore.findConflict(deps.db.orm, cabinetId, seq);
    if (!conflict) throw new ApiError('not_found', `No change set aside with seq ${seq} in this cabinet.`);
    conflictsStore.deleteConflict(deps.db.orm, cabinetId, seq);
    recordAudit(deps, {
      cabinetId,
      action: 'sync.conflict_discarded',
      actor,
      target: conflict.recordId,
      details: { seq, kind: conflict.kind, reason: conflict.reason, device_id: conflict.deviceId },
    });
  });
}

/**
 * Tries set-aside changes again (all of them without seqs), fetched whole from the hub: after an
 * update, or once what refused them changed. Returns what became of each.
 */
export async function retrySyncConflicts(
  deps: Deps,
  cabinetId: string,
  seqs: readonly number[] | undefined,
  io: { fetch: HubFetch; records: RecordsByKind },
  actor: AuditActor,
): Promise<SyncConflictRetry> {
  const connection = connectionOrThrow(deps, cabinetId);
  const wanted = seqs ?? conflictsStore.listConflicts(deps.db.orm, cabinetId, Number.MAX_SAFE_INTEGER).map((conflict) => conflict.seq);
  for (const seq of seqs ?? [])
    if (!conflictsStore.findConflict(deps.db.orm, cabinetId, seq))
      throw new ApiError('not_found', `No change set aside with seq ${seq} in this cabinet.`);
  const outcomes = await retrySetAside({ deps, records: io.records, client: hubClientFor(deps, connection, io.fetch) }, cabinetId, wanted);
  const seqsOf = (outcome: RetryOutcome) => [...outcomes].filter(([, o]) => o === outcome).map(([seq]) => seq);
  const result = { applied: seqsOf('applied'), still_set_aside: seqsOf('set_aside'), no_longer_on_hub: seqsOf('gone') };
  recordAudit(deps, {
    cabinetId,
    action: 'sync.conflicts_retried',
    actor,
    details: {
      applied: result.applied.length,
      still_set_aside: result.still_set_aside.length,
      no_longer_on_hub: result.no_longer_on_hub.length,
    },
  });
  return result;
}

/** The changes made here that the hub refused, newest first: whole (the CLI's JSON), or their fields cut as a page shows a set-aside change's. */
export function listRefusedByHub(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  limit: number,
  fields: 'whole' | 'excerpt',
): SyncRefusedChange[] {
  return refused.listRefused(deps.db.orm, cabinetId, limit).map((row) => ({
    kind: row.kind,
    record_id: row.recordId,
    op: row.op,
    hlc: row.hlc,
    fields: fields === 'whole' ? row.fields : row.fields.slice(0, FIELDS_SHOWN_CHARS),
    code: row.code,
    message: row.message,
    refused_at: toIso(row.refusedAt),
  }));
}

const refusedNotFound = (hlc: string) => new ApiError('not_found', `No change made here and refused by the hub has the stamp ${hlc}.`);

/** Forgets a change the hub refused, for good: a person decided the other installs need not get it. */
export function discardRefusedByHub(deps: SyncDeps, cabinetId: string, hlc: string, actor: AuditActor): void {
  connectionOrThrow(deps, cabinetId);
  deps.db.immediateTransaction(() => {
    const row = refused.findRefused(deps.db.orm, cabinetId, hlc);
    if (!row) throw refusedNotFound(hlc);
    refused.deleteRefused(deps.db.orm, cabinetId, hlc);
    recordAudit(deps, {
      cabinetId,
      action: 'sync.refused_discarded',
      actor,
      target: row.recordId,
      details: { hlc, kind: row.kind, code: row.code },
    });
  });
}

/**
 * Sends changes the hub refused again (all of them without stamps): once the hub was updated (a
 * kind it did not know), or what it refused changed. They go back at the end of the queue with their
 * own stamps, and come back to the list if the hub refuses them again.
 */
export function resendRefusedByHub(
  deps: SyncDeps,
  cabinetId: string,
  hlcs: readonly string[] | undefined,
  actor: AuditActor,
): { queued: number } {
  connectionOrThrow(deps, cabinetId);
  const queued = deps.db.immediateTransaction(() => {
    for (const hlc of hlcs ?? []) if (!refused.findRefused(deps.db.orm, cabinetId, hlc)) throw refusedNotFound(hlc);
    const count = refused.requeueRefused(deps.db.orm, cabinetId, hlcs);
    recordAudit(deps, { cabinetId, action: 'sync.refused_resent', actor, details: { queued: count } });
    return count;
  });
  deps.syncChanges.notify();
  return { queued };
}

/** The changes this install set aside, newest first. */
export function listSyncConflicts(deps: Pick<Deps, 'db'>, cabinetId: string, limit: number): SyncConflict[] {
  return conflictsStore.listConflicts(deps.db.orm, cabinetId, limit).map((row) => ({
    seq: row.seq,
    device_id: row.deviceId,
    kind: row.kind,
    record_id: row.recordId,
    op: row.op,
    hlc: row.hlc,
    fields: row.fields,
    reason: row.reason as SyncConflict['reason'],
    message: row.message,
    set_aside_at: toIso(row.setAsideAt),
  }));
}
