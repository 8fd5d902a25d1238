import { and, desc, eq, gt, gte, inArray, isNotNull, lt, notInArray, or, sql } from 'drizzle-orm';
import { ACTIVE_STATUSES, JOB_STATUSES } from '../../shared/automation.js';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import { tableSql, type SqlPart } from '../platform/db/table-sql.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { jobs, robotPauses } from './schema.js';

export type JobRow = typeof jobs.$inferSelect;

const ACTIVE = ACTIVE_STATUSES;

/**
 * `IN (...)` of job statuses written into the SQL: the planner sees them (jobs_queue_idx), and a
 * constant list costs SQLite far less than a list bound as JSON (`IN (SELECT value FROM
 * json_each(?))` builds a table and a Bloom filter on every run). Only the contract's statuses are
 * ever written.
 */
function inStatuses(statuses: readonly JobRow['status'][]): string {
  for (const status of statuses) if (!(JOB_STATUSES as readonly string[]).includes(status)) throw new Error(`Not a job status: ${status}`);
  return `IN (${statuses.map((status) => `'${status}'`).join(', ')})`;
}
const IN_ACTIVE = inStatuses(ACTIVE);
const IN_UNFINISHED = inStatuses(['pending', ...ACTIVE]);

/**
 * What every enqueue, claim and finish runs is prepared once (table-sql.ts): built by drizzle on
 * every call, these statements cost the queue more than its work.
 */
const JOB = tableSql(jobs);

/** A new job's timeline: its first step. */
export function firstTimeline(first: JobStep): string {
  return JSON.stringify([first]);
}

/** A new job, its timeline made by firstTimeline: the caller's literal carries every key (ARCHITECTURE, "Per-request cost"). */
export function insertJob(orm: Orm, row: JobRow): void {
  JOB.insert(orm, row);
}

/** One step of a job's timeline (jobs.timeline). */
export interface JobStep {
  status: JobRow['status'];
  step: string;
  percent: number;
  at: number;
}

/** The timeline of a job on this install, oldest first (none for a job pulled from another install). */
export function jobTimeline(row: JobRow): JobStep[] {
  return row.timeline === null ? [] : (JSON.parse(row.timeline) as JobStep[]);
}

/** A timeline step's fields: the key in the JSON, the job's column, and how its new value is bound. */
const STEP_FIELDS = [
  ['status', 'status', '?'],
  ['step', 'progress_step', '?'],
  // better-sqlite3 binds every number as a REAL, which JSON would write as 100.0.
  ['percent', 'progress_percent', 'CAST(? AS INTEGER)'],
  ['at', 'updated_at', 'CAST(? AS INTEGER)'],
] as const;

/**
 * The assignment for each set of changed fields (bit i: STEP_FIELDS[i] changes), made once: the
 * same text on every call lets the update's statement be found without building its SQL again.
 */
const STEP_ASSIGNMENTS = Array.from({ length: 1 << STEP_FIELDS.length }, (_, changed) => {
  const step = STEP_FIELDS.map(([key, column, placeholder], i) => `'${key}', ${changed & (1 << i) ? placeholder : `"${column}"`}`).join(
    ', ',
  );
  return `"timeline" = json_insert(coalesce("timeline", '[]'), '$[#]', json_object(${step}))`;
});

/**
 * The assignment that appends the job's state after `changes` to its timeline, in the UPDATE that
 * makes them: each field is the new value when it changes, else its column, which that UPDATE
 * leaves as it was.
 */
function appendStep(changes: Partial<JobRow>): SqlPart {
  const given = [changes.status, changes.progressStep, changes.progressPercent, changes.updatedAt];
  const values = given.filter((value) => value !== undefined);
  const changed = given.reduce<number>((mask, value, i) => (value === undefined ? mask : mask | (1 << i)), 0);
  return { sql: STEP_ASSIGNMENTS[changed] ?? '', values };
}

export function findJob(orm: Orm, cabinetId: string, id: string): JobRow | undefined {
  return JOB.get(orm, 'WHERE cabinet_id = ? AND id = ?', cabinetId, id);
}

