import type { FastifyBaseLogger } from 'fastify';
import { readInsurerSecrets, type InsurerLogin } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import {
  humanSteps,
  RobotError,
  type HumanStep,
  type InsurerCredentials,
  type RobotContext,
  type RobotResult,
} from '@courtier/adapter-kit';
import type { Insurer } from '../insurers/registry.js';
import { stopsUnattendedHumanSteps } from '../tenancy/service.js';
import type { BrowserRuntime } from '../robots/browser.js';
import { outsideReachNote } from '../robots/reach.js';
import type { PricedExtras } from '../devis/service.js';
import { recordArtifacts, savePortalChanges } from './artifacts.js';
import { completeJob, failJob, markSubmitted, reportProgress, requireMfa } from './lifecycle.js';
import type * as store from './store.js';
import * as queueStore from './store-queue.js';
import * as guardsStore from './store-guards.js';
import { resultExtras } from './robot-result.js';

/** A claimed job whose robot this process runs, from its claim until its slot is freed. */
export interface Running {
  row: store.JobRow;
  /**
   * Its robot's adapter, taken from the registry in the claim that recorded its version: a reload
   * of the insurers after the claim leaves a claimed job its adapter (none: not in this install).
   */
  adapter: Insurer | undefined;
  /** Who its robot logs in as, read in the claim's transaction (none: the demo insurer's account, or removed). */
  login: InsurerLogin | undefined;
  controller: AbortController;
  mfa?: { resolve: (code: string) => void; reject: (err: Error) => void; step: HumanStep };
  done: Promise<void>;
}

const CREDENTIALS_REMOVED = 'The portal credentials were removed after the job was enqueued.';

/**
 * Who a job's robot logs in as, for resuming its browser session (a key of this process's memory):
 * the insurer login (cabinet and insurer, which the claim runs one job at a time), its login name
 * and extra fields, and when its credentials were set (the demo insurer's account when none are),
 * so that credentials set again never resume the old ones' session. The adapter's version is in it
 * too: an updated adapter starts from a page of its own making, under its own manifest's reach. The
 * password is not read for it: a resumed session needs none.
 */
function loginKey(row: store.JobRow, version: string, configured: InsurerLogin | undefined, demo: InsurerCredentials | undefined): string {
  const who = configured ? [configured.login, configured.extra, configured.updatedAt] : [demo?.login];
  return JSON.stringify([row.cabinetId, row.robotCompagnie, version, ...who]);
}

/**
 * Logs an origin outside the insurer's reach that a robot's browser asked for, by its origin only (a
 * path or a query string may hold a client's personal data).
 */
export function logOutsideReach(logger: FastifyBaseLogger, who: Record<string, string>, origin: string, stopped: boolean): void {
  if (stopped) {
    logger.warn({ ...who, origin, blocked: true }, "the robot's browser asked for an origin its adapter does not declare: blocked");
  } else {
    logger.warn(
      { ...who, origin, blocked: false },
      "a redirect took the robot's browser to an origin its adapter does not declare: the browser follows a redirect " +
        'without filtering it, so that request went out; what its page asks for next is blocked',
    );
  }
}

/** The details of a portal_changed failure (what the step expected and found), if the run failed so. */
function portalChangesOf(err: unknown): Readonly<Record<string, unknown>> | undefined {
  return err instanceof RobotError && err.code === 'portal_changed' && typeof err.details?.step === 'string' ? err.details : undefined;
}

/** What a run needs of the pool that claimed its job. */
export interface RunOptions {
  logger: FastifyBaseLogger;
  runtime: BrowserRuntime;
  leaseMs: number;
  /** Writes the run's outcome in the commit group, and frees its slot there (written or not: the run is over). */
  settle: (entry: Running, write: () => void) => Promise<void>;
}

/**
 * Writes a failed run as its job's outcome; `redact` takes the session's secrets out of what is
 * stored and logged (a portal may echo them in an error); `note` ends the stored message (what the
 * browser was refused).
 */
export function failRun(
  deps: Deps,
  logger: FastifyBaseLogger,
  row: store.JobRow,
  err: unknown,
  redact: (text: string) => string = (text) => text,
  note?: string,
): void {
  const withNote = (message: string) => (note ? `${message} ${note}` : message);
  if (err instanceof RobotError) {
    // Neither a missing browser, a broker who did not type the code nor removed credentials says anything about the insurer.
    const countsForBreaker = !['mfa_timeout', 'human_required', 'browser_unavailable', 'cancelled', 'insurer_credentials_missing'].includes(
      err.code,
    );
    const step = err.details?.step;
    failJob(deps, row, {
      code: err.code,
      message: withNote(redact(err.message)),
      technical: err.kind === 'technical',
      countsForBreaker,
      ...(typeof step === 'string' ? { step: redact(step) } : {}),
    });
  } else {
    const message = redact((err as Error)?.message ?? String(err));
    logger.error({ err: { message, stack: redact((err as Error)?.stack ?? '') }, job_id: row.id }, 'robot crashed');
    failJob(deps, row, {
      code: 'robot_crashed',
      message: withNote(`The robot stopped unexpectedly: ${message}`),
      technical: true,
      countsForBreaker: true,
    });
  }
}

