import type { FastifyBaseLogger } from 'fastify';
import { insurerLogin, readInsurerPassword, type InsurerLogin } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { RobotError, type InsurerCredentials, type RobotContext, type RobotResult } from '../robots/adapter.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { readKillSwitch } from './guards.js';
import { purgeExpiredArtifacts, recordArtifacts } from './artifacts.js';
import type { RobotControl } from './robot-control.js';
import {
  completeJob,
  expiredMfaJobs,
  failJob,
  jobClaimed,
  markSubmitted,
  recoverAbandonedJobs,
  reportProgress,
  requireMfa,
  resumeWithCode,
} from './lifecycle.js';
import type * as store from './store.js';
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

interface Running {
  row: store.JobRow;
  /** Who its robot logs in as, read in the claim's transaction (none: the demo insurer's account, or removed). */
  login: InsurerLogin | undefined;
  controller: AbortController;
  mfa?: { resolve: (code: string) => void; reject: (err: Error) => void };
  done: Promise<void>;
}

const TICK_MS = 1000;
/** How often the artifacts of finished jobs are checked against their 7-day retention. */
const ARTIFACT_SWEEP_MS = 60 * 60 * 1000;
const CREDENTIALS_REMOVED = 'The portal credentials were removed after the job was enqueued.';

/**
 * Who a job's robot logs in as, for resuming its browser session (a key of this process's memory):
 * the insurer login (cabinet and insurer, which the claim runs one job at a time), its login name
 * and extra fields, and when its credentials were set (the demo insurer's account when none are),
 * so that credentials set again never resume the old ones' session. The password is not read for
 * it: a resumed session needs none.
 */
function loginKey(row: store.JobRow, configured: InsurerLogin | undefined, demo: InsurerCredentials | undefined): string {
  const who = configured ? [configured.login, configured.extra, configured.updatedAt] : [demo?.login];
  return JSON.stringify([row.cabinetId, row.robotCompagnie, ...who]);
}