/**
 * Updates a job only if it is still in one of the expected statuses: the job as updated, undefined
 * when it moved meanwhile. A move of its status or progress is a step of its timeline.
 */
export function updateJob(
  orm: Orm,
  cabinetId: string,
  id: string,
  from: readonly JobRow['status'][],
  changes: Partial<JobRow>,
): JobRow | undefined {
  const movesTimeline = changes.status !== undefined || changes.progressStep !== undefined || changes.progressPercent !== undefined;
  const clauses = `WHERE cabinet_id = ? AND id = ? AND status ${inStatuses(from)}`;
  const [moved] = movesTimeline
    ? JOB.updateWith(orm, changes, appendStep(changes), clauses, cabinetId, id)
    : JOB.update(orm, changes, clauses, cabinetId, id);
  return moved;
}

export function listJobs(
  orm: Orm,
  cabinetId: string,
  filters: {
    status?: JobRow['status'];
    createdAfter?: number;
    createdFrom?: number;
    createdBefore?: number;
    search?: JobSearch;
    after?: CursorPosition;
  },
  limit: number,
): JobRow[] {
  return orm
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.cabinetId, cabinetId),
        filters.status ? eq(jobs.status, filters.status) : undefined,
        filters.createdAfter !== undefined ? gt(jobs.createdAt, filters.createdAfter) : undefined,
        filters.createdFrom !== undefined ? gte(jobs.createdAt, filters.createdFrom) : undefined,
        filters.createdBefore !== undefined ? lt(jobs.createdAt, filters.createdBefore) : undefined,
        filters.search ? matchesSearch(filters.search) : undefined,
        before(jobs.createdAt, jobs.id, filters.after),
      ),
    )
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(limit)
    .all();
}

/** What a broker typed to find a job, and the quotes of the clients whose name matched it. */
export interface JobSearch {
  text: string;
  devisIds: readonly string[];
}

/** LIKE's wildcards in what a person typed are plain characters. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The insured named in dicData (any part, any case), the start or the end of the job's or quote's
 * id (the console names a job by its end: shortJobReference), or a matched client's quote.
 */
function matchesSearch(search: JobSearch) {
  const text = likeEscaped(search.text.toLowerCase());
  return or(
    sql`lower(json_extract(${jobs.dicData}, '$.insured_name')) like ${`%${text}%`} escape '\\'`,
    sql`${jobs.id} like ${`${text}%`} escape '\\'`,
    sql`${jobs.id} like ${`%${text}`} escape '\\'`,
    sql`${jobs.devisId} like ${`${text}%`} escape '\\'`,
    sql`${jobs.devisId} like ${`%${text}`} escape '\\'`,
    search.devisIds.length > 0 ? inArray(jobs.devisId, [...search.devisIds]) : undefined,
  );
}

/** The cabinet's jobs in these statuses, newest first. */
export function listJobsInStatuses(orm: Orm, cabinetId: string, statuses: readonly JobRow['status'][], limit: number): JobRow[] {
  return orm
    .select()
    .from(jobs)
    .where(and(eq(jobs.cabinetId, cabinetId), inArray(jobs.status, [...statuses])))
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(limit)
    .all();
}

/** The cabinet's jobs a robot of this install is on (running or waiting for a code), newest first: not another install's, which it only shows. */
export function listActiveJobsHere(orm: Orm, cabinetId: string, limit: number): JobRow[] {
  return JOB.all(
    orm,
    `WHERE cabinet_id = ? AND status ${IN_ACTIVE} AND enqueue_number IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT ?`,
    cabinetId,
    limit,
  );
}

/** The ids of this install's jobs that have not finished (pending or on a robot): a refund may still come for them. */
export function unfinishedJobIdsHere(orm: Orm, cabinetId: string): string[] {
  return orm
    .prepared(`SELECT id FROM jobs WHERE cabinet_id = ? AND status ${IN_UNFINISHED} AND enqueue_number IS NOT NULL`)
    .pluck(true)
    .all(cabinetId) as string[];
}

