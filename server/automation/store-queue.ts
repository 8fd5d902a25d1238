import { and, eq, gt, inArray, isNotNull, lt, lte, notExists, notInArray, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import { ACTIVE_STATUSES } from '../../shared/automation.js';
import type { Orm } from '../platform/db/open.js';
import { inJsonArray, preparedQuery } from '../platform/db/prepared-query.js';
import { insurerLoginChecks, jobs, robotPauses } from './schema.js';
import { appendStep, inStatuses, type JobRow } from './store.js';

/**
 * The worker's side of the queue: the claim of the next job, its lease, and the jobs whose lease or
 * code ran out. Only this install's own jobs (those with an enqueue number): a job pulled from
 * another install runs on that install's robots, never on this one's.
 */

const P = sql.placeholder;

const pending = alias(jobs, 'pending');
const checks = alias(insurerLoginChecks, 'checks');

/**
 * The pending jobs this install enqueued that may start now, oldest first: of a cabinet whose robots
 * are not paused, on an insurer login (cabinet + insurer) that no job and no login check is using,
 * and not held back (queued before `queuedBefore` in one of `heldCabinetIds`). The running jobs'
 * logins are one list for the whole walk; the pause and the check are looked up per job, by their
 * keys: as two lists more, each with its Bloom filter, they would make every claim dearer (and
 * looked up by key too, the running jobs would make a walk past many blocked jobs far dearer).
 */
function claimable(orm: Orm) {
  const busyLogins = orm
    .select({ cabinetId: jobs.cabinetId, robotCompagnie: jobs.robotCompagnie })
    .from(jobs)
    .where(and(inStatuses(jobs.status, ACTIVE_STATUSES), isNotNull(jobs.enqueueNumber)));
  const paused = orm
    .select({ one: sql`1` })
    .from(robotPauses)
    .where(eq(robotPauses.cabinetId, pending.cabinetId));
  const checked = orm
    .select({ one: sql`1` })
    .from(checks)
    .where(
      and(eq(checks.cabinetId, pending.cabinetId), eq(checks.robotCompagnie, pending.robotCompagnie), gt(checks.leaseUntil, P('now'))),
    );
  return orm
    .select({ id: pending.id })
    .from(pending)
    .where(
      and(
        inStatuses(pending.status, ['pending']),
        isNotNull(pending.enqueueNumber),
        notExists(paused),
        sql`(${pending.cabinetId}, ${pending.robotCompagnie}) NOT IN ${busyLogins}`,
        notExists(checked),
        sql`not (${lt(pending.createdAt, P('queuedBefore'))} and ${inJsonArray(pending.cabinetId, P('heldCabinetIds'))})`,
      ),
    )
    .orderBy(pending.createdAt)
    .limit(1);
}

/**
 * The claim: the next claimable job running, leased, one attempt more, its step on its timeline, and
 * the version of the adapter its robot runs, read from the versions bound as a JSON object by code
 * (which job is claimed is known only inside the statement, and a second UPDATE would cost every job one).
 */
const CLAIM = preparedQuery((orm) =>
  orm
    .update(jobs)
    .set({
      status: 'running',
      // drizzle's types take no placeholder in `.set()`: in an SQL fragment, it binds the number as given.
      leaseUntil: sql`${P('leaseUntil')}`,
      updatedAt: sql`${P('now')}`,
      timeline: appendStep({ status: sql`'running'`, step: jobs.progressStep, percent: jobs.progressPercent, at: P('now') }),
      attempts: sql`${jobs.attempts} + 1`,
      adapterVersion: sql`${P('adapterVersions')} ->> ${jobs.robotCompagnie}`,
    })
    .where(and(eq(jobs.id, claimable(orm)), inStatuses(jobs.status, ['pending'])))
    .returning(),
);

/** Jobs queued before a time in some cabinets, which wait (see claimable's last condition). */
export interface HeldBack {
  cabinetIds: readonly string[];
  queuedBefore: number;
}

/** What a claim is told besides the time and the lease. */
interface ClaimOptions {
  /** Jobs that must wait (none by default). */
  held?: HeldBack;
  /** The version of each insurer's adapter (by code) that the claimed job's robot will run; a code missing records none. */
  adapterVersions?: Readonly<Record<string, string>>;
}

/** The next claimable job but those held back, leased to this worker in the caller's transaction: one statement. */
export function claimNextJob(orm: Orm, now: number, leaseMs: number, options: ClaimOptions = {}): JobRow | undefined {
  const held = options.held ?? { cabinetIds: [], queuedBefore: 0 };
  return CLAIM(orm).get({
    now,
    leaseUntil: now + leaseMs,
    queuedBefore: held.queuedBefore,
    heldCabinetIds: JSON.stringify(held.cabinetIds),
    adapterVersions: JSON.stringify(options.adapterVersions ?? {}),
  });
}

export function extendLease(orm: Orm, id: string, until: number): void {
  orm
    .update(jobs)
    .set({ leaseUntil: until })
    .where(and(eq(jobs.id, id), inArray(jobs.status, [...ACTIVE_STATUSES])))
    .run();
}

const EXPIRED = preparedQuery((orm) =>
  orm
    .select()
    .from(jobs)
    .where(and(inStatuses(jobs.status, ACTIVE_STATUSES), lt(jobs.leaseUntil, P('now')), isNotNull(jobs.enqueueNumber))),
);

/** Active jobs whose lease ran out: their worker died. */
export function expiredJobs(orm: Orm, now: number): JobRow[] {
  return EXPIRED(orm).all({ now });
}

const MFA_EXPIRED = preparedQuery((orm) =>
  orm
    .select()
    .from(jobs)
    .where(and(inStatuses(jobs.status, ['mfa_required', 'awaiting_mfa']), lte(jobs.mfaExpiresAt, P('now')), isNotNull(jobs.enqueueNumber))),
);

/** Jobs waiting for a code that did not come in time. */
export function mfaExpired(orm: Orm, now: number): JobRow[] {
  return MFA_EXPIRED(orm).all({ now });
}

/** Whether a job is pending or active in a cabinet whose robots are not paused: it may still run. */
export function jobMayRun(orm: Orm, jobId: string): boolean {
  return (
    orm
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(
          eq(jobs.id, jobId),
          inArray(jobs.status, ['pending', ...ACTIVE_STATUSES]),
          notInArray(jobs.cabinetId, orm.select({ cabinetId: robotPauses.cabinetId }).from(robotPauses)),
        ),
      )
      .get() !== undefined
  );
}
