import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { LastLoginTest, TestLoginResult } from '../../shared/console-insurers.js';
import { credentialSecrets, readInsurerCredentials } from '../credentials/service.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { humanSteps, RobotError, type RobotContext } from '@courtier/adapter-kit';
import type { BrowserRuntime } from '../robots/browser.js';
import { outsideReachNote } from '../robots/reach.js';
import { logOutsideReach } from './job-run.js';
import { readKillSwitch, readRobotPause } from './guards.js';
import { insurerLoginBusy } from './jobs.js';
import * as store from './store-guards.js';

/** A login check gives up after this long (the portal's own timeouts are shorter). */
const LOGIN_CHECK_TIMEOUT_MS = 60_000;
/**
 * How long the login stays held without renewal: a check renews it while it runs (an adapter may
 * outlive its timeout), and a crashed one frees the login this long after its last renewal.
 */
const LOGIN_HOLD_MS = 30_000;

/**
 * Runs an insurer robot's login step with the cabinet's credentials, in its own browser context
 * like a job's (filtered by the insurer's reach like a job's), and says what the portal answered.
 * Refused while a robot uses that login (portals log out a session when the same account logs in
 * twice).
 */
export async function testInsurerLogin(
  deps: Deps,
  runtime: BrowserRuntime,
  logger: FastifyBaseLogger,
  cabinetId: string,
  code: string,
): Promise<TestLoginResult> {
  const adapter = deps.insurers.get(code);
  if (!adapter) throw new ApiError('unknown_insurer', `No insurer with code ${code}.`);
  const credentials = readInsurerCredentials(deps, cabinetId, code);
  if (!credentials)
    throw new ApiError('insurer_credentials_missing', `No portal credentials for ${adapter.name} in this cabinet: set them first.`);
  if (!adapter.verifyLogin)
    return { ok: false, code: 'not_supported', message: `The ${adapter.name} robot cannot check a login on its own.` };
  const id = `login-check-${randomUUID()}`;
  holdLogin(deps, cabinetId, code, id, adapter.name);
  const renewal = setInterval(() => {
    try {
      store.renewLoginCheck(deps.db.orm, id, deps.clock.now() + LOGIN_HOLD_MS);
    } catch {
      // The database was busy: the next renewal comes well before the hold runs out.
    }
  }, LOGIN_HOLD_MS / 3);
  renewal.unref();
  // No login key: a check always logs in afresh (a resumed session would not test the password).
  const session = runtime.session(id, {
    secrets: credentialSecrets(deps, code, credentials),
    ...(adapter.reach ? { reach: adapter.reach } : {}),
    onOutsideReach: (origin, stopped) => logOutsideReach(logger, { login_check_id: id, compagnie: code }, origin, stopped),
  });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LOGIN_CHECK_TIMEOUT_MS);
  const ctx: RobotContext = {
    jobId: id,
    credentials: () => credentials,
    signal: controller.signal,
    openPage: () => session.openPage(),
    withSecrets: (secrets, work) => session.withSecrets(secrets, work),
    progress: () => undefined,
    markSubmitted: () => undefined,
    ...humanSteps(adapter.humanSteps, () =>
      Promise.reject(new RobotError('technical', 'mfa_not_available', 'A login check does not ask a person anything.')),
    ),
  };
  try {
    const check = await adapter.verifyLogin(ctx);
    return remember(deps, cabinetId, code, { ok: true, mfa_required: check.mfa });
  } catch (err) {
    const outside = session.outsideReach();
    const withNote = (message: string) => (outside.size > 0 ? `${message} ${outsideReachNote(outside)}` : message);
    if (err instanceof RobotError)
      return remember(deps, cabinetId, code, { ok: false, code: err.code, message: withNote(session.redact(err.message)) });
    return remember(deps, cabinetId, code, {
      ok: false,
      code: 'robot_crashed',
      message: withNote(session.redact(`The robot stopped unexpectedly: ${String((err as Error)?.message ?? err).split('\n')[0]}`)),
    });
  } finally {
    clearTimeout(timer);
    clearInterval(renewal);
    await session.finish('abandoned');
    store.endLoginCheck(deps.db.orm, id);
  }
}

/**
 * Takes the insurer login for the check, in one transaction with the test that nothing uses it: a
 * job running on it refuses the check, and the queue starts no job on it until the check ends.
 */
function holdLogin(deps: Deps, cabinetId: string, code: string, checkId: string, insurerName: string): void {
  deps.db.immediateTransaction(() => {
    // A login check is a robot on the insurer's portal: not while robots are switched off.
    const off = readKillSwitch(deps);
    if (off)
      throw new ApiError('api_rpa_temporarily_disabled', `Robots are switched off on this install: ${off.reason}`, {
        reason: off.reason,
        scope: 'install',
      });
    const paused = readRobotPause(deps, cabinetId);
    if (paused) {
      throw new ApiError(
        'api_rpa_temporarily_disabled',
        `Your cabinet's robots are paused (${paused.reason}): resume them to test the login.`,
        { reason: paused.reason, scope: 'cabinet' },
      );
    }
    const now = deps.clock.now();
    if (insurerLoginBusy(deps, cabinetId, code) || store.loginCheckRunning(deps.db.orm, cabinetId, code, now)) {
      throw new ApiError(
        'insurer_login_busy',
        `A robot is logged in to ${insurerName} with this account right now; test the login once it has finished.`,
      );
    }
    store.startLoginCheck(deps.db.orm, { cabinetId, robotCompagnie: code, checkId, leaseUntil: now + LOGIN_HOLD_MS });
  });
}

/** Keeps the outcome, so that the console's insurer status says it after a reload. */
function remember(deps: Deps, cabinetId: string, compagnie: string, result: TestLoginResult): TestLoginResult {
  store.saveLoginTest(deps.db.orm, {
    cabinetId,
    compagnie,
    ok: result.ok,
    mfaRequired: result.ok && result.mfa_required,
    code: result.ok ? null : result.code,
    message: result.ok ? null : result.message,
    testedAt: deps.clock.now(),
  });
  return result;
}

/** The last test of each of the cabinet's insurer logins, by insurer code. */
export function lastLoginTests(deps: Deps, cabinetId: string): Map<string, LastLoginTest> {
  return new Map(
    store
      .lastLoginTests(deps.db.orm, cabinetId)
      .map((t) => [t.compagnie, { ok: t.ok, mfa_required: t.mfaRequired, code: t.code, message: t.message, tested_at: toIso(t.testedAt) }]),
  );
}

export function forgetLoginTest(deps: Deps, cabinetId: string, compagnie: string): void {
  store.forgetLoginTest(deps.db.orm, cabinetId, compagnie);
}