/** Whether a job of the cabinet in these statuses uses this insurer robot on this install. */
export function hasJobOnRobot(orm: Orm, cabinetId: string, robotCompagnie: string, statuses: readonly JobRow['status'][]): boolean {
  return (
    orm
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(
          eq(jobs.cabinetId, cabinetId),
          eq(jobs.robotCompagnie, robotCompagnie),
          inArray(jobs.status, [...statuses]),
          isNotNull(jobs.enqueueNumber),
        ),
      )
      .get() !== undefined
  );
}

/** Jobs pulled from the cabinet's other installs created in a window (the cabinet's hourly quota), and the oldest one's creation. */
export function pulledJobsSince(orm: Orm, cabinetId: string, since: number, until: number): { count: number; oldest: number | null } {
  const [count, oldest] = orm
    .prepared(
      'SELECT count(*), min(created_at) FROM jobs WHERE cabinet_id = ? AND created_at > ? AND created_at <= ? AND enqueue_number IS NULL',
    )
    .raw()
    .get(cabinetId, since, until) as [number, number | null];
  return { count, oldest };
}

/** How many jobs this install enqueued from a time on, that time included (the offline allowance of the hourly quota). */
export function ownJobsSince(orm: Orm, cabinetId: string, since: number): number {
  return orm
    .prepared('SELECT count(*) FROM jobs WHERE cabinet_id = ? AND created_at >= ? AND enqueue_number IS NOT NULL')
    .pluck(true)
    .get(cabinetId, since) as number;
}

/** The cabinet's enqueues on this install since a time (the hourly quota), and the number the next one takes. */
export interface EnqueuesSince {
  count: number;
  /** When the oldest of them was created; null when there is none. */
  oldest: number | null;
  nextNumber: number;
}

/**
 * Two index lookups, whatever the hour holds: the newest enqueue number of the cabinet, and the
 * first job of the hour that this install enqueued (pulled jobs have no number). Numbers follow
 * creation, so the hour's enqueues are the numbers from that first one to the newest.
 */
export function enqueuesSince(orm: Orm, cabinetId: string, since: number): EnqueuesSince {
  const [newest, first, oldest] = orm
    .prepared(
      'SELECT (SELECT max(enqueue_number) FROM jobs WHERE cabinet_id = @cabinetId), first.enqueue_number, first.created_at ' +
        'FROM (SELECT 1) LEFT JOIN (SELECT enqueue_number, created_at FROM jobs ' +
        'WHERE cabinet_id = @cabinetId AND created_at > @since AND enqueue_number IS NOT NULL ORDER BY created_at, enqueue_number LIMIT 1) AS first',
    )
    .raw()
    .get({ cabinetId, since }) as [number | null, number | null, number | null];
  const nextNumber = (newest ?? 0) + 1;
  return { count: first === null ? 0 : nextNumber - first, oldest, nextNumber };
}

/**
 * The newest job of the cabinet with this request hash created after `since` (jobs_replay_idx):
 * one this install enqueued, or one pulled from another install created no later than
 * `pulledUntil` (its creation time is that install's word).
 */
export function latestJobWithHash(
  orm: Orm,
  cabinetId: string,
  requestHash: string,
  since: number,
  pulledUntil: number,
): JobRow | undefined {
  return JOB.get(
    orm,
    'WHERE cabinet_id = ? AND request_hash = ? AND created_at > ? AND (enqueue_number IS NOT NULL OR created_at <= ?) ORDER BY created_at DESC LIMIT 1',
    cabinetId,
    requestHash,
    since,
    pulledUntil,
  );
}

/**
 * The pending jobs this install enqueued that may start now, oldest first (a job pulled from another
 * install has no enqueue number: its robots are that install's, never this one's): of a cabinet whose robots are not paused, on
 * an insurer login (cabinet + insurer) that no job and no login check is using. The running jobs'
 * logins are one list for the whole walk; the pause and the check are looked up per job, by their
 * keys: as two lists more, each with its Bloom filter, they would make every claim dearer (and
 * looked up by key too, the running jobs would make a walk past many blocked jobs far dearer).
 */
