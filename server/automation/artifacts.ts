import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_RETENTION_MS, type JobArtifactName } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { jobChanged, toJob } from './jobs.js';
import * as store from './store.js';

/**
 * A failed run's screenshot and trace, and after a portal_changed failure what the step expected
 * and found: recorded on the job, served for 7 days, then deleted.
 */

/** Which files a failed run left beside its job (a row saved before portal changes existed lacks that key). */
interface SavedArtifacts {
  screenshot: boolean;
  trace: boolean;
  portalChanges?: boolean;
}

/** Records which files a failed run left (screenshot, trace, portal changes). */
export function recordArtifacts(deps: Deps, row: store.JobRow, saved: SavedArtifacts): void {
  store.setArtifacts(deps.db.orm, row.cabinetId, row.id, JSON.stringify(saved));
  jobChanged(deps, row.cabinetId, row.id);
}

const PORTAL_CHANGES_FILE: JobArtifactName = 'portal-changed.json';

/** Every string of a JSON value passed through `redact`, so that the value stays valid JSON. */
function redactStrings(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)]));
  return value;
}

/**
 * Writes a portal_changed failure's details (the step, what it expected and found) as
 * portal-changed.json in the run's artifacts directory, each string through `redact`: a portal may
 * show a secret in a button's or a link's name. Returns whether the file was written.
 */
export function savePortalChanges(dir: string, details: Readonly<Record<string, unknown>>, redact: (text: string) => string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, PORTAL_CHANGES_FILE), `${JSON.stringify(redactStrings(details, redact), null, 2)}\n`);
    return true;
  } catch {
    return false;
  }
}

/** How an artifact is served. */
export function artifactContentType(name: JobArtifactName): string {
  if (name === 'screenshot.png') return 'image/png';
  return name === 'trace.zip' ? 'application/zip' : 'application/json';
}

/** The file of a failed run's artifact, if this job of the cabinet has it and it is less than 7 days old. */
export function jobArtifactFile(deps: Deps, cabinetId: string, jobId: string, name: JobArtifactName, dir: string): string {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
  const links = toJob(deps, row).artifacts;
  const link = { 'screenshot.png': links?.screenshot_url, 'trace.zip': links?.trace_url, 'portal-changed.json': links?.portal_changes_url }[
    name
  ];
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
