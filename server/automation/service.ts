import { hash as digest } from 'node:crypto';
import { pollUrl, type AutomationStatus, type DryRunResult, type TarificationRequest } from '../../shared/automation.js';
import type { ConsoleDryRun } from '../../shared/console-automation.js';
import { MAX_CLOCK_AHEAD_MS } from '../../shared/sync-protocol.js';
import { credentialsConfigured } from '../credentials/service.js';
import { atomically } from '../platform/db/atomically.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { startDevisPricing } from '../devis/service.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { canonicalJson } from '../platform/http/canonical-json.js';
import { creditBalance, debitForJob, walletOnHub, type DebitRefusal } from '../wallet/service.js';
import { othersKnownUntil } from '../sync/status.js';
import { webhookExists } from '../webhooks/service.js';
import { checkDicData, costOf, findProduct } from './catalogue.js';
import { breakerState, listBreakerStates, markTrial, readKillSwitch, readRobotPause } from './guards.js';
import { jobChanged } from './jobs.js';
import { jobRecords } from './sync.js';
import * as store from './store.js';
import * as quotaStore from './store-quota.js';

/**
 * What callers ask of the pricing engine (REST, the console, MCP): dry runs, enqueues and the
 * automation status. Cancels and MFA codes are in job-controls.ts; job reads in jobs.ts; what robots
 * report, in lifecycle.ts.
 */

const REPLAY_WINDOW_MS = 10 * 60 * 1000;
const QUOTA_WINDOW_MS = 60 * 60 * 1000;
export type Environment = store.JobRow['environment'];

function requestHash(request: { compagnie: string; produit: string; dicData: Record<string, unknown> }): string {
  return digest('sha256', canonicalJson({ compagnie: request.compagnie, produit: request.produit, dicData: request.dicData }), 'hex');
}

/**
 * The cabinet's hourly quota, and the next job's enqueue number. With sync on it is the cabinet's:
 * the other installs' jobs of the hour count too (their creation time is their word, believed up to
 * the hub's clock tolerance ahead), and `sinceHeard` is what this install enqueued since a pull last
 * brought it the other installs' jobs, which the offline allowance bounds (docs/SYNC.md, Credits).
 */
function quotaOf(deps: Deps, cabinetId: string) {
  const limit = deps.config.tarificationQuotaPerHour;
  const now = deps.clock.now();
  const since = now - QUOTA_WINDOW_MS;
  const { count, oldest, nextNumber } = quotaStore.enqueuesSince(deps.db.orm, cabinetId, since);
  const synced = walletOnHub(deps, cabinetId);
  const elsewhere = synced
    ? quotaStore.pulledJobsSince(deps.db.orm, cabinetId, since, now + MAX_CLOCK_AHEAD_MS)
    : { count: 0, oldest: null };
  const first = Math.min(oldest ?? Infinity, elsewhere.oldest ?? Infinity);
  const sinceHeard = synced ? quotaStore.ownJobsSince(deps.db.orm, cabinetId, othersKnownUntil(deps, cabinetId) ?? 0) : 0;
  return {
    limit,
    remaining: Math.max(0, limit - count - elsewhere.count),
    resetAt: first === Infinity ? null : first + QUOTA_WINDOW_MS,
    nextNumber,
    synced,
    sinceHeard,
  };
}

/**
 * The insurer whose robot runs a request: a test key's jobs always run on one of the install's demo
 * insurers — the one compagnie names, else one offering the product — so that integrators can try
 * everything without touching a real portal.
 */
function robotFor(deps: Deps, request: { compagnie: string; produit: string }, environment: Environment) {
  if (environment === 'test') {
    const demo = deps.insurers.forTestKey(request);
    if (!demo)
      throw new ApiError(
        'unknown_insurer',
        'Test keys run on the demo insurers, which this install does not offer (COURTIER_SANDBOX=false turns them off).',
      );
    return { robotCompagnie: demo.code, ...findProduct(deps, request.produit, demo.code) };
  }
  return { robotCompagnie: request.compagnie, ...findProduct(deps, request.produit, request.compagnie) };
}

