import { ACTIVE_STATUSES, type JobStatus } from '../../../../shared/automation.js';
import type { ConsoleJob } from '../../../../shared/console-automation.js';
import type { JobStrings } from './jobStrings.js';

/** What the jobs list and a job's page both say of a job. */

const JOBS_PATH = '/console/jobs';
export const CANCELLABLE: readonly JobStatus[] = ['pending', ...ACTIVE_STATUSES];

/** The page of one job. */
export function jobPath(jobId: string): string {
  return `${JOBS_PATH}/${encodeURIComponent(jobId)}`;
}

/** The job id of /console/jobs/<id>; null for the list itself. */
export function jobIdInPath(pathname: string): string | null {
  const rest = pathname.slice(JOBS_PATH.length).replace(/^\/+|\/+$/g, '');
  return rest === '' ? null : decodeURIComponent(rest);
}

/** Who a job is for, as a broker says it. */
export function insuredOf(job: Pick<ConsoleJob, 'insured'>, j: JobStrings): string {
  return job.insured ?? j.unnamed;
}

/** The credits a job took, and whether its failure gave them back. */
export function creditsText(job: Pick<ConsoleJob, 'credits' | 'status'>, j: JobStrings): string {
  const { debited, refunded } = job.credits;
  if (refunded > 0) return `${debited} · ${j.refundedShort(refunded)}`;
  return job.status === 'failed' ? `${debited} · ${j.notRefundedShort}` : String(debited);
}

export { formatClock } from '../../format.js';
