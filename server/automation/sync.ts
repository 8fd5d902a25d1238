import { z } from 'zod';
import { jobStatusSchema, TERMINAL_STATUSES } from '../../shared/automation.js';
import { API_KEY_ENVIRONMENTS } from '../../shared/api-keys.js';
import type { Deps } from '../deps.js';
import { creditsConsumed } from '../wallet/service.js';
import { anyJsonObject, storedCode, MAX_PORTAL_TEXT, storedBoolean, storedCount, storedId, storedJson, storedSha256, storedText, storedTime } from '../sync/stored-values.js';
import { syncedTable } from '../sync/synced-table.js';
import { jobs } from './schema.js';
import * as store from './store.js';

/** A finished job's row: only terminal jobs travel (a pending one would be run by the robots of whoever pulled it). */
const jobRow = z.object({
  compagnie: storedCode,
  produit: storedCode,
  dic_data: storedJson(anyJsonObject, 'a JSON object'),
  request_hash: storedSha256,
  devis_id: storedId,
  status: jobStatusSchema.refine((status) => TERMINAL_STATUSES.includes(status), 'a job syncs only once finished'),
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
  submitted: storedBoolean,
  attempts: storedCount,
  mfa_requested_at: storedTime.nullable(),
  mfa_expires_at: storedTime.nullable(),
  environment: z.enum(API_KEY_ENVIRONMENTS),
  // Empty on a job enqueued before the column existed.
  robot_compagnie: storedCode.or(z.literal('')),
  created_at: storedTime,
  updated_at: storedTime,
  finished_at: storedTime.nullable(),
});

/**
 * Jobs sync once terminal, as history and result. The lease, the MFA challenge, the artifacts'
 * local files, the callback subscription, the enqueue number (the hourly quota's) and the timeline
 * (the steps this install saw) mean something on the install that ran the job only. A pulled job
 * must be terminal, whole, and never one this install enqueued: its robots run only their own.
 */
const jobTable = syncedTable('job', jobs, {
  local: ['leaseUntil', 'mfaChallenge', 'artifacts', 'callbackWebhookId', 'enqueueNumber', 'timeline'],
  fields: jobRow,
  accepts: (orm, cabinetId, change) =>
    change.held && store.enqueuedHere(orm, cabinetId, change.recordId) ? { reason: 'operation_refused', message: 'this install enqueued this job: only its own robots change it' } : null,
});

export const jobRecords = {
  ...jobTable,
  *snapshot(...args: Parameters<typeof jobTable.snapshot>) {
    for (const record of jobTable.snapshot(...args)) if ((TERMINAL_STATUSES as readonly unknown[]).includes(record.fields.status)) yield record;
  },
};

/**
 * A job that has just finished (the row as its last update returned it), after its debit and any
 * refund: its credits are written on it, and it is queued for the hub. Inside the transaction that
 * finished it. A completion passes the credits it has just written (nothing was refunded).
 */
export function recordJobFinished(deps: Deps, row: store.JobRow, consumed = creditsConsumed(deps, row.cabinetId, row.id)): void {
  if (!TERMINAL_STATUSES.includes(row.status)) return;
  // A failure or a cancel writes them here, after its refund.
  if (row.creditsConsumed !== consumed) store.updateJob(deps.db.orm, row.cabinetId, row.id, [row.status], { creditsConsumed: consumed });
  jobTable.capture(deps, row.cabinetId, row.id, { ...row, creditsConsumed: consumed });
}
