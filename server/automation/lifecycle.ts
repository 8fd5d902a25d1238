import { ACTIVE_STATUSES } from '../../shared/automation.js';
import { atomically } from '../platform/db/atomically.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { recordDevisFailed, recordDevisPriced, type PricedExtras } from '../devis/service.js';
import { recordEvent } from '../events/service.js';
import type { HumanStep, RobotResult } from '@courtier/adapter-kit';
import { storedMfaStep } from './mfa-step.js';
import { creditsConsumed, refundJob } from '../wallet/service.js';
import { recordLoginFromJob } from './login-outcome.js';
import { enqueueCallbackDelivery } from '../webhooks/service.js';
import { recordInsurerOutcome } from './guards.js';
import { jobChanged } from './jobs.js';
import { recordJobFinished, recordJobMoved } from './sync.js';
import * as store from './store.js';
import * as queueStore from './store-queue.js';
import { MAX_PORTAL_TEXT } from '../sync/stored-values.js';

/**
 * A job's life as its robot reports it, for the worker: progress, the MFA wait, the outcome, and
 * recovery after a crash. Every move is an UPDATE guarded by the statuses it may come from.
 */

const MFA_TIMEOUT_MS = 5 * 60 * 1000;

const ACTIVE = ACTIVE_STATUSES;

/** What every terminal move clears: the lease, any MFA wait; and when it finished. */
export function finished(now: number): Partial<store.JobRow> {
  return { leaseUntil: null, mfaChallenge: null, mfaStep: null, mfaRequestedAt: null, mfaExpiresAt: null, updatedAt: now, finishedAt: now };
}

function notifyCallback(deps: Deps, row: store.JobRow, event: { id: string; type: string }): void {
  if (row.callbackWebhookId) enqueueCallbackDelivery(deps, row.cabinetId, row.callbackWebhookId, event);
}

/** The robot's progress, shown live. Ignored once the job has left the active states. */
export function reportProgress(deps: Deps, row: store.JobRow, step: string, percent: number): void {
  const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, {
    progressStep: step.slice(0, 200),
    progressPercent: Math.max(0, Math.min(100, Math.round(percent))),
    updatedAt: deps.clock.now(),
  });
  if (moved) jobChanged(deps, row.cabinetId, row.id);
}

export function markSubmitted(deps: Deps, row: store.JobRow): void {
  store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, { submitted: true, updatedAt: deps.clock.now() });
}

/** running → mfa_required, with job.mfa_required; returns when the answer is due. */
export function requireMfa(deps: Deps, row: store.JobRow, step: HumanStep): number | null {
  const now = deps.clock.now();
  const expiresAt = now + MFA_TIMEOUT_MS;
  const challenge = step.prompt;
  return atomically(deps.db, () => {
    const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ['running'], {
      status: 'mfa_required',
      mfaChallenge: challenge.slice(0, 500),
      mfaStep: storedMfaStep(step),
      mfaRequestedAt: now,
      mfaExpiresAt: expiresAt,
      progressStep: 'waiting for the MFA code',
      updatedAt: now,
    });
    if (!moved) return null;
    jobChanged(deps, row.cabinetId, row.id);
    recordJobMoved(deps, moved);
    recordEvent(deps, row.cabinetId, 'job.mfa_required', {
      job_id: row.id,
      compagnie: row.compagnie,
      produit: row.produit,
      devis_id: row.devisId,
      kind: step.kind,
      challenge: challenge.slice(0, 500),
      expires_at: toIso(expiresAt),
    });
    return expiresAt;
  });
}

/** The MFA states → running, once a code is given. False when the job was not waiting for one. */
export function resumeWithCode(deps: Deps, cabinetId: string, jobId: string): boolean {
  return atomically(deps.db, () => {
    const moved = store.updateJob(deps.db.orm, cabinetId, jobId, ['mfa_required', 'awaiting_mfa'], {
      status: 'running',
      mfaChallenge: null,
      mfaStep: null,
      mfaRequestedAt: null,
      mfaExpiresAt: null,
      progressStep: 'MFA code received',
      updatedAt: deps.clock.now(),
    });
    if (!moved) return false;
    jobChanged(deps, cabinetId, jobId);
    recordJobMoved(deps, moved);
    return true;
  });
}

/** completed (with PDF) or partial (without): the quote is priced; job.completed and devis.generated. */
export function completeJob(deps: Deps, row: store.JobRow, result: RobotResult, extras: PricedExtras = {}): boolean {
  const status = result.outcome === 'complete' && result.pdf ? 'completed' : 'partial';
  // What the portal said, as long as it is, up to what the other installs of the cabinet take.
  const suspens = result.suspens?.slice(0, MAX_PORTAL_TEXT) ?? null;
  return atomically(deps.db, () => {
    const now = deps.clock.now();
    const consumed = creditsConsumed(deps, row.cabinetId, row.id);
    const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, {
      status,
      creditsConsumed: consumed,
      resultTarifCents: Math.round(result.tarif_eur * 100),
      resultSuspens: suspens,
      progressStep: status === 'completed' ? 'done' : 'priced, no PDF',
      progressPercent: 100,
      ...finished(now),
    });
    if (!moved) return false;
    jobChanged(deps, row.cabinetId, row.id);
    recordJobFinished(deps, moved, consumed);
    const devis = recordDevisPriced(deps, row.cabinetId, row.devisId, {
      tarifEur: result.tarif_eur,
      suspens,
      pdf: status === 'completed' ? result.pdf : null,
      jobId: row.id,
      ...extras,
    });
    recordInsurerOutcome(deps, row.robotCompagnie, false);
    recordLoginFromJob(deps, moved, { ok: true });
    const event = recordEvent(deps, row.cabinetId, 'job.completed', {
      job_id: row.id,
      compagnie: row.compagnie,
      produit: row.produit,
      devis_id: row.devisId,
      status,
      tarif_eur: result.tarif_eur,
      suspens,
      pdf_url: devis.pdf_url,
      credits_consumed: consumed,
    });
    recordEvent(deps, row.cabinetId, 'devis.generated', {
      devis_id: row.devisId,
      job_id: row.id,
      client_id: devis.client_id,
      compagnie: row.compagnie,
      produit: row.produit,
      tarif_eur: result.tarif_eur,
      pdf_url: devis.pdf_url,
    });
    notifyCallback(deps, row, event);
    return true;
  });
}

