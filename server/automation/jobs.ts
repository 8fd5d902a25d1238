import { mfaStepView } from './mfa-step.js';
import { ACTIVE_STATUSES, pollUrl, type Job } from '../../shared/automation.js';
import type { Page } from '../../shared/pagination.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { devisPdfPath } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { cursorCodec, toPage } from '../platform/http/cursor.js';
import { creditsConsumed } from '../wallet/service.js';
import * as store from './store.js';

/**
 * Jobs as the API, the console and MCP show them, and the signal that one changed. The rules that
 * create and move jobs are in service.ts (what callers ask) and lifecycle.ts (what robots report).
 */

/** Tells the console's live feed that a job row changed (delivered after the current turn, once committed). */
export function jobChanged(deps: Deps, cabinetId: string, jobId: string): void {
  deps.jobSignal.notify(cabinetId, jobId);
}

export function toJob(deps: Pick<Deps, 'db'>, row: store.JobRow): Job {
  const priced = (row.status === 'completed' || row.status === 'partial') && row.resultTarifCents !== null;
  return {
    job_id: row.id,
    status: row.status,
    compagnie: row.compagnie,
    produit: row.produit,
    devis_id: row.devisId,
    result: priced
      ? {
          tarif_eur: (row.resultTarifCents ?? 0) / 100,
          suspens: row.resultSuspens,
          pdf_url: row.status === 'completed' ? devisPdfPath(row.devisId) : null,
        }
      : null,
    progress: { step: row.progressStep, percent: row.progressPercent },
    poll_url: pollUrl(row.id),
    // Written when it finished (and synced with it); while it runs, from this install's wallet, or
    // for a job another install enqueued, its cost (that install's wallet was debited it).
    credits_consumed: row.creditsConsumed ?? (row.enqueueNumber === null ? row.costCredits : creditsConsumed(deps, row.cabinetId, row.id)),
    error:
      row.errorCode === null
        ? null
        : {
            code: row.errorCode,
            message: row.errorMessage ?? '',
            technical: row.errorTechnical === true,
            details: row.errorStep === null ? null : { step: row.errorStep },
          },
    mfa:
      row.mfaChallenge !== null && row.mfaRequestedAt !== null && row.mfaExpiresAt !== null
        ? {
            ...mfaStepView(row.mfaStep, `${pollUrl(row.id)}/mfa/image`),
            challenge: row.mfaChallenge,
            requested_at: toIso(row.mfaRequestedAt),
            expires_at: toIso(row.mfaExpiresAt),
          }
        : null,
    environment: row.environment,
    ran_on: row.robotCompagnie,
    adapter: row.adapterVersion === null ? null : { code: row.robotCompagnie, version: row.adapterVersion },
    artifacts: artifactLinks(row),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function artifactLinks(row: store.JobRow): Job['artifacts'] {
  if (row.artifacts === null) return null;
  const saved = JSON.parse(row.artifacts) as { screenshot: boolean; trace: boolean; portalChanges?: boolean };
  const base = `${pollUrl(row.id)}/artifacts`;
  return {
    screenshot_url: saved.screenshot ? `${base}/screenshot.png` : null,
    trace_url: saved.trace ? `${base}/trace.zip` : null,
    portal_changes_url: saved.portalChanges === true ? `${base}/portal-changed.json` : null,
  };
}

export function getJob(deps: Deps, cabinetId: string, jobId: string): Job {
  const job = findJob(deps, cabinetId, jobId);
  if (!job) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
  return job;
}

/** The job, or null when this cabinet has none with that id (a live feed skips it). */
export function findJob(deps: Deps, cabinetId: string, jobId: string): Job | null {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  return row ? toJob(deps, row) : null;
}

export function listJobs(
  deps: Deps,
  cabinetId: string,
  query: { limit: number; cursor?: string; status?: Job['status']; created_after?: string },
): Page<Job> {
  const codec = cursorCodec(deps.keys.cursor, {
    cabinetId,
    resource: 'jobs',
    filters: { status: query.status, created_after: query.created_after },
  });
  const createdAfter = query.created_after === undefined ? undefined : Date.parse(query.created_after);
  const rows = store.listJobs(
    deps.db.orm,
    cabinetId,
    { status: query.status, createdAfter, after: codec.after(query.cursor) },
    query.limit + 1,
  );
  return toPage(rows, query.limit, (row) => toJob(deps, row), codec.next);
}

/** The jobs this install's robots are on (running or waiting for a code), newest first: a job another install runs is not one of them. */
export function listJobsOnRobotsHere(deps: Deps, cabinetId: string, limit: number): Job[] {
  return store.listActiveJobsHere(deps.db.orm, cabinetId, limit).map((row) => toJob(deps, row));
}

/** Whether a robot holds (or waits for) this cabinet's login at an insurer. */
export function insurerLoginBusy(deps: Deps, cabinetId: string, robotCompagnie: string): boolean {
  return store.hasJobOnRobot(deps.db.orm, cabinetId, robotCompagnie, ACTIVE_STATUSES);
}

/** An insurer's portal that changed under its robot: when the job that found it ended, at which step. */
interface PortalChange {
  at: string;
  step: string;
  job_id: string;
}

/**
 * Per insurer robot, the cabinet's latest job that failed because the portal changed, unless a
 * later job of the cabinet on that insurer was priced: then the portal works again.
 */
export function insurerPortalChanges(deps: Pick<Deps, 'db'>, cabinetId: string): Map<string, PortalChange> {
  const changes = new Map<string, PortalChange>();
  for (const latest of store.latestPortalChanges(deps.db.orm, cabinetId)) {
    if (store.pricedSince(deps.db.orm, cabinetId, latest.robotCompagnie, latest.at)) continue;
    changes.set(latest.robotCompagnie, { at: toIso(latest.at), step: latest.step ?? '', job_id: latest.jobId });
  }
  return changes;
}
