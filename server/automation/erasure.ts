import { TERMINAL_STATUSES } from '../../shared/automation.js';
import { ERASED_RECORD_FIELDS } from '../../shared/erasure.js';
import type { Deps } from '../deps.js';
import * as store from './store.js';
import { recordJobErased } from './sync.js';

/**
 * A client's erasure reaches the jobs that priced its quotes (by the job's own devis_id): each
 * loses its dicData, its request's fingerprint, and what the insurer or the robot wrote (pending conditions, an error message, an MFA challenge), and its
 * failure's screenshot and trace are no longer served (their files go with the hourly purge of
 * artifacts older than 7 days). A finished job this install enqueued is queued for the other installs
 * as an edit, whose clock wins over every earlier value; a job pulled from another install is
 * that install's to send (the others refuse a change of it from anyone else), and a job still
 * running is sent whole, dicData emptied, when it finishes. Inside the erasure's transaction.
 * Returns the ids of the jobs reached.
 */
export function eraseJobsOfQuotes(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  devisIds: readonly string[],
): string[] {
  const erased = ERASED_RECORD_FIELDS.job;
  const rows = store.jobsOfQuotes(deps.db.orm, cabinetId, devisIds);
  for (const row of rows) {
    const synced = {
      dicData: erased.dic_data,
      requestHash: erased.request_hash,
      resultSuspens: erased.result_suspens,
      errorMessage: erased.error_message,
    };
    const changed = (Object.keys(synced) as (keyof typeof synced)[]).some((column) => row[column] !== synced[column]);
    if (!changed && row.mfaChallenge === null && row.artifacts === null) continue;
    store.updateJob(deps.db.orm, cabinetId, row.id, [row.status], { ...synced, mfaChallenge: null, mfaStep: null, artifacts: null });
    if (changed && row.enqueueNumber !== null && TERMINAL_STATUSES.includes(row.status)) {
      // The other installs take only finished jobs' erasures: an unfinished one travels with its next status.
      recordJobErased(deps, row, synced);
    }
  }
  return rows.map((row) => row.id);
}
