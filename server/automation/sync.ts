import { TERMINAL_STATUSES } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
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

/** Queues a job that has just finished; inside the transaction that finished it. */
export function captureFinishedJob(deps: Deps, cabinetId: string, jobId: string): void {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (row && TERMINAL_STATUSES.includes(row.status)) jobTable.capture(deps, cabinetId, jobId, row);
}
