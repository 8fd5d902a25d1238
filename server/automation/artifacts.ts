import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_RETENTION_MS } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { jobChanged, toJob } from './jobs.js';
import * as store from './store.js';

/** A failed run's screenshot and trace: recorded on the job, served for 7 days, then deleted. */

/** Records which files a failed run left (screenshot, trace). */
export function recordArtifacts(deps: Deps, row: store.JobRow, saved: { screenshot: boolean; trace: boolean }): void {
  store.setArtifacts(deps.db.orm, row.cabinetId, row.id, JSON.stringify(saved));
  jobChanged(deps, row.cabinetId, row.id);
}

/** The file of a failed run's artifact, if this job of the cabinet has it and it is less than 7 days old. */
export function jobArtifactFile(deps: Deps, cabinetId: string, jobId: string, name: 'screenshot.png' | 'trace.zip', dir: string): string {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
  const links = toJob(deps, row).artifacts;
  const link = name === 'screenshot.png' ? links?.screenshot_url : links?.trace_url;
  const file = join(dir, name);
  const expired = row.finishedAt !== null && row.finishedAt + ARTIFACT_RETENTION_MS <= deps.clock.now();
  if (!link || expired || !existsSync(file))
    throw new ApiError('not_found', `This job has no ${name} (artifacts exist only after a robot failure, for 7 days).`);
  return file;
}

/**
 * Deletes the artifacts of jobs that ended 7 days ago or more, and forgets them (the job's
 * `artifacts` becomes null). The worker runs it every hour.
 */
export function purgeExpiredArtifacts(deps: Deps, remove: (jobId: string) => void): number {
  const expired = store.jobsWithArtifactsEndedBefore(deps.db.orm, deps.clock.now() - ARTIFACT_RETENTION_MS + 1);
  for (const row of expired) {
    remove(row.id);
    store.setArtifacts(deps.db.orm, row.cabinetId, row.id, null);
    jobChanged(deps, row.cabinetId, row.id);
  }
  return expired.length;
}