const CLAIMABLE = `SELECT id FROM jobs AS pending WHERE status = 'pending' AND enqueue_number IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM robot_pauses WHERE robot_pauses.cabinet_id = pending.cabinet_id)
       AND (cabinet_id, robot_compagnie) NOT IN (SELECT cabinet_id, robot_compagnie FROM jobs WHERE status ${IN_ACTIVE} AND enqueue_number IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM insurer_login_checks AS checks
                       WHERE checks.cabinet_id = pending.cabinet_id AND checks.robot_compagnie = pending.robot_compagnie AND checks.lease_until > ?)
       AND NOT (created_at < ? AND cabinet_id IN (SELECT value FROM json_each(?)))
     ORDER BY created_at LIMIT 1`;
const CLAIM_WHERE = `WHERE id = (${CLAIMABLE}) AND status = 'pending'`;
/** What a claim sets besides its columns: its step (the status and the time change) and one more attempt. */
const CLAIM_ALSO = `${appendStep({ status: 'running', updatedAt: 0 }).sql}, "attempts" = "attempts" + 1`;

/** Jobs queued before a time in some cabinets, which wait (see CLAIMABLE's last condition). */
export interface HeldBack {
  cabinetIds: readonly string[];
  queuedBefore: number;
}

/** The next claimable job (CLAIMABLE) but those held back, leased to this worker in the caller's transaction: one statement. */
export function claimNextJob(
  orm: Orm,
  now: number,
  leaseMs: number,
  held: HeldBack = { cabinetIds: [], queuedBefore: 0 },
): JobRow | undefined {
  const [claimed] = JOB.updateWith(
    orm,
    { status: 'running', leaseUntil: now + leaseMs, updatedAt: now },
    { sql: CLAIM_ALSO, values: ['running', now] },
    CLAIM_WHERE,
    now,
    held.queuedBefore,
    JSON.stringify(held.cabinetIds),
  );
  return claimed;
}

export function extendLease(orm: Orm, id: string, until: number): void {
  orm
    .update(jobs)
    .set({ leaseUntil: until })
    .where(and(eq(jobs.id, id), inArray(jobs.status, [...ACTIVE])))
    .run();
}

/** Active jobs whose lease ran out: their worker died. Only this install's own (see CLAIMABLE). */
export function expiredJobs(orm: Orm, now: number): JobRow[] {
  return JOB.all(orm, `WHERE status ${IN_ACTIVE} AND lease_until < ? AND enqueue_number IS NOT NULL`, now);
}

export function mfaExpired(orm: Orm, now: number): JobRow[] {
  return JOB.all(orm, `WHERE status IN ('mfa_required', 'awaiting_mfa') AND mfa_expires_at <= ? AND enqueue_number IS NOT NULL`, now);
}

/** Whether this install enqueued the job (pulled jobs have no enqueue number): its robots own it. */
export function enqueuedHere(orm: Orm, cabinetId: string, id: string): boolean {
  return (
    orm
      .select({ n: jobs.enqueueNumber })
      .from(jobs)
      .where(and(eq(jobs.cabinetId, cabinetId), eq(jobs.id, id), isNotNull(jobs.enqueueNumber)))
      .get() !== undefined
  );
}

export function setArtifacts(orm: Orm, cabinetId: string, id: string, artifacts: string | null): void {
  orm
    .update(jobs)
    .set({ artifacts })
    .where(and(eq(jobs.cabinetId, cabinetId), eq(jobs.id, id)))
    .run();
}

/** Jobs that still list artifacts and ended before this time. */
export function jobsWithArtifactsEndedBefore(orm: Orm, before: number): JobRow[] {
  return orm
    .select()
    .from(jobs)
    .where(and(isNotNull(jobs.artifacts), lt(jobs.finishedAt, before)))
    .all();
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
          inArray(jobs.status, ['pending', ...ACTIVE]),
          notInArray(jobs.cabinetId, orm.select({ cabinetId: robotPauses.cabinetId }).from(robotPauses)),
        ),
      )
      .get() !== undefined
  );
}

/** The cabinet's jobs that priced these quotes. */
export function jobsOfQuotes(orm: Orm, cabinetId: string, devisIds: readonly string[]): JobRow[] {
  if (devisIds.length === 0) return [];
  return orm
    .select()
    .from(jobs)
    .where(and(eq(jobs.cabinetId, cabinetId), inArray(jobs.devisId, [...devisIds])))
    .all();
}
