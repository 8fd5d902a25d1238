import type { FastifyBaseLogger } from 'fastify';
import { insurerLogin } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { RobotError } from '@courtier/adapter-kit';
import type { BrowserRuntime } from '../robots/browser.js';
import { readKillSwitch } from './guards.js';
import { purgeExpiredArtifacts } from './artifacts.js';
import { failRun, runJob, type Running, type RunOptions } from './job-run.js';
import type { RobotControl } from './robot-control.js';
import { expiredMfaJobs, jobClaimed, recoverAbandonedJobs, resumeWithCode } from './lifecycle.js';
import * as queueStore from './store-queue.js';

/** The pool: the service's RobotControl, and its own life (started and stopped by the app). */
export interface Worker extends RobotControl {
  /** Starts ticking, and claiming whenever deps.jobQueue says a job may be claimable. */
  start(): void;
  /** Aborts running robots and waits for them to settle. */
  stop(): Promise<void>;
  /** One round of housekeeping and claiming, by the injected clock (tests call it after moving time). */
  tick(): void;
  /** Waits until no robot is running and nothing is claimable (tests). */
  idle(): Promise<void>;
}

const TICK_MS = 1000;
/** How often the artifacts of finished jobs are checked against their 7-day retention. */
const ARTIFACT_SWEEP_MS = 60 * 60 * 1000;

/**
 * The robot worker pool, in the server process: claims pending jobs with a lease (at most one per
 * insurer login), runs their robots (job-run.ts, which heartbeats while a robot runs), relays MFA
 * codes, and recovers jobs whose worker died. The database is the truth: every write is guarded by
 * the job's expected status, so a cancelled job's late result is simply ignored.
 */
