import { and, desc, eq, getTableColumns, gt, gte, inArray, isNotNull, lt, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { ACTIVE_STATUSES, JOB_STATUSES } from '../../shared/automation.js';
import { likeEscaped } from '../platform/db/like.js';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery, setPlaceholders } from '../platform/db/prepared-query.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { jobs } from './schema.js';

/**
 * The job's record: its row, its timeline, its reads and writes, and the console's lists. The
 * worker's claim and leases are in store-queue.ts, the enqueue's hourly counts and replay guard in
 * store-quota.ts.
 */

export type JobRow = typeof jobs.$inferSelect;

const P = sql.placeholder;

/**
 * `column IN (...)` of job statuses written into the SQL: the planner sees them (jobs_queue_idx),
 * and a constant list costs SQLite far less than a list bound as JSON (`IN (SELECT value FROM
 * json_each(?))` builds a table and a Bloom filter on every run). Only the contract's statuses are
 * ever written.
 */
export function inStatuses(column: AnySQLiteColumn, statuses: readonly JobRow['status'][]): SQL {
  for (const status of statuses) if (!(JOB_STATUSES as readonly string[]).includes(status)) throw new Error(`Not a job status: ${status}`);
  return sql`${column} IN (${sql.raw(statuses.map((status) => `'${status}'`).join(', '))})`;
}

/** One step of a job's timeline (jobs.timeline). */
export interface JobStep {
  status: JobRow['status'];
  step: string;
  percent: number;
  at: number;
}

/** A new job's timeline: its first step. */
export function firstTimeline(first: JobStep): string {
  return JSON.stringify([first]);
}

/** The timeline of a job on this install, oldest first (none for a job pulled from another install). */
export function jobTimeline(row: JobRow): JobStep[] {
  return row.timeline === null ? [] : (JSON.parse(row.timeline) as JobStep[]);
}

/** The value of each field of a timeline step: a new value, or the job's column where the field does not change. */
type StepValues = { [K in keyof JobStep]: SQL | Placeholder | AnySQLiteColumn };

/**
 * The new timeline that appends the job's state after an UPDATE's changes, in that UPDATE: the
 * columns it names are read as the UPDATE found them. The numbers are cast because better-sqlite3
 * binds every number as a REAL, which JSON would write as 100.0.
 */
export function appendStep(step: StepValues): SQL {
  const { status, step: progress, percent, at } = step;
  return sql`json_insert(coalesce(${jobs.timeline}, '[]'), '$[#]', json_object('status', ${status}, 'step', ${progress}, 'percent', CAST(${percent} AS INTEGER), 'at', CAST(${at} AS INTEGER)))`;
}

/** What every claim and finish runs is prepared once (prepared-query.ts): built on every call, it cost the queue more than its work. */
const FIND_JOB = preparedQuery((orm) =>
  orm
    .select()
    .from(jobs)
    .where(and(eq(jobs.cabinetId, P('cabinetId')), eq(jobs.id, P('id')))),
);

export function findJob(orm: Orm, cabinetId: string, id: string): JobRow | undefined {
  return FIND_JOB(orm).get({ cabinetId, id });
}

const JOB_COLUMNS = Object.keys(getTableColumns(jobs)) as (keyof JobRow)[];

/**
 * An update of a job from some statuses, one form per set of statuses and of columns (each given as
 * a comma-separated list): each column set takes the placeholder of its name, and a move of the
 * status or the progress appends a step to the timeline.
 */
