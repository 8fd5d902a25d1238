import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE_STATUSES, ARTIFACT_RETENTION_MS, TERMINAL_STATUSES, pollUrl, type AutomationStatus, type DryRunResult, type Job, type TarificationRequest } from '../../shared/automation.js';
import type { ConsoleDryRun } from '../../shared/console-automation.js';
import type { Page } from '../../shared/pagination.js';
import { credentialsConfigured } from '../credentials/service.js';
import { toIso, type Deps } from '../deps.js';
import { devisPdfPath, recordDevisFailed, recordDevisPriced, startDevisPricing } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { recordEvent } from '../events/service.js';
import { cursorCodec, toPage } from '../http/cursor.js';
import { validationError } from '../http/validation.js';
import { canonicalJson } from '../http/canonical-json.js';
import type { RobotResult } from '../robots/adapter.js';
import { creditBalance, creditsConsumed, debitForJob, refundJob } from '../wallet/service.js';
import { enqueueCallbackDelivery, webhookExists } from '../webhooks/service.js';
import { checkDicData, costOf, findProduct } from './catalogue.js';
import { breakerState, listBreakerStates, markTrial, readKillSwitch, readRobotPause, recordInsurerOutcome } from './guards.js';
import * as store from './store.js';
import type { Worker } from './worker.js';

export const REPLAY_WINDOW_MS = 10 * 60 * 1000;
export const QUOTA_WINDOW_MS = 60 * 60 * 1000;
export const MFA_TIMEOUT_MS = 5 * 60 * 1000;
const ACTIVE = ACTIVE_STATUSES;
export const SANDBOX = 'sandbox';
export type Environment = store.JobRow['environment'];

function requestHash(request: { compagnie: string; produit: string; dicData: Record<string, unknown> }): string {
  return createHash('sha256')
    .update(canonicalJson({ compagnie: request.compagnie, produit: request.produit, dicData: request.dicData }))
    .digest('hex');
}

function quotaOf(deps: Deps, cabinetId: string) {
  const limit = deps.config.tarificationQuotaPerHour;
  const { count, oldest } = store.countJobsSince(deps.db.orm, cabinetId, deps.clock.now() - QUOTA_WINDOW_MS);
  return { limit, remaining: Math.max(0, limit - count), resetAt: oldest === null ? null : oldest + QUOTA_WINDOW_MS };
}

/** Tells the console's live feed that a job row changed (delivered after the current turn, once committed). */
function changed(deps: Deps, cabinetId: string, jobId: string): void {
  deps.jobSignal.notify(cabinetId, jobId);
}

