import { TERMINAL_STATUSES } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { creditsConsumed } from '../wallet/service.js';
import { syncedTable } from '../sync/synced-table.js';
import { jobs } from './schema.js';
import * as store from './store.js';

/**
 * Jobs sync once terminal, as history and result. The lease, the MFA challenge, the artifacts'
 * local files, the callback subscription, the enqueue number (the hourly quota's) and the timeline
 * (the steps this install saw) mean something on the install that ran the job only.
 */
const jobTable = syncedTable('job', jobs, { local: ['leaseUntil', 'mfaChallenge', 'artifacts', 'callbackWebhookId', 'enqueueNumber', 'timeline'] });

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
