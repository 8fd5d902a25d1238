import { sql, type SQL } from 'drizzle-orm';
import { ACTIVE_STATUSES } from '../../shared/automation.js';
import type { Orm } from '../platform/db/open.js';
import { inStatuses } from './store.js';
import { jobs } from './schema.js';

/**
 * The jobs dashboard's aggregates, each one GROUP BY over the cabinet's jobs created in a period
 * (read through jobs_page_idx): counts per insurer and day, durations of priced jobs, failures by
 * error code. The credits are the wallet's, asked by the caller for the job ids given here.
 */

const DAY_MS = 86_400_000;

/**
 * Real pricings created in [from, to), epoch ms: a test key's jobs run on a demo insurer whatever
 * insurer they name, so they would blur that insurer's figures. The bounds are cast since
 * better-sqlite3 binds numbers as REAL.
 */
function inPeriod(cabinetId: string, from: number, to: number): SQL {
  return sql`${jobs.cabinetId} = ${cabinetId} AND ${jobs.createdAt} >= CAST(${from} AS INTEGER) AND ${jobs.createdAt} < CAST(${to} AS INTEGER) AND ${jobs.environment} = 'prod'`;
}

const SUCCEEDED = inStatuses(jobs.status, ['completed', 'partial']);
const OPEN = inStatuses(jobs.status, ['pending', ...ACTIVE_STATUSES]);

/** One insurer's jobs of one day. */
export interface DashboardCell {
  compagnie: string;
  /** Days since the period's first (0-based). */
  day: number;
  jobs: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  open: number;
  /** JSON array of the ids of the jobs this install enqueued: their credits are in its wallet. */
  ownIds: string;
  /** What the jobs pulled from another install consumed, as that install wrote it (its cost while it runs). */
  elsewhereCredits: number;
}

export function dashboardCells(orm: Orm, cabinetId: string, from: number, to: number): DashboardCell[] {
  return orm.all<DashboardCell>(sql`
    SELECT ${jobs.compagnie} AS compagnie,
      CAST((${jobs.createdAt} - CAST(${from} AS INTEGER)) / ${sql.raw(String(DAY_MS))} AS INTEGER) AS day,
      count(*) AS jobs,
      sum(${SUCCEEDED}) AS succeeded,
      sum(${jobs.status} = 'failed') AS failed,
      sum(${jobs.status} = 'cancelled') AS cancelled,
      sum(${OPEN}) AS open,
      json_group_array(${jobs.id}) FILTER (WHERE ${jobs.enqueueNumber} IS NOT NULL) AS ownIds,
      coalesce(sum(coalesce(${jobs.creditsConsumed}, ${jobs.costCredits})) FILTER (WHERE ${jobs.enqueueNumber} IS NULL), 0) AS elsewhereCredits
    FROM ${jobs}
    WHERE ${inPeriod(cabinetId, from, to)}
    GROUP BY 1, 2`);
}

/** The median and 90th percentile of an insurer's priced jobs (compagnie null: all insurers together), in ms. */
export interface DurationRow {
  compagnie: string | null;
  medianMs: number;
  p90Ms: number;
}

/**
 * A priced job's duration is from its first step past the queue (the robot took it) to its finish;
 * a job pulled from another install has no steps here, so from its creation. The median averages
 * the two middle values of an even count; the 90th percentile is the nearest rank, ceil(0.9 n).
 */
export function dashboardDurations(orm: Orm, cabinetId: string, from: number, to: number): DurationRow[] {
  const started = sql`coalesce((SELECT min(json_extract(step.value, '$.at')) FROM json_each(${jobs.timeline}) AS step WHERE json_extract(step.value, '$.status') <> 'pending'), ${jobs.createdAt})`;
  return orm.all<DurationRow>(sql`
    WITH d AS (
      SELECT ${jobs.compagnie} AS compagnie, ${jobs.finishedAt} - ${started} AS ms
      FROM ${jobs}
      WHERE ${inPeriod(cabinetId, from, to)} AND ${SUCCEEDED} AND ${jobs.finishedAt} IS NOT NULL
    ),
    both AS (SELECT compagnie, ms FROM d UNION ALL SELECT NULL, ms FROM d),
    ranked AS (
      SELECT compagnie, ms,
        row_number() OVER (PARTITION BY compagnie ORDER BY ms) - 1 AS i,
        count(*) OVER (PARTITION BY compagnie) AS n
      FROM both
    )
    SELECT compagnie,
      avg(ms) FILTER (WHERE i IN ((n - 1) / 2, n / 2)) AS medianMs,
      max(ms) FILTER (WHERE i = (9 * n + 9) / 10 - 1) AS p90Ms
    FROM ranked
    GROUP BY compagnie`);
}

export interface FailureRow {
  code: string;
  count: number;
  /** JSON array of the insurers' codes. */
  insurers: string;
  lastAt: number;
  lastJobId: string;
}

/** The failed jobs by error code, most frequent first; the last job is the row of the max (SQLite's bare column rule). */
export function dashboardFailures(orm: Orm, cabinetId: string, from: number, to: number): FailureRow[] {
  return orm.all<FailureRow>(sql`
    SELECT coalesce(${jobs.errorCode}, 'unknown') AS code,
      count(*) AS count,
      json_group_array(DISTINCT ${jobs.compagnie}) AS insurers,
      max(coalesce(${jobs.finishedAt}, ${jobs.updatedAt})) AS lastAt,
      ${jobs.id} AS lastJobId
    FROM ${jobs}
    WHERE ${inPeriod(cabinetId, from, to)} AND ${jobs.status} = 'failed'
    GROUP BY 1
    ORDER BY count DESC, lastAt DESC, code`);
}
