import type { AutomationStatus } from '../../shared/automation.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import * as guardStore from './store-guards.js';
import * as store from './store-queue.js';

const BREAKER_THRESHOLD = 5;
const BREAKER_OPEN_MS = 10 * 60 * 1000;
const KILL_SWITCH = 'robots_disabled';

/** A switch that holds robots off (the install-wide kill switch, or a cabinet's pause): why, and since when, as the status shows it. */
export type RobotSwitch = NonNullable<AutomationStatus['kill_switch']>;

/** The install-wide kill switch: set by configuration (or the IT policy), or at run time by `courtier robots disable` and the tray. */
export function readKillSwitch(deps: Pick<Deps, 'db' | 'config'>): RobotSwitch | null {
  const stored = guardStore.readSetting(deps.db.orm, KILL_SWITCH);
  if (stored) return JSON.parse(stored) as RobotSwitch;
  return deps.config.robotsDisabled
    ? { reason: 'Robots are disabled by configuration (COURTIER_ROBOTS_DISABLED).', since: toIso(0) }
    : null;
}

export function setKillSwitch(deps: Pick<Deps, 'db' | 'clock' | 'jobQueue'>, reason: string | null): void {
  const now = deps.clock.now();
  guardStore.writeSetting(
    deps.db.orm,
    KILL_SWITCH,
    reason === null ? null : JSON.stringify({ reason, since: toIso(now) } satisfies RobotSwitch),
    now,
  );
  // Switched back on: the jobs that waited are claimable now (the CLI, another process, has no listener).
  if (reason === null) deps.jobQueue.notify();
}

/** A cabinet's own pause of its robots (its admins, from the console), or null. Never another cabinet's. */
export function readRobotPause(deps: Pick<Deps, 'db'>, cabinetId: string): RobotSwitch | null {
  const row = guardStore.findRobotPause(deps.db.orm, cabinetId);
  return row ? { reason: row.reason, since: toIso(row.createdAt) } : null;
}

/** Pauses a cabinet's robots (by one of its admins; the reason says who when none is given), or resumes them with null. */
export function setRobotPause(
  deps: Pick<Deps, 'db' | 'clock' | 'jobQueue'>,
  cabinetId: string,
  pause: { reason: string | undefined; by: { userId: string; email: string } } | null,
): void {
  if (pause === null) {
    guardStore.deleteRobotPause(deps.db.orm, cabinetId);
    // Resumed: the cabinet's waiting jobs are claimable now.
    deps.jobQueue.notify();
    return;
  }
  const reason = pause.reason ?? `Paused from the console by ${pause.by.email}.`;
  guardStore.saveRobotPause(deps.db.orm, { cabinetId, reason, pausedBy: pause.by.userId, createdAt: deps.clock.now() });
}

export type BreakerState =
  { state: 'closed' } | { state: 'open'; retryAfterMs: number } | { state: 'half_open'; trialJobId: string | null };

/**
 * Closed; open until a time; then half-open, letting exactly one trial job through. A trial job
 * that can no longer run (cancelled, or its cabinet paused its robots) holds no one back: the
 * next job becomes the trial, so one cabinet's pause never shuts an insurer for the others.
 */
export function breakerState(deps: Pick<Deps, 'db' | 'clock'>, compagnie: string): BreakerState {
  const row = guardStore.findBreaker(deps.db.orm, compagnie);
  if (!row || row.openUntil === null) return { state: 'closed' };
  const now = deps.clock.now();
  if (now < row.openUntil) return { state: 'open', retryAfterMs: row.openUntil - now };
  const trialJobId = row.trialJobId !== null && store.jobMayRun(deps.db.orm, row.trialJobId) ? row.trialJobId : null;
  return { state: 'half_open', trialJobId };
}

export function markTrial(deps: Pick<Deps, 'db'>, compagnie: string, jobId: string): void {
  const row = guardStore.findBreaker(deps.db.orm, compagnie);
  if (row) guardStore.saveBreaker(deps.db.orm, { ...row, trialJobId: jobId });
}

/** After a job's run: a technical failure counts; anything else (success, business refusal) closes. */
export function recordInsurerOutcome(deps: Pick<Deps, 'db' | 'clock'>, compagnie: string, technicalFailure: boolean): void {
  if (!technicalFailure) {
    guardStore.closeBreaker(deps.db.orm, compagnie);
    return;
  }
  const row = guardStore.findBreaker(deps.db.orm, compagnie) ?? { compagnie, consecutiveFailures: 0, openUntil: null, trialJobId: null };
  const failures = row.consecutiveFailures + 1;
  const trip = failures >= BREAKER_THRESHOLD || row.openUntil !== null;
  guardStore.saveBreaker(deps.db.orm, {
    compagnie,
    consecutiveFailures: failures,
    openUntil: trip ? deps.clock.now() + BREAKER_OPEN_MS : null,
    trialJobId: null,
  });
}

export function listBreakerStates(deps: Pick<Deps, 'db' | 'clock'>) {
  const now = deps.clock.now();
  return guardStore.listBreakers(deps.db.orm).map((row) => ({
    compagnie: row.compagnie,
    state: row.openUntil === null ? ('closed' as const) : now < row.openUntil ? ('open' as const) : ('half_open' as const),
    consecutive_failures: row.consecutiveFailures,
    open_until: row.openUntil === null ? null : toIso(row.openUntil),
  }));
}