/**
 * The portal refused the cabinet's login: a business refusal that comes before any pricing, so the
 * insurer priced nothing and the run is given back, and the login's state says it. The breaker
 * counts it as a business refusal still (a wrong password says nothing about the insurer's portal).
 */
const LOGIN_REFUSALS: ReadonlySet<string> = new Set(['invalid_credentials']);

export interface JobFailure {
  code: string;
  message: string;
  /** Technical failures are refunded; business refusals are not, but for a refused login (LOGIN_REFUSALS). */
  technical: boolean;
  /** Whether it counts against the insurer's circuit breaker (not for a timeout of the broker's code). */
  countsForBreaker: boolean;
  /** The robot step the failure names (portal_changed: the step whose page changed). */
  step?: string;
}

/** failed, with job.failed and devis.failed (and insurer.portal_changed when the portal changed); refunded when technical or a refused login, exactly once. */
export function failJob(deps: Deps, row: store.JobRow, failure: JobFailure): boolean {
  return atomically(deps.db, () => {
    const now = deps.clock.now();
    const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ['pending', ...ACTIVE], {
      status: 'failed',
      errorCode: failure.code,
      errorMessage: failure.message.slice(0, 1000),
      errorTechnical: failure.technical,
      errorStep: failure.step?.slice(0, 200) ?? null,
      ...finished(now),
    });
    if (!moved) return false;
    jobChanged(deps, row.cabinetId, row.id);
    const refunded =
      (failure.technical || LOGIN_REFUSALS.has(failure.code)) && refundJob(deps, row.cabinetId, row.id, `refund: ${failure.code}`);
    recordJobFinished(deps, moved);
    const devis = recordDevisFailed(deps, row.cabinetId, row.devisId);
    if (failure.countsForBreaker) recordInsurerOutcome(deps, row.robotCompagnie, failure.technical);
    if (LOGIN_REFUSALS.has(failure.code))
      recordLoginFromJob(deps, moved, { ok: false, code: failure.code, message: failure.message.slice(0, 1000) });
    const event = recordEvent(deps, row.cabinetId, 'job.failed', {
      job_id: row.id,
      compagnie: row.compagnie,
      produit: row.produit,
      devis_id: row.devisId,
      error: { code: failure.code, message: failure.message.slice(0, 1000), technical: failure.technical },
      refunded,
      credits_consumed: creditsConsumed(deps, row.cabinetId, row.id),
    });
    // Administrators learn that the adapter needs updating, whatever the job was for.
    if (failure.code === 'portal_changed' && failure.step !== undefined)
      recordEvent(deps, row.cabinetId, 'insurer.portal_changed', {
        compagnie: row.robotCompagnie,
        produit: row.produit,
        step: failure.step.slice(0, 200),
        job_id: row.id,
      });
    recordEvent(deps, row.cabinetId, 'devis.failed', {
      devis_id: row.devisId,
      job_id: row.id,
      client_id: devis.client_id,
      compagnie: row.compagnie,
      produit: row.produit,
      reason: failure.message.slice(0, 1000),
    });
    notifyCallback(deps, row, event);
    return true;
  });
}

/**
 * After a crash: an active job whose lease ran out is retried once if the robot had not submitted
 * the pricing yet; otherwise it fails (technical, refunded).
 */
export function recoverAbandonedJobs(deps: Deps): { retried: number; failed: number } {
  let retried = 0;
  let failed = 0;
  for (const row of queueStore.expiredJobs(deps.db.orm, deps.clock.now())) {
    if (!row.submitted && row.attempts < 2) {
      const moved = atomically(deps.db, () => {
        const requeued = store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, {
          status: 'pending',
          leaseUntil: null,
          progressStep: 'queued again after an interruption',
          progressPercent: 0,
          mfaChallenge: null,
          mfaStep: null,
          mfaRequestedAt: null,
          mfaExpiresAt: null,
          updatedAt: deps.clock.now(),
        });
        if (requeued) recordJobMoved(deps, requeued);
        return requeued;
      });
      if (moved) {
        retried += 1;
        jobChanged(deps, row.cabinetId, row.id);
      }
    } else if (
      failJob(deps, row, {
        code: 'worker_crashed',
        message: row.submitted
          ? 'The service stopped after the pricing was submitted to the insurer; it was not retried, to avoid pricing twice.'
          : 'The service stopped twice during this job.',
        technical: true,
        countsForBreaker: false,
      })
    ) {
      failed += 1;
    }
  }
  return { retried, failed };
}

/** Jobs whose MFA code did not come in time. */
export function expiredMfaJobs(deps: Deps): store.JobRow[] {
  return queueStore.mfaExpired(deps.db.orm, deps.clock.now());
}

/** The worker leased a pending job: it is running now. In the claim's transaction. */
export function jobClaimed(deps: Deps, row: store.JobRow): void {
  jobChanged(deps, row.cabinetId, row.id);
  recordJobMoved(deps, row);
}