/** What every terminal move clears: the lease, any MFA wait; and when it finished. */
function finished(now: number): Partial<store.JobRow> {
  return { leaseUntil: null, mfaChallenge: null, mfaRequestedAt: null, mfaExpiresAt: null, updatedAt: now, finishedAt: now };
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
      ? { tarif_eur: (row.resultTarifCents ?? 0) / 100, suspens: row.resultSuspens, pdf_url: row.status === 'completed' ? devisPdfPath(row.devisId) : null }
      : null,
    progress: { step: row.progressStep, percent: row.progressPercent },
    poll_url: pollUrl(row.id),
    credits_consumed: creditsConsumed(deps, row.cabinetId, row.id),
    error: row.errorCode === null ? null : { code: row.errorCode, message: row.errorMessage ?? '', technical: row.errorTechnical === true },
    mfa:
      row.mfaChallenge !== null && row.mfaRequestedAt !== null && row.mfaExpiresAt !== null
        ? { challenge: row.mfaChallenge, requested_at: toIso(row.mfaRequestedAt), expires_at: toIso(row.mfaExpiresAt) }
        : null,
    environment: row.environment,
    ran_on: row.robotCompagnie,
    artifacts: artifactLinks(row),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function artifactLinks(row: store.JobRow): Job['artifacts'] {
  if (row.artifacts === null) return null;
  const saved = JSON.parse(row.artifacts) as { screenshot: boolean; trace: boolean };
  const base = `${pollUrl(row.id)}/artifacts`;
  return { screenshot_url: saved.screenshot ? `${base}/screenshot.png` : null, trace_url: saved.trace ? `${base}/trace.zip` : null };
}

/**
 * The insurer whose robot runs a request: a test key's jobs always run on the sandbox insurer,
 * whatever compagnie says (so that integrators can try everything without touching a real portal).
 */
export function robotFor(deps: Deps, request: { compagnie: string; produit: string }, environment: Environment) {
  if (environment === 'test') {
    if (!deps.insurers.get(SANDBOX)) throw new ApiError('unknown_insurer', 'Test keys run on the sandbox insurer, which is switched off on this install (COURTIER_SANDBOX=false).');
    return { robotCompagnie: SANDBOX, ...findProduct(deps, request.produit, SANDBOX) };
  }
  return { robotCompagnie: request.compagnie, ...findProduct(deps, request.produit, request.compagnie) };
}

/** A test key may use the sandbox's demo account without configuring it. */
function hasCredentials(deps: Deps, cabinetId: string, robotCompagnie: string, environment: Environment): boolean {
  return (environment === 'test' && robotCompagnie === SANDBOX) || credentialsConfigured(deps, cabinetId, robotCompagnie);
}

/** Part 2.4: what a real enqueue would meet, without creating or costing anything. */
export function dryRunTarification(deps: Deps, cabinetId: string, request: TarificationRequest, environment: Environment): DryRunResult {
  const { product, robotCompagnie } = robotFor(deps, request, environment);
  const check = checkDicData(product, request.dicData);
  const quota = quotaOf(deps, cabinetId);
  return {
    job_id: null,
    status: 'dry_run_ok',
    validation: {
      schema_ok: check.ok,
      missing_required_fields: check.missing,
      quota: { remaining: quota.remaining, limit: quota.limit },
      credentials_configured: hasCredentials(deps, cabinetId, robotCompagnie, environment),
      would_cost_credits: costOf(deps, product),
    },
    credits_consumed: 0,
  };
}

/**
 * The dry run as the console shows it: besides part 2.4's answer, each dicData field the product
 * refuses (other than the missing ones) and the wallet's balance.
 */
export function dryRunWithDetails(deps: Deps, cabinetId: string, request: TarificationRequest, environment: Environment): ConsoleDryRun {
  const result = dryRunTarification(deps, cabinetId, request, environment);
  const check = checkDicData(robotFor(deps, request, environment).product, request.dicData);
  const invalid = check.issues
    .map((issue) => ({ ...issue, field: issue.path.split('.')[2] ?? '' }))
    .filter((issue) => !check.missing.includes(issue.field));
  return { ...result, invalid_fields: invalid, balance: creditBalance(deps, cabinetId) };
}

/**
 * A real enqueue. After validating the body and dicData, the checks of part 7 run in their order
 * — kill switch and cabinet pause, circuit breaker, credentials, quota, replay guard, wallet — and the debit, the
 * quote and the job commit in the same IMMEDIATE transaction: 50 concurrent calls on a wallet
 * for 7 runs make exactly 7 jobs.
 */
export function enqueueTarification(
  deps: Deps,
  cabinetId: string,
  request: TarificationRequest,
  environment: Environment,
): { job_id: string; status: 'pending'; poll_url: string } {
  const { product, robotCompagnie } = robotFor(deps, request, environment);
  const check = checkDicData(product, request.dicData);
  if (!check.ok) throw validationError(check.issues);
  if (request.callback_webhook_id !== undefined && !webhookExists(deps, cabinetId, request.callback_webhook_id)) {
    throw validationError([{ path: 'body.callback_webhook_id', message: 'no webhook subscription with this id in this cabinet' }]);
  }
  const cost = costOf(deps, product);
  const hash = requestHash({ compagnie: request.compagnie, produit: request.produit, dicData: check.data });

  const enqueued = deps.db.sqlite
    .transaction(() => {
      const killSwitch = readKillSwitch(deps);
      if (killSwitch) {
        throw new ApiError('api_rpa_temporarily_disabled', `Robots are switched off on this install: ${killSwitch.reason} Retry later.`, {
          reason: killSwitch.reason,
          scope: 'install',
        });
      }
      const pause = readRobotPause(deps, cabinetId);
      if (pause) {
        throw new ApiError('api_rpa_temporarily_disabled', `Your cabinet's robots are paused: ${pause.reason} An administrator can resume them in the console.`, {
          reason: pause.reason,
          scope: 'cabinet',
        });
      }

      const breaker = breakerState(deps, robotCompagnie);
      if (breaker.state === 'open' || (breaker.state === 'half_open' && breaker.trialJobId !== null)) {
        const retryAfter = breaker.state === 'open' ? Math.ceil(breaker.retryAfterMs / 1000) : 60;
        throw new ApiError('rpa_circuit_open', `Too many technical failures at ${robotCompagnie} lately; retry in ${retryAfter} s.`, { retry_after_seconds: retryAfter }, { 'Retry-After': String(retryAfter) });
      }

      if (!hasCredentials(deps, cabinetId, robotCompagnie, environment)) {
        throw new ApiError('insurer_credentials_missing', `No portal credentials for ${robotCompagnie} in this cabinet. Set them in the console (Insurers) or with courtier insurers set-credentials.`);
      }

      const quota = quotaOf(deps, cabinetId);
      if (quota.remaining <= 0) {
        const resetAt = toIso(quota.resetAt ?? deps.clock.now());
        throw new ApiError('rpa_quota_exceeded', `This cabinet used its ${quota.limit} tarifications of the hour; the next one is possible at ${resetAt}.`, { reset_at: resetAt, limit: quota.limit });
      }

      const previous = store.latestJobWithHash(deps.db.orm, cabinetId, hash, deps.clock.now() - REPLAY_WINDOW_MS);
      if (previous) {
        const retryAfter = Math.ceil((previous.createdAt + REPLAY_WINDOW_MS - deps.clock.now()) / 1000);
        throw new ApiError(
          'rpa_replay_detected',
          `The same request was enqueued ${Math.round((deps.clock.now() - previous.createdAt) / 1000)} s ago as job ${previous.id}; poll that job, or wait ${retryAfter} s.`,
          { retry_after_seconds: retryAfter, job_id: previous.id },
          { 'Retry-After': String(retryAfter) },
        );
      }

      const jobId = randomUUID();
      if (!debitForJob(deps, cabinetId, jobId, cost)) {
        throw new ApiError('credits_exhausted', `This run costs ${cost} credits and the wallet holds ${creditBalance(deps, cabinetId)}. No job was created; top up, then retry with the same Idempotency-Key.`, {
          required_credits: cost,
          balance: creditBalance(deps, cabinetId),
        });
      }
      const devisId = startDevisPricing(deps, cabinetId, {
        devisId: request.devis_id,
        clientId: request.client_id,
        compagnie: request.compagnie,
        produit: request.produit,
        dicData: check.data,
        jobId,
      });
      const now = deps.clock.now();
      store.insertJob(deps.db.orm, {
        id: jobId,
        cabinetId,
        compagnie: request.compagnie,
        produit: request.produit,
        dicData: JSON.stringify(check.data),
        requestHash: hash,
        devisId,
        status: 'pending',
        progressStep: 'queued',
        progressPercent: 0,
        costCredits: cost,
        resultTarifCents: null,
        resultSuspens: null,
        errorCode: null,
        errorMessage: null,
        errorTechnical: null,
        submitted: false,
        attempts: 0,
        leaseUntil: null,
        mfaChallenge: null,
        mfaRequestedAt: null,
        mfaExpiresAt: null,
        callbackWebhookId: request.callback_webhook_id ?? null,
        environment,
        robotCompagnie,
        artifacts: null,
        createdAt: now,
        updatedAt: now,
        finishedAt: null,
      });
      if (breaker.state === 'half_open') markTrial(deps, robotCompagnie, jobId);
      return { job_id: jobId, status: 'pending' as const, poll_url: pollUrl(jobId) };
    })
    .immediate();
  changed(deps, cabinetId, enqueued.job_id);
  return enqueued;
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

export function listJobs(deps: Deps, cabinetId: string, query: { limit: number; cursor?: string; status?: Job['status']; created_after?: string }): Page<Job> {
  const codec = cursorCodec(deps.keys.cursor, { cabinetId, resource: 'jobs', filters: { status: query.status, created_after: query.created_after } });
  const createdAfter = query.created_after === undefined ? undefined : Date.parse(query.created_after);
  const rows = store.listJobs(deps.db.orm, cabinetId, { status: query.status, createdAfter, after: codec.after(query.cursor) }, query.limit + 1);
  return toPage(rows, query.limit, (row) => toJob(deps, row), codec.next);
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
  if (moved) changed(deps, row.cabinetId, row.id);
}

export function markSubmitted(deps: Deps, row: store.JobRow): void {
  store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, { submitted: true, updatedAt: deps.clock.now() });
}

/** running → mfa_required, with job.mfa_required; returns when the code is due. */
export function requireMfa(deps: Deps, row: store.JobRow, challenge: string): number | null {
  const now = deps.clock.now();
  const expiresAt = now + MFA_TIMEOUT_MS;
  return deps.db.sqlite.transaction(() => {
    const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ['running'], {
      status: 'mfa_required',
      mfaChallenge: challenge.slice(0, 500),
      mfaRequestedAt: now,
      mfaExpiresAt: expiresAt,
      progressStep: 'waiting for the MFA code',
      updatedAt: now,
    });
    if (!moved) return null;
    changed(deps, row.cabinetId, row.id);
    recordEvent(deps, row.cabinetId, 'job.mfa_required', {
      job_id: row.id,
      compagnie: row.compagnie,
      produit: row.produit,
      devis_id: row.devisId,
      challenge: challenge.slice(0, 500),
      expires_at: toIso(expiresAt),
    });
    return expiresAt;
  })();
}

