import { getTableColumns } from 'drizzle-orm';
import { z } from 'zod';
import { jobStatusSchema, TERMINAL_STATUSES } from '../../shared/automation.js';
import { JOB_LOCAL_FIELDS } from '../../shared/sync-rules.js';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import type { Deps } from '../deps.js';
import { creditsConsumed } from '../wallet/service.js';
import {
  anyJsonObject,
  storedCode,
  MAX_PORTAL_TEXT,
  storedBoolean,
  storedCount,
  storedId,
  storedJson,
  storedSha256,
  storedText,
  storedTime,
} from '../sync/stored-values.js';
import { syncedTable } from '../sync/synced-table.js';
import { jobs } from './schema.js';
import * as store from './store.js';

/** A job's row as it travels, at any status. */
const jobRow = z.object({
  compagnie: storedCode,
  produit: storedCode,
  dic_data: storedJson(anyJsonObject, 'a JSON object'),
  request_hash: storedSha256,
  devis_id: storedId,
  status: jobStatusSchema,
  progress_step: storedText(1000),
  progress_percent: z.int().min(0).max(100),
  cost_credits: storedCount,
  credits_consumed: z.int().min(-1_000_000).max(1_000_000).nullable(),
  result_tarif_cents: storedCount.nullable(),
  // What a portal said, as the robot read it: its length is the insurer's.
  result_suspens: storedText(MAX_PORTAL_TEXT).nullable(),
  error_code: storedText(100).nullable(),
  error_message: storedText(MAX_PORTAL_TEXT).nullable(),
  error_technical: storedBoolean.nullable(),
  // A robot step's name (portal_changed); absent from a job of an install older than the column.
  error_step: storedText(200).nullish(),
  submitted: storedBoolean,
  attempts: storedCount,
  mfa_requested_at: storedTime.nullable(),
  mfa_expires_at: storedTime.nullable(),
  environment: z.enum(API_KEY_ENVIRONMENTS),
  // Empty on a job enqueued before the column existed.
  robot_compagnie: storedCode.or(z.literal('')),
  // An adapter package's version (its manifest's, at most 64 characters); absent from a job of an install older than the column.
  adapter_version: z.string().min(1).max(64).nullish(),
  created_at: storedTime,
  updated_at: storedTime,
  finished_at: storedTime.nullable(),
});

/** The columns of JOB_LOCAL_FIELDS (the protocol's list, by SQL name), as the table's keys. */
const localColumns = Object.entries(getTableColumns(jobs))
  .filter(([, column]) => JOB_LOCAL_FIELDS.includes(column.name))
  .map(([key]) => key as keyof store.JobRow);

/**
 * Jobs sync from their enqueue, at each status they take (not each step of their progress), so that
 * the other installs of the cabinet see them queued and running and their replay guard answers
 * with them (service.ts). The lease, the MFA challenge, the artifacts' local files, the callback
 * subscription, the enqueue number (the hourly quota's) and the timeline (the steps this install
 * saw) mean something on the install that enqueued the job only, and never travel. A pulled job
 * therefore has no enqueue number, and an install's robots claim, recover and time out only the
 * jobs that have one (store.ts): a queued job pulled from another install stays that install's.
 * A pulled change is never one of a job this install enqueued: its robots alone move it. But for
 * its own changes, which it gets back after being restored from a backup: what its robots did then.
 */
export const jobRecords = syncedTable('job', jobs, {
  local: localColumns,
  fields: jobRow,
  accepts: (orm, cabinetId, change) =>
    change.held && store.enqueuedHere(orm, cabinetId, change.recordId) && !change.madeHere()
      ? { reason: 'operation_refused', message: 'this install enqueued this job: only its own robots change it' }
      : null,
});

/**
 * A job enqueued here took a status other than a final one (a claim, an MFA wait, a
 * code given, a retry after a crash): queued for the hub as the row its write returned. Inside
 * that write's transaction. The final ones go through recordJobFinished.
 */
export function recordJobMoved(deps: Deps, row: store.JobRow): void {
  jobRecords.capture(deps, row.cabinetId, row.id, row);
}

/**
 * A job that has just finished (the row as its last update returned it), after its debit and any
 * refund: its credits are written on it, and it is queued for the hub. Inside the transaction that
 * finished it. A completion passes the credits it has just written (nothing was refunded).
 */
export function recordJobFinished(deps: Deps, row: store.JobRow, consumed = creditsConsumed(deps, row.cabinetId, row.id)): void {
  if (!TERMINAL_STATUSES.includes(row.status)) return;
  // A failure or a cancel writes them here, after its refund.
  if (row.creditsConsumed !== consumed) store.updateJob(deps.db.orm, row.cabinetId, row.id, [row.status], { creditsConsumed: consumed });
  jobRecords.capture(deps, row.cabinetId, row.id, { ...row, creditsConsumed: consumed });
}

/** A finished job's data taken out by an erasure (its synced columns as erased), queued with its status, which a job always travels with. */
export function recordJobErased(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, row: store.JobRow, erased: Partial<store.JobRow>): void {
  jobRecords.capture(deps, row.cabinetId, row.id, { ...erased, status: row.status });
}

/** This install's jobs that have not finished, for the cabinet's link to a hub: a refund may still come for their debits. */
export function unfinishedJobIdsHere(deps: Pick<Deps, 'db'>, cabinetId: string): string[] {
  return store.unfinishedJobIdsHere(deps.db.orm, cabinetId);
}