function humanRequired(why: string): RobotError {
  return new RobotError(
    'technical',
    'human_required',
    `The job stopped before the insurer's portal asked a person, as the cabinet's settings say for an integration's jobs (${why}). Price it from the console, or answer its steps with the setting on "wait".`,
  );
}

/**
 * Runs a claimed job's robot: its browser session, the credentials read when it logs in, the lease's
 * heartbeat, its MFA prompt, then its artifacts and outcome, written through `settle`.
 */
export async function runJob(deps: Deps, entry: Running, options: RunOptions): Promise<void> {
  const { row, controller, adapter } = entry;
  const configured = entry.login;
  const demo = !configured && row.environment === 'test' ? adapter?.testKeys?.demoCredentials : undefined;
  if (!adapter || (!configured && !demo)) {
    await options.settle(entry, () =>
      failJob(deps, row, {
        code: adapter ? 'insurer_credentials_missing' : 'insurer_unavailable',
        message: adapter ? CREDENTIALS_REMOVED : `No robot for ${row.robotCompagnie} in this install.`,
        technical: true,
        countsForBreaker: false,
      }),
    );
    return;
  }
  // Nobody to answer the portal: a login known to ask a person (its last test said so) stops before
  // the robot opens it, so that no code is sent to a phone nobody watches; any other stops at its ask.
  const nobodyThere = row.byIntegration && stopsUnattendedHumanSteps(deps, row.cabinetId);
  if (
    nobodyThere &&
    guardsStore.lastLoginTests(deps.db.orm, row.cabinetId).some((t) => t.compagnie === row.robotCompagnie && t.mfaRequired)
  ) {
    await options.settle(entry, () =>
      failRun(deps, options.logger, row, humanRequired('the last login test said the portal asks for a code')),
    );
    return;
  }
  const session = options.runtime.session(row.id, {
    secrets: [],
    login: loginKey(row, adapter.version, configured, demo),
    ...(adapter.reach ? { reach: adapter.reach } : {}),
    onOutsideReach: (origin, stopped) =>
      logOutsideReach(options.logger, { job_id: row.id, compagnie: row.robotCompagnie }, origin, stopped),
  });
  /** Read when the robot logs in; from then on, its session keeps the password out of traces and messages. */
  const credentials = (): InsurerCredentials => {
    // A demo insurer's public account: no secret to keep out of its traces.
    if (!configured) {
      if (demo) return demo;
      throw new RobotError('technical', 'insurer_credentials_missing', CREDENTIALS_REMOVED);
    }
    const secrets = readInsurerSecrets(deps, row.cabinetId, row.robotCompagnie);
    if (secrets === undefined) throw new RobotError('technical', 'insurer_credentials_missing', CREDENTIALS_REMOVED);
    session.knowSecrets([secrets.password, ...Object.values(secrets.extra)]);
    return { login: configured.login, password: secrets.password, extra: { ...configured.extra, ...secrets.extra } };
  };
  const heartbeat = setInterval(
    () => queueStore.extendLease(deps.db.orm, row.id, deps.clock.now() + options.leaseMs),
    Math.max(500, options.leaseMs / 3),
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
    ...humanSteps(
      adapter.humanSteps,
      (step) =>
        new Promise<string>((resolve, reject) => {
          if (controller.signal.aborted) return reject(new RobotError('technical', 'cancelled', 'The job was cancelled.'));
          if (requireMfa(deps, row, step) === null)
            return reject(new RobotError('technical', 'cancelled', 'The job left the running state.'));
          entry.mfa = { resolve, reject, step };
        }),
      !nobodyThere,
    ),
  };
  // Settle the browser first (screenshot and trace after a failure), then write the outcome:
  // a client that sees the job failed can fetch its artifacts at once.
  let outcome: { kind: 'done'; result: RobotResult; extras: PricedExtras } | { kind: 'error'; err: unknown } | { kind: 'aborted' };
  try {
    const result = await adapter.run(ctx, { produit: row.produit, dicData: JSON.parse(row.dicData) as Record<string, unknown> });
    outcome = { kind: 'done', result, extras: resultExtras(result) };
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
  const done = outcome.kind === 'done' ? outcome : undefined;
  const changes = outcome.kind === 'error' ? portalChangesOf(outcome.err) : undefined;
  const portalChanges = changes !== undefined && savePortalChanges(options.runtime.artifactsDir(row.id), changes, session.redact);
  await options.settle(entry, () => {
    if (artifacts.screenshot || artifacts.trace || portalChanges)
      recordArtifacts(deps, row, { screenshot: artifacts.screenshot !== null, trace: artifacts.trace !== null, portalChanges });
    if (outcome.kind === 'error') {
      const outside = session.outsideReach();
      failRun(deps, options.logger, row, outcome.err, session.redact, outside.size > 0 ? outsideReachNote(outside) : undefined);
    } else if (done && !completeJob(deps, row, done.result, done.extras)) {
      options.logger.info({ job_id: row.id }, 'robot finished after its job left the running state; result ignored');
    }
  });
}
