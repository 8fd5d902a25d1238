import { ACTIVE_STATUSES, TERMINAL_STATUSES, type Job, type MfaAnswer } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { recordDevisFailed } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { atomically } from '../platform/db/atomically.js';
import { refundJob } from '../wallet/service.js';
import { getJob, jobChanged, toJob } from './jobs.js';
import { finished } from './lifecycle.js';
import { answerForStep } from './mfa-step.js';
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

/**
 * Hands a person's answer to the robot waiting for it; 409 when the job is not waiting for one, 400
 * when the answer does not fit the step (the job keeps waiting).
 */
export function giveMfaCode(deps: Deps, robots: Pick<RobotControl, 'answerMfa'>, cabinetId: string, jobId: string, answer: MfaAnswer): Job {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  refuseJobOfAnotherInstall(row, 'its code is given');
  const job = getJob(deps, cabinetId, jobId);
  const waiting = row !== undefined && job.mfa !== null;
  const text = waiting ? answerForStep(row.mfaStep, answer) : null;
  if (waiting && text === null) {
    throw new ApiError('mfa_answer_mismatch', `The job asks for ${describeStep(job.mfa)}; the answer does not fit it.`, {
      kind: job.mfa?.kind,
    });
  }
  if (text === null || !robots.answerMfa(cabinetId, job.job_id, text)) {
    throw new ApiError('job_not_awaiting_mfa', `The job is ${job.status}, not waiting for a code.`, { status: job.status });
  }
  return getJob(deps, cabinetId, job.job_id);
}

/** A waiting job's captcha image, served while its robot waits for its text; 404 otherwise. */
export function mfaImage(
  deps: Deps,
  robots: Pick<RobotControl, 'mfaImage'>,
  cabinetId: string,
  jobId: string,
): { mime: string; data: Buffer } {
  const job = getJob(deps, cabinetId, jobId);
  const image = job.mfa?.kind === 'captcha' ? robots.mfaImage(cabinetId, job.job_id) : undefined;
  if (!image) throw new ApiError('not_found', 'The job is not waiting for a captcha here.');
  return image;
}

function describeStep(mfa: Job['mfa']): string {
  if (mfa?.kind === 'app_approval') return 'an approval in the insurer’s app ({approved: true})';
  if (mfa?.kind === 'question')
    return mfa.choices ? `one of ${mfa.choices.map((c) => c.value).join(', ')} ({answer})` : 'an answer ({answer})';
  return mfa?.kind === 'captcha' ? 'the captcha’s text ({code})' : 'a code ({code})';
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
