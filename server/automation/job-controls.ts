import { ACTIVE_STATUSES, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { recordDevisFailed } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { atomically } from '../platform/db/atomically.js';
import { refundJob } from '../wallet/service.js';
import { getJob, jobChanged, toJob } from './jobs.js';
import { finished } from './lifecycle.js';
import type { RobotControl } from './robot-control.js';
import * as store from './store.js';
import { recordJobFinished, recordJobMoved } from './sync.js';

/** What a person does to a job once it is queued: cancel it, open its MFA prompt, give its code. */

/**
 * A job another install of the cabinet enqueued (pulled from the hub: it has no enqueue number
 * here) is that install's: its robots run it, and only there is it cancelled or given a code.
 */
function refuseJobOfAnotherInstall(row: store.JobRow | undefined, action: string): void {
  if (!row || row.enqueueNumber !== null) return;
  throw new ApiError(
    'job_runs_elsewhere',
    `This job was enqueued on another computer of the cabinet, whose robots run it: ${action} there. This computer shows it as that computer last synced it (${row.status}).`,
    { status: row.status },
  );
}

/** mfa_required → awaiting_mfa: a broker opened the prompt (the console calls this). */
export function acknowledgeMfaPrompt(deps: Deps, cabinetId: string, jobId: string): Job {
  atomically(deps.db, () => {
    refuseJobOfAnotherInstall(store.findJob(deps.db.orm, cabinetId, jobId), 'its code is given');
    const moved = store.updateJob(deps.db.orm, cabinetId, jobId, ['mfa_required'], { status: 'awaiting_mfa', updatedAt: deps.clock.now() });
    if (!moved) return;
    jobChanged(deps, cabinetId, jobId);
    recordJobMoved(deps, moved);
  });
  return getJob(deps, cabinetId, jobId);
}

/** Cancels a job (REST, console, MCP alike) and stops its robot if one is running it. */
export function cancelJobAndRobot(deps: Deps, robots: Pick<RobotControl, 'abort'>, cabinetId: string, jobId: string): Job {
  const { job, wasActive } = cancelJob(deps, cabinetId, jobId);
  if (wasActive) robots.abort(job.job_id);
  return job;
}

/** Hands a person's code to the robot waiting for it; 409 when the job is not waiting for one. */
export function giveMfaCode(deps: Deps, robots: Pick<RobotControl, 'answerMfa'>, cabinetId: string, jobId: string, code: string): Job {
  refuseJobOfAnotherInstall(store.findJob(deps.db.orm, cabinetId, jobId), 'its code is given');
  const job = getJob(deps, cabinetId, jobId);
  if (!robots.answerMfa(cabinetId, job.job_id, code)) {
    throw new ApiError('job_not_awaiting_mfa', `The job is ${job.status}, not waiting for a code.`, { status: job.status });
  }
  return getJob(deps, cabinetId, job.job_id);
}

/** pending or active → cancelled, refunded. The caller aborts a running robot (cancelJobAndRobot). */
function cancelJob(deps: Deps, cabinetId: string, jobId: string): { job: Job; wasActive: boolean } {
  return deps.db.immediateTransaction(() => {
    const row = store.findJob(deps.db.orm, cabinetId, jobId);
    if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
    if (row.status === 'cancelled') return { job: toJob(deps, row), wasActive: false };
    if (TERMINAL_STATUSES.includes(row.status)) {
      throw new ApiError('job_not_cancellable', `The job is already ${row.status}.`, { status: row.status });
    }
    refuseJobOfAnotherInstall(row, 'it is cancelled');
    const now = deps.clock.now();
    const cancelled = store.updateJob(deps.db.orm, cabinetId, jobId, ['pending', ...ACTIVE_STATUSES], {
      status: 'cancelled',
      errorCode: 'cancelled',
      errorMessage: 'Cancelled on request.',
      errorTechnical: false,
      ...finished(now),
    });
    jobChanged(deps, cabinetId, jobId);
    refundJob(deps, cabinetId, jobId, 'refund: cancelled');
    if (cancelled) recordJobFinished(deps, cancelled);
    recordDevisFailed(deps, cabinetId, row.devisId);
    return { job: getJob(deps, cabinetId, jobId), wasActive: (ACTIVE_STATUSES as readonly string[]).includes(row.status) };
  });
}