const UPDATE_JOB = preparedQuery((orm, from: string, columns: string) => {
  const set = columns.split(',');
  const changes = (key: keyof JobRow) => set.includes(key);
  const moves = changes('status') || changes('progressStep') || changes('progressPercent');
  const timeline = appendStep({
    status: changes('status') ? P('status') : jobs.status,
    step: changes('progressStep') ? P('progressStep') : jobs.progressStep,
    percent: changes('progressPercent') ? P('progressPercent') : jobs.progressPercent,
    at: changes('updatedAt') ? P('updatedAt') : jobs.updatedAt,
  });
  return orm
    .update(jobs)
    .set({ ...setPlaceholders(jobs, set), ...(moves ? { timeline } : {}) })
    .where(
      and(
        eq(jobs.cabinetId, P('jobCabinetId')),
        eq(jobs.id, P('jobId')),
        inStatuses(jobs.status, (from === '' ? [] : from.split(',')) as JobRow['status'][]),
      ),
    )
    .returning();
});

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
  const columns = JOB_COLUMNS.filter((key) => changes[key] !== undefined);
  if (columns.length === 0) throw new Error('An update of a job needs at least one column to set.');
  return UPDATE_JOB(orm, from.join(','), columns.join(',')).get({ ...changes, jobCabinetId: cabinetId, jobId: id });
}

export function setArtifacts(orm: Orm, cabinetId: string, id: string, artifacts: string | null): void {
  orm
    .update(jobs)
    .set({ artifacts })
    .where(and(eq(jobs.cabinetId, cabinetId), eq(jobs.id, id)))
    .run();
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

const ACTIVE_HERE = preparedQuery((orm) =>
  orm
    .select()
    .from(jobs)
    .where(and(eq(jobs.cabinetId, P('cabinetId')), inStatuses(jobs.status, ACTIVE_STATUSES), isNotNull(jobs.enqueueNumber)))
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(P('limit')),
);

/** The cabinet's jobs a robot of this install is on (running or waiting for a code), newest first: not another install's, which it only shows. */
export function listActiveJobsHere(orm: Orm, cabinetId: string, limit: number): JobRow[] {
  return ACTIVE_HERE(orm).all({ cabinetId, limit });
}

const UNFINISHED_HERE = preparedQuery((orm) =>
  orm
    .select({ id: jobs.id })
    .from(jobs)
    .where(
      and(eq(jobs.cabinetId, P('cabinetId')), inStatuses(jobs.status, ['pending', ...ACTIVE_STATUSES]), isNotNull(jobs.enqueueNumber)),
    ),
);

/** The ids of this install's jobs that have not finished (pending or on a robot): a refund may still come for them. */
export function unfinishedJobIdsHere(orm: Orm, cabinetId: string): string[] {
  return UNFINISHED_HERE(orm)
    .all({ cabinetId })
    .map((job) => job.id);
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

/** Jobs that still list artifacts and ended before this time. */
export function jobsWithArtifactsEndedBefore(orm: Orm, before: number): JobRow[] {
  return orm
    .select()
    .from(jobs)
    .where(and(isNotNull(jobs.artifacts), lt(jobs.finishedAt, before)))
    .all();
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

/** Per insurer robot, the cabinet's latest job that failed as portal_changed: when it ended, its step and its id. */
export function latestPortalChanges(
  orm: Orm,
  cabinetId: string,
): { robotCompagnie: string; at: number; step: string | null; jobId: string }[] {
  // SQLite takes the bare columns (step, id) from the row holding the max.
  return orm
    .select({
      robotCompagnie: jobs.robotCompagnie,
      at: sql<number>`max(${jobs.finishedAt})`,
      step: jobs.errorStep,
      jobId: jobs.id,
    })
    .from(jobs)
    .where(and(eq(jobs.cabinetId, cabinetId), eq(jobs.status, 'failed'), eq(jobs.errorCode, 'portal_changed'), isNotNull(jobs.finishedAt)))
    .groupBy(jobs.robotCompagnie)
    .all();
}

/** Whether a job of the cabinet on this insurer robot was priced (completed or partial) after this time. */
export function pricedSince(orm: Orm, cabinetId: string, robotCompagnie: string, after: number): boolean {
  return (
    orm
      .select({ id: jobs.id })
      .from(jobs)
      .where(
        and(
          eq(jobs.cabinetId, cabinetId),
          inStatuses(jobs.status, ['completed', 'partial']),
          eq(jobs.robotCompagnie, robotCompagnie),
          gt(jobs.finishedAt, after),
        ),
      )
      .limit(1)
      .get() !== undefined
  );
}