/** mfa_required → awaiting_mfa: a broker opened the prompt (the console calls this). */
export function acknowledgeMfaPrompt(deps: Deps, cabinetId: string, jobId: string): Job {
  if (store.updateJob(deps.db.orm, cabinetId, jobId, ['mfa_required'], { status: 'awaiting_mfa', updatedAt: deps.clock.now() })) changed(deps, cabinetId, jobId);
  return getJob(deps, cabinetId, jobId);
}

/** The MFA states → running, once a code is given. False when the job was not waiting for one. */
export function resumeWithCode(deps: Deps, cabinetId: string, jobId: string): boolean {
  const moved = store.updateJob(deps.db.orm, cabinetId, jobId, ['mfa_required', 'awaiting_mfa'], {
    status: 'running',
    mfaChallenge: null,
    mfaRequestedAt: null,
    mfaExpiresAt: null,
    progressStep: 'MFA code received',
    updatedAt: deps.clock.now(),
  });
  if (moved) changed(deps, cabinetId, jobId);
  return moved;
}

/** completed (with PDF) or partial (without): the quote is priced; job.completed and devis.generated. */
export function completeJob(deps: Deps, row: store.JobRow, result: RobotResult): boolean {
  const status = result.outcome === 'complete' && result.pdf ? 'completed' : 'partial';
  return deps.db.sqlite
    .transaction(() => {
      const now = deps.clock.now();
      const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, {
        status,
        resultTarifCents: Math.round(result.tarif_eur * 100),
        resultSuspens: result.suspens ?? null,
        progressStep: status === 'completed' ? 'done' : 'priced, no PDF',
        progressPercent: 100,
        ...finished(now),
      });
      if (!moved) return false;
      changed(deps, row.cabinetId, row.id);
      const devis = recordDevisPriced(deps, row.cabinetId, row.devisId, {
        tarifEur: result.tarif_eur,
        suspens: result.suspens ?? null,
        pdf: status === 'completed' ? result.pdf : null,
        jobId: row.id,
      });
      recordInsurerOutcome(deps, row.robotCompagnie, false);
      const event = recordEvent(deps, row.cabinetId, 'job.completed', {
        job_id: row.id,
        compagnie: row.compagnie,
        produit: row.produit,
        devis_id: row.devisId,
        status,
        tarif_eur: result.tarif_eur,
        suspens: result.suspens ?? null,
        pdf_url: devis.pdf_url,
        credits_consumed: creditsConsumed(deps, row.cabinetId, row.id),
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
    })
    .immediate();
}

export interface JobFailure {
  code: string;
  message: string;
  /** Technical failures are refunded; business refusals are not. */
  technical: boolean;
  /** Whether it counts against the insurer's circuit breaker (not for a timeout of the broker's code). */
  countsForBreaker: boolean;
}

/** failed, with job.failed and devis.failed; refunded when technical, exactly once. */
export function failJob(deps: Deps, row: store.JobRow, failure: JobFailure): boolean {
  return deps.db.sqlite
    .transaction(() => {
      const now = deps.clock.now();
      const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ['pending', ...ACTIVE], {
        status: 'failed',
        errorCode: failure.code,
        errorMessage: failure.message.slice(0, 1000),
        errorTechnical: failure.technical,
        ...finished(now),
      });
      if (!moved) return false;
      changed(deps, row.cabinetId, row.id);
      const refunded = failure.technical && refundJob(deps, row.cabinetId, row.id, `refund: ${failure.code}`);
      const devis = recordDevisFailed(deps, row.cabinetId, row.devisId);
      if (failure.countsForBreaker) recordInsurerOutcome(deps, row.robotCompagnie, failure.technical);
      const event = recordEvent(deps, row.cabinetId, 'job.failed', {
        job_id: row.id,
        compagnie: row.compagnie,
        produit: row.produit,
        devis_id: row.devisId,
        error: { code: failure.code, message: failure.message.slice(0, 1000), technical: failure.technical },
        refunded,
        credits_consumed: creditsConsumed(deps, row.cabinetId, row.id),
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
    })
    .immediate();
}

/** pending or active → cancelled, refunded. The caller aborts a running robot. */
/** Cancels a job (REST, console, MCP alike) and stops its robot if one is running it. */
export function cancelJobAndRobot(deps: Deps, worker: Pick<Worker, 'abort'>, cabinetId: string, jobId: string): Job {
  const { job, wasActive } = cancelJob(deps, cabinetId, jobId);
  if (wasActive) worker.abort(job.job_id);
  return job;
}

/** Hands a person's code to the robot waiting for it; 409 when the job is not waiting for one. */
export function giveMfaCode(deps: Deps, worker: Pick<Worker, 'answerMfa'>, cabinetId: string, jobId: string, code: string): Job {
  const job = getJob(deps, cabinetId, jobId);
  if (!worker.answerMfa(cabinetId, job.job_id, code)) {
    throw new ApiError('job_not_awaiting_mfa', `The job is ${job.status}, not waiting for a code.`, { status: job.status });
  }
  return getJob(deps, cabinetId, job.job_id);
}

export function cancelJob(deps: Deps, cabinetId: string, jobId: string): { job: Job; wasActive: boolean } {
  return deps.db.sqlite
    .transaction(() => {
      const row = store.findJob(deps.db.orm, cabinetId, jobId);
      if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
      if (row.status === 'cancelled') return { job: toJob(deps, row), wasActive: false };
      if (TERMINAL_STATUSES.includes(row.status)) {
        throw new ApiError('job_not_cancellable', `The job is already ${row.status}.`, { status: row.status });
      }
      const now = deps.clock.now();
      store.updateJob(deps.db.orm, cabinetId, jobId, ['pending', ...ACTIVE], {
        status: 'cancelled',
        errorCode: 'cancelled',
        errorMessage: 'Cancelled on request.',
        errorTechnical: false,
        ...finished(now),
      });
      changed(deps, cabinetId, jobId);
      refundJob(deps, cabinetId, jobId, 'refund: cancelled');
      recordDevisFailed(deps, cabinetId, row.devisId);
      return { job: getJob(deps, cabinetId, jobId), wasActive: (ACTIVE as readonly string[]).includes(row.status) };
    })
    .immediate();
}

/**
 * After a crash: an active job whose lease ran out is retried once if the robot had not submitted
 * the pricing yet; otherwise it fails (technical, refunded).
 */
export function recoverAbandonedJobs(deps: Deps): { retried: number; failed: number } {
  let retried = 0;
  let failed = 0;
  for (const row of store.expiredJobs(deps.db.orm, deps.clock.now())) {
    if (!row.submitted && row.attempts < 2) {
      const moved = store.updateJob(deps.db.orm, row.cabinetId, row.id, ACTIVE, {
        status: 'pending',
        leaseUntil: null,
        progressStep: 'queued again after an interruption',
        progressPercent: 0,
        mfaChallenge: null,
        mfaRequestedAt: null,
        mfaExpiresAt: null,
        updatedAt: deps.clock.now(),
      });
      if (moved) {
        retried += 1;
        changed(deps, row.cabinetId, row.id);
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
  return store.mfaExpired(deps.db.orm, deps.clock.now());
}

export function automationStatus(deps: Deps, cabinetId: string, running: number): AutomationStatus {
  const killSwitch = readKillSwitch(deps);
  const pause = readRobotPause(deps, cabinetId);
  const quota = quotaOf(deps, cabinetId);
  return {
    robots_enabled: killSwitch === null && pause === null,
    kill_switch: killSwitch,
    cabinet_pause: pause,
    breakers: listBreakerStates(deps),
    quota: { limit: quota.limit, remaining: quota.remaining, reset_at: quota.resetAt === null ? null : toIso(quota.resetAt) },
    workers: { concurrency: deps.config.workerConcurrency, running },
  };
}

/** Records which files a failed run left (screenshot, trace). */
export function recordArtifacts(deps: Deps, row: store.JobRow, saved: { screenshot: boolean; trace: boolean }): void {
  store.setArtifacts(deps.db.orm, row.cabinetId, row.id, JSON.stringify(saved));
  changed(deps, row.cabinetId, row.id);
}

/** The worker leased a pending job: it is running now. */
export function jobClaimed(deps: Deps, row: store.JobRow): void {
  changed(deps, row.cabinetId, row.id);
}

/** The cabinet's jobs not finished yet (pending included), newest first: what a console shows on connecting. */
export function listUnfinishedJobs(deps: Deps, cabinetId: string, limit = 200): Job[] {
  return store.listJobsInStatuses(deps.db.orm, cabinetId, ['pending', ...ACTIVE], limit).map((row) => toJob(deps, row));
}

/** Whether a robot holds (or waits for) this cabinet's login at an insurer. */
export function insurerLoginBusy(deps: Deps, cabinetId: string, robotCompagnie: string): boolean {
  return store.hasJobOnRobot(deps.db.orm, cabinetId, robotCompagnie, ACTIVE);
}

/**
 * The console's job list: newest first, by status and by a creation range [from, to) in epoch
 * milliseconds; the cursor is bound to the filters.
 */
export function listJobsBetween(
  deps: Deps,
  cabinetId: string,
  query: { limit: number; cursor?: string; status?: Job['status']; from?: number; to?: number },
): Page<Job> {
  const codec = cursorCodec(deps.keys.cursor, { cabinetId, resource: 'console-jobs', filters: { status: query.status, from: query.from, to: query.to } });
  const rows = store.listJobs(
    deps.db.orm,
    cabinetId,
    { status: query.status, createdFrom: query.from, createdBefore: query.to, after: codec.after(query.cursor) },
    query.limit + 1,
  );
  return toPage(rows, query.limit, (row) => toJob(deps, row), codec.next);
}

/** The file of a failed run's artifact, if this job of the cabinet has it and it is less than 7 days old. */
export function jobArtifactFile(deps: Deps, cabinetId: string, jobId: string, name: 'screenshot.png' | 'trace.zip', dir: string): string {
  const row = store.findJob(deps.db.orm, cabinetId, jobId);
  if (!row) throw new ApiError('not_found', `No job with id ${jobId} in this cabinet.`);
  const links = toJob(deps, row).artifacts;
  const link = name === 'screenshot.png' ? links?.screenshot_url : links?.trace_url;
  const file = join(dir, name);
  const expired = row.finishedAt !== null && row.finishedAt + ARTIFACT_RETENTION_MS <= deps.clock.now();
  if (!link || expired || !existsSync(file)) throw new ApiError('not_found', `This job has no ${name} (artifacts exist only after a robot failure, for 7 days).`);
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
    changed(deps, row.cabinetId, row.id);
  }
  return expired.length;
}