/**
 * The robot worker pool, in the server process: claims pending jobs with a lease (at most one per
 * insurer login), heartbeats while the robot runs, relays MFA codes, and recovers jobs whose
 * worker died. The database is the truth: every write is guarded by the job's expected status,
 * so a cancelled job's late result is simply ignored.
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

  /** `redact` takes the session's secrets out of what is stored and logged (a portal may echo them in an error). */
  function fail(row: store.JobRow, err: unknown, redact: (text: string) => string = (text) => text): void {
    if (err instanceof RobotError) {
      // Neither a missing browser, a broker who did not type the code nor removed credentials says anything about the insurer.
      const countsForBreaker = !['mfa_timeout', 'browser_unavailable', 'cancelled', 'insurer_credentials_missing'].includes(err.code);
      failJob(deps, row, { code: err.code, message: redact(err.message), technical: err.kind === 'technical', countsForBreaker });
    } else {
      const message = redact((err as Error)?.message ?? String(err));
      options.logger.error({ err: { message, stack: redact((err as Error)?.stack ?? '') }, job_id: row.id }, 'robot crashed');
      failJob(deps, row, {
        code: 'robot_crashed',
        message: `The robot stopped unexpectedly: ${message}`,
        technical: true,
        countsForBreaker: true,
      });
    }
  }

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

  async function run(entry: Running): Promise<void> {
    const { row, controller } = entry;
    const adapter = deps.insurers.get(row.robotCompagnie);
    const configured = entry.login;
    const demo = !configured && row.environment === 'test' ? adapter?.testKeys?.demoCredentials : undefined;
    if (!adapter || (!configured && !demo)) {
      await settle(entry, () =>
        failJob(deps, row, {
          code: adapter ? 'insurer_credentials_missing' : 'insurer_unavailable',
          message: adapter ? CREDENTIALS_REMOVED : `No robot for ${row.robotCompagnie} in this install.`,
          technical: true,
          countsForBreaker: false,
        }),
      );
      return;
    }
    const session = options.runtime.session(row.id, { secrets: [], login: loginKey(row, configured, demo) });
    /** Read when the robot logs in; from then on, its session keeps the password out of traces and messages. */
    const credentials = (): InsurerCredentials => {
      // A demo insurer's public account: no secret to keep out of its traces.
      if (!configured) {
        if (demo) return demo;
        throw new RobotError('technical', 'insurer_credentials_missing', CREDENTIALS_REMOVED);
      }
      const password = readInsurerPassword(deps, row.cabinetId, row.robotCompagnie);
      if (password === undefined) throw new RobotError('technical', 'insurer_credentials_missing', CREDENTIALS_REMOVED);
      session.knowSecrets([password]);
      return { login: configured.login, password, extra: configured.extra };
    };
    const heartbeat = setInterval(
      () => queueStore.extendLease(deps.db.orm, row.id, deps.clock.now() + leaseMs),
      Math.max(500, leaseMs / 3),
    );
    heartbeat.unref();
    const ctx: RobotContext = {
      jobId: row.id,
      openPage: () => session.openPage(),
      withSecrets: (secrets, work) => session.withSecrets(secrets, work),
      credentials,
      signal: controller.signal,
      progress: (step, percent) => reportProgress(deps, row, step, percent),
      markSubmitted: () => markSubmitted(deps, row),
      requestMfa: (challenge) =>
        new Promise<string>((resolve, reject) => {
          if (controller.signal.aborted) return reject(new RobotError('technical', 'cancelled', 'The job was cancelled.'));
          if (requireMfa(deps, row, challenge) === null)
            return reject(new RobotError('technical', 'cancelled', 'The job left the running state.'));
          entry.mfa = { resolve, reject };
        }),
    };
    // Settle the browser first (screenshot and trace after a failure), then write the outcome:
    // a client that sees the job failed can fetch its artifacts at once.
    let outcome: { kind: 'done'; result: RobotResult } | { kind: 'error'; err: unknown } | { kind: 'aborted' };
    try {
      outcome = {
        kind: 'done',
        result: await adapter.run(ctx, { produit: row.produit, dicData: JSON.parse(row.dicData) as Record<string, unknown> }),
      };
    } catch (err) {
      outcome = controller.signal.aborted ? { kind: 'aborted' } : { kind: 'error', err };
    } finally {
      clearInterval(heartbeat);
    }
    const artifacts = await session.finish(outcome.kind === 'done' ? 'succeeded' : outcome.kind === 'error' ? 'failed' : 'abandoned');
    if (artifacts.traceDiscarded) {
      options.logger.warn(
        { job_id: row.id, compagnie: row.robotCompagnie },
        'the browser trace held a secret and was not kept: the robot typed it outside withSecrets',
      );
    }
    // Stopped or cancelled: no outcome is written (a stopped job's lease runs out and the next start recovers it).
    const result = outcome.kind === 'done' ? outcome.result : undefined;
    await settle(entry, () => {
      if (artifacts.screenshot || artifacts.trace)
        recordArtifacts(deps, row, { screenshot: artifacts.screenshot !== null, trace: artifacts.trace !== null });
      if (outcome.kind === 'error') fail(row, outcome.err, session.redact);
      else if (result && !completeJob(deps, row, result)) {
        options.logger.info({ job_id: row.id }, 'robot finished after its job left the running state; result ignored');
      }
    });
  }

  /**
   * Leases pending jobs to the free slots, in the caller's transaction: each takes its slot at once
   * (added to `into` as it is claimed) and its robot starts once that transaction has committed.
   */
  function claimForFreeSlots(into: Running[]): void {
    // Switched off install-wide: nothing starts (a cabinet's own pause is honoured by the claim's query).
    if (readKillSwitch(deps)) return;
    const held = runningJobs.size < deps.config.workerConcurrency ? options.heldBack?.() : undefined;
    while (runningJobs.size < deps.config.workerConcurrency) {
      const row = queueStore.claimNextJob(deps.db.orm, deps.clock.now(), leaseMs, held);
      if (!row) return;
      jobClaimed(deps, row);
      const login = insurerLogin(deps, row.cabinetId, row.robotCompagnie);
      const entry: Running = { row, login, controller: new AbortController(), done: Promise.resolve() };
      runningJobs.set(row.id, entry);
      into.push(entry);
    }
  }

  /** A committed claim's robot runs; one stopped (or cancelled) meanwhile frees its slot and leaves its lease to run out. */
  function start(entry: Running): void {
    if (entry.controller.signal.aborted) return release(entry);
    entry.done = run(entry)
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
      else fail(row, timeout);
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
    abort(jobId) {
      const entry = runningJobs.get(jobId);
      if (!entry) return;
      entry.controller.abort();
      entry.mfa?.reject(new RobotError('technical', 'cancelled', 'The job was cancelled.'));
    },
    running: () => runningJobs.size,
  };
}
