import { TERMINAL_STATUSES } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { creditsConsumed } from '../wallet/service.js';
import { syncedTable } from '../sync/synced-table.js';
import { jobs } from './schema.js';
import * as store from './store.js';

/**
 * Jobs sync once terminal, as history and result. The lease, the MFA challenge, the artifacts'
 * local files and the callback subscription mean something on the install that ran the job only.
 */
const jobTable = syncedTable('job', jobs, { local: ['leaseUntil', 'mfaChallenge', 'artifacts', 'callbackWebhookId'] });

export const jobRecords = {
  ...jobTable,
  *snapshot(...args: Parameters<typeof jobTable.snapshot>) {
    for (const record of jobTable.snapshot(...args)) if ((TERMINAL_STATUSES as readonly unknown[]).includes(record.fields.status)) yield record;
  },
};

/**
 * A job that has just finished, after its debit and any refund: its credits are written on it, and
 * it is queued for the hub. Inside the transaction that finished it.
 */
export function recordJobFinished(deps: Deps, cabinetId: string, jobId: string): void {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (!row || !TERMINAL_STATUSES.includes(row.status)) return;
  const consumed = creditsConsumed(deps, cabinetId, jobId);
  // A completion writes it with the outcome (nothing was refunded); a failure or a cancel, here, after its refund.
  if (row.creditsConsumed !== consumed) store.updateJob(deps.db.orm, cabinetId, jobId, [row.status], { creditsConsumed: consumed });
  jobTable.capture(deps, cabinetId, jobId, { ...row, creditsConsumed: consumed });
}