/** A test key may use the demo insurer's public account without configuring it. */
function hasCredentials(deps: Deps, cabinetId: string, robotCompagnie: string, environment: Environment): boolean {
  return (
    (environment === 'test' && deps.insurers.get(robotCompagnie)?.testKeys !== undefined) ||
    credentialsConfigured(deps, cabinetId, robotCompagnie)
  );
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
 * The replay guard's answer: the newest job of the cabinet with the same request created within the
 * window, finished or not, whether this install enqueued it or pulled it from another install of
 * the cabinet (whose robots run it: the same pricing is not sent to the insurer twice because two
 * installs saw the same request). A pulled job's creation time is another machine's word: one that
 * says it is more than the hub's clock tolerance (MAX_CLOCK_AHEAD_MS) in the future does not count,
 * so that no job, forged or not, blocks a request longer than the window plus that tolerance after
 * it arrives, finished or not. See docs/SYNC.md.
 */
function previousRequest(deps: Deps, cabinetId: string, hash: string): store.JobRow | undefined {
  const now = deps.clock.now();
  return quotaStore.latestJobWithHash(deps.db.orm, cabinetId, hash, now - REPLAY_WINDOW_MS, now + MAX_CLOCK_AHEAD_MS);
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
  /** enqueuedBy integration: an API key's request, which nobody may be there to follow (the cabinet's unattended setting). */
  options: { retryOf?: string; enqueuedBy?: 'integration' | 'person' } = {},
): { job_id: string; status: 'pending'; poll_url: string } {
  const { product, robotCompagnie } = robotFor(deps, request, environment);
  const check = checkDicData(product, request.dicData);
  if (!check.ok) throw validationError(check.issues);
  if (request.callback_webhook_id !== undefined && !webhookExists(deps, cabinetId, request.callback_webhook_id)) {
    throw validationError([{ path: 'body.callback_webhook_id', message: 'no webhook subscription with this id in this cabinet' }]);
  }
  const cost = costOf(deps, product);
  const hash = requestHash({ compagnie: request.compagnie, produit: request.produit, dicData: check.data });

  const enqueued = atomically(deps.db, () => {
    const killSwitch = readKillSwitch(deps);
    if (killSwitch) {
      throw new ApiError('api_rpa_temporarily_disabled', `Robots are switched off on this install: ${killSwitch.reason} Retry later.`, {
        reason: killSwitch.reason,
        scope: 'install',
      });
    }
    const pause = readRobotPause(deps, cabinetId);
    if (pause) {
      throw new ApiError(
        'api_rpa_temporarily_disabled',
        `Your cabinet's robots are paused: ${pause.reason} An administrator can resume them in the console.`,
        {
          reason: pause.reason,
          scope: 'cabinet',
        },
      );
    }

    const breaker = breakerState(deps, robotCompagnie);
    if (breaker.state === 'open' || (breaker.state === 'half_open' && breaker.trialJobId !== null)) {
      const retryAfter = breaker.state === 'open' ? Math.ceil(breaker.retryAfterMs / 1000) : 60;
      throw new ApiError(
        'rpa_circuit_open',
        `Too many technical failures at ${robotCompagnie} lately; retry in ${retryAfter} s.`,
        { retry_after_seconds: retryAfter },
        { 'Retry-After': String(retryAfter) },
      );
    }

    if (!hasCredentials(deps, cabinetId, robotCompagnie, environment)) {
      throw new ApiError(
        'insurer_credentials_missing',
        `No portal credentials for ${robotCompagnie} in this cabinet. Set them in the console (Insurers) or with courtier insurers set-credentials.`,
      );
    }

    const quota = quotaOf(deps, cabinetId);
    if (quota.remaining === 0) {
      const resetAt = toIso(quota.resetAt ?? deps.clock.now());
      throw new ApiError(
        'rpa_quota_exceeded',
        `This cabinet used its ${quota.limit} tarifications of the hour; the next one is possible at ${resetAt}.`,
        { reset_at: resetAt, limit: quota.limit },
      );
    }
    const runsAllowance = deps.config.offlineQuotaAllowance;
    if (quota.synced && quota.sinceHeard >= runsAllowance) {
      throw new ApiError(
        'offline_allowance_exhausted',
        `This install has enqueued ${quota.sinceHeard} tarifications since it last received the cabinet's other computers' runs from the hub, which the cabinet's hourly quota counts; at most ${runsAllowance} are allowed so. No job was created: once this install reaches the hub again, retry with the same Idempotency-Key.`,
        { allowance_of: 'runs', used: quota.sinceHeard, allowance: runsAllowance },
      );
    }

    const previous = previousRequest(deps, cabinetId, hash);
    // A person's Retry of a failed job is not a replay of it.
    if (previous && previous.id !== options.retryOf) {
      const retryAfter = Math.ceil((previous.createdAt + REPLAY_WINDOW_MS - deps.clock.now()) / 1000);
      const ago = Math.max(0, Math.round((deps.clock.now() - previous.createdAt) / 1000));
      const where = previous.enqueueNumber === null ? ' on another computer of the cabinet' : '';
      throw new ApiError(
        'rpa_replay_detected',
        `The same request was enqueued ${ago} s ago${where} as job ${previous.id}; poll that job, or wait ${retryAfter} s.`,
        { retry_after_seconds: retryAfter, job_id: previous.id, job_status: previous.status },
        { 'Retry-After': String(retryAfter) },
      );
    }

    const now = deps.clock.now();
    const jobId = timeOrderedUuid(now, deps.randomBytes);
    const refused = debitForJob(deps, cabinetId, jobId, cost, quota.synced);
    if (refused) throw debitRefused(cost, refused);
    const devisId = startDevisPricing(deps, cabinetId, {
      devisId: request.devis_id,
      clientId: request.client_id,
      compagnie: request.compagnie,
      produit: request.produit,
      dicData: check.data,
      jobId,
    });
    const queued: store.JobStep = { status: 'pending', step: 'queued', percent: 0, at: now };
    const row: store.JobRow = {
      id: jobId,
      cabinetId,
      compagnie: request.compagnie,
      produit: request.produit,
      dicData: JSON.stringify(check.data),
      requestHash: hash,
      devisId,
      status: queued.status,
      progressStep: queued.step,
      progressPercent: queued.percent,
      costCredits: cost,
      creditsConsumed: null,
      resultTarifCents: null,
      resultSuspens: null,
      errorCode: null,
      errorMessage: null,
      errorTechnical: null,
      errorStep: null,
      byIntegration: options.enqueuedBy === 'integration',
      submitted: false,
      attempts: 0,
      leaseUntil: null,
      mfaChallenge: null,
      mfaStep: null,
      mfaRequestedAt: null,
      mfaExpiresAt: null,
      callbackWebhookId: request.callback_webhook_id ?? null,
      environment,
      robotCompagnie,
      adapterVersion: null,
      artifacts: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      enqueueNumber: quota.nextNumber,
      timeline: store.firstTimeline(queued),
    };
    // The cabinet's other installs see it queued: their replay guard answers with it.
    jobRecords.insert(deps, row);
    if (breaker.state === 'half_open') markTrial(deps, robotCompagnie, jobId);
    return { job_id: jobId, status: 'pending' as const, poll_url: pollUrl(jobId) };
  });
  jobChanged(deps, cabinetId, enqueued.job_id);
  // The worker claims it on a later turn, once the job (and a POST's stored response) committed.
  deps.jobQueue.notify();
  return enqueued;
}

/** The wallet's refusal in words: too few credits, or an install that must reach its hub before it spends more. */
function debitRefused(cost: number, refused: DebitRefusal): ApiError {
  if (refused.code === 'credits_exhausted') {
    return new ApiError(
      'credits_exhausted',
      `This run costs ${cost} credits and the wallet holds ${refused.balance}. No job was created; top up, then retry with the same Idempotency-Key.`,
      {
        required_credits: cost,
        balance: refused.balance,
      },
    );
  }
  return new ApiError(
    'offline_allowance_exhausted',
    `This install has spent ${refused.unconfirmed} credits that the cabinet's hub has not acknowledged yet, and may spend at most ${refused.allowance} so; this run costs ${cost}. No job was created: once this install reaches the hub again, retry with the same Idempotency-Key.`,
    { allowance_of: 'credits', used: refused.unconfirmed, allowance: refused.allowance, required_credits: cost, balance: refused.balance },
  );
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