export function createWorker(
  deps: Deps,
  options: {
    logger: FastifyBaseLogger;
    runtime: BrowserRuntime;
    /** Jobs that must not start yet, asked at each claim (the sync's: cabinetsAwaitingHub). */
    heldBack?: () => queueStore.HeldBack;
  },
): Worker {
  const leaseMs = deps.config.jobLeaseSeconds * 1000;
  const runningJobs = new Map<string, Running>();
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;
  let started = false;
  let lastArtifactSweep = Number.NEGATIVE_INFINITY;
  /** A claim waits in the commit group: further requests are answered by it. */
  let claimRequested = false;

  /**
   * Frees a run's slot, and asks for the next claim. Called from inside the commit group's
   * transaction when the run wrote an outcome, so that the claim joins that transaction.
   */
  function release(entry: Running): void {
    if (runningJobs.get(entry.row.id) !== entry) return;
    runningJobs.delete(entry.row.id);
    if (started) requestClaim();
  }

  /** Writes a run's outcome in the commit group, and frees its slot there (written or not: the run is over). */
  async function settle(entry: Running, write: () => void): Promise<void> {
    await deps.db.commitGroup.run(() => {
      try {
        write();
      } finally {
        release(entry);
      }
    });
  }

  const runOptions: RunOptions = { logger: options.logger, runtime: options.runtime, leaseMs, settle };

  /**
   * Leases pending jobs to the free slots, in the caller's transaction: each takes its slot at once
   * (added to `into` as it is claimed) and its robot starts once that transaction has committed.
   */
  function claimForFreeSlots(into: Running[]): void {
    // Switched off install-wide: nothing starts (a cabinet's own pause is honoured by the claim's query).
    if (readKillSwitch(deps)) return;
    if (runningJobs.size >= deps.config.workerConcurrency) return;
    const held = options.heldBack?.();
    // The registry as this turn sees it: the claim records the version of the very adapter the job gets.
    const adapterVersions = Object.fromEntries(deps.insurers.list().map((insurer) => [insurer.code, insurer.version]));
    while (runningJobs.size < deps.config.workerConcurrency) {
      const row = queueStore.claimNextJob(deps.db.orm, deps.clock.now(), leaseMs, { held, adapterVersions });
      if (!row) return;
      jobClaimed(deps, row);
      const login = insurerLogin(deps, row.cabinetId, row.robotCompagnie);
      const adapter = deps.insurers.get(row.robotCompagnie);
      const entry: Running = { row, adapter, login, controller: new AbortController(), done: Promise.resolve() };
      runningJobs.set(row.id, entry);
      into.push(entry);
    }
  }

  /** A committed claim's robot runs; one stopped (or cancelled) meanwhile frees its slot and leaves its lease to run out. */
  function start(entry: Running): void {
    if (entry.controller.signal.aborted) return release(entry);
    entry.done = runJob(deps, entry, runOptions)
      .catch((err: unknown) => options.logger.error({ err, job_id: entry.row.id }, 'worker error'))
      .finally(() => release(entry));
  }

  /** Claims released by a failed transaction give their slots back. */
  function unclaim(claimed: readonly Running[]): void {
    for (const entry of claimed) if (runningJobs.get(entry.row.id) === entry) runningJobs.delete(entry.row.id);
  }

  /** The tick's claim: a transaction of its own, at once. */
  function claim(): void {
    const claimed: Running[] = [];
    try {
      deps.db.immediateTransaction(() => claimForFreeSlots(claimed));
    } catch (err) {
      unclaim(claimed);
      throw err;
    }
    claimed.forEach(start);
  }

  /**
   * A job was enqueued or a slot freed: claim in the commit group, with the outcomes written in the
   * same turn (one commit for the finished jobs and their successors instead of one each). Housekeeping
   * (MFA expiries, leases, recovery, artifacts) stays on the timer: run per job, it cost every job a
   * lease write and two queries.
   */
  function requestClaim(): void {
    if (claimRequested) return;
    claimRequested = true;
    const claimed: Running[] = [];
    let ran = false;
    deps.db.commitGroup
      .run(() => {
        ran = true;
        claimRequested = false;
        if (started) claimForFreeSlots(claimed);
      })
      .then(
        () => claimed.forEach(start),
        (err: unknown) => {
          // Never ran (its transaction could not begin): the next request must not wait for it.
          if (!ran) claimRequested = false;
          unclaim(claimed);
          options.logger.error({ err }, 'claiming a job failed');
        },
      );
  }

  function tick(): void {
    for (const row of expiredMfaJobs(deps)) {
      const entry = runningJobs.get(row.id);
      const timeout = new RobotError('technical', 'mfa_timeout', 'No MFA code was given within 5 minutes.');
      if (entry?.mfa) entry.mfa.reject(timeout);
      else failRun(deps, options.logger, row, timeout);
    }
    // This process's own robots are alive whatever the clock did: renew their leases before
    // looking for abandoned jobs, so that only a dead worker's jobs are recovered.
    for (const entry of runningJobs.values()) queueStore.extendLease(deps.db.orm, entry.row.id, deps.clock.now() + leaseMs);
    recoverAbandonedJobs(deps);
    sweepArtifacts();
    options.runtime.closeIdleSessions().catch((err: unknown) => options.logger.warn({ err }, 'closing idle browser sessions failed'));
    claim();
  }

  /** While the service runs, not only at start: artifacts past their retention are deleted within the hour. */
  function sweepArtifacts(): void {
    const now = deps.clock.now();
    // A clock set back sweeps at once rather than waiting for it to catch up.
    if (now >= lastArtifactSweep && now - lastArtifactSweep < ARTIFACT_SWEEP_MS) return;
    lastArtifactSweep = now;
    try {
      const removed = purgeExpiredArtifacts(deps, (jobId) => options.runtime.removeArtifacts(jobId)) + options.runtime.purgeArtifacts();
      if (removed > 0) options.logger.info({ removed }, 'robot artifacts past their 7-day retention deleted');
    } catch (err) {
      // A file that cannot be deleted now is tried again at the next sweep; jobs are still claimed.
      options.logger.warn({ err }, 'deleting old robot artifacts failed');
    }
  }

  function safeTick(): void {
    try {
      tick();
    } catch (err) {
      options.logger.error({ err }, 'worker tick failed');
    }
  }

  return {
    start() {
      if (started) return;
      started = true;
      timer = setInterval(safeTick, TICK_MS);
      timer.unref();
      // The signal fires on a later turn than the enqueue, so the job it announces has committed.
      unlisten = deps.jobQueue.listen(requestClaim);
      safeTick();
    },
    async stop() {
      started = false;
      clearInterval(timer);
      unlisten?.();
      for (const entry of runningJobs.values()) entry.controller.abort();
      await Promise.allSettled([...runningJobs.values()].map((e) => e.done));
    },
    tick,
    async idle() {
      for (;;) {
        tick();
        if (runningJobs.size === 0) return;
        await Promise.allSettled([...runningJobs.values()].map((e) => e.done));
      }
    },
    answerMfa(cabinetId, jobId, code) {
      const entry = runningJobs.get(jobId);
      if (!entry?.mfa || entry.row.cabinetId !== cabinetId) return false;
      if (!resumeWithCode(deps, cabinetId, jobId)) return false;
      const { resolve } = entry.mfa;
      entry.mfa = undefined;
      resolve(code);
      return true;
    },
    mfaImage(cabinetId, jobId) {
      const entry = runningJobs.get(jobId);
      const step = entry?.row.cabinetId === cabinetId ? entry.mfa?.step : undefined;
      return step?.kind === 'captcha' ? { mime: step.image.mime, data: Buffer.from(step.image.base64, 'base64') } : undefined;
    },
    abort(jobId) {
      const entry = runningJobs.get(jobId);
      if (!entry) return;
      entry.controller.abort();
      entry.mfa?.reject(new RobotError('technical', 'cancelled', 'The job was cancelled.'));
    },
    running: () => runningJobs.size,
  };
}
