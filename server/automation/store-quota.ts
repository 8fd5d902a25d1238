import { and, count, desc, eq, gt, gte, isNotNull, isNull, lte, max, min, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { jobs } from './schema.js';
import type { JobRow } from './store.js';

/**
 * What an enqueue counts before it takes a job: the cabinet's hourly quota (this install's
 * enqueues and the jobs pulled from its other installs) and the replay guard. Every enqueue runs
 * them: each is prepared once (prepared-query.ts).
 */

const P = sql.placeholder;

const PULLED_SINCE = preparedQuery((orm) =>
  orm
    .select({ count: count(), oldest: min(jobs.createdAt) })
    .from(jobs)
    .where(
      and(eq(jobs.cabinetId, P('cabinetId')), gt(jobs.createdAt, P('since')), lte(jobs.createdAt, P('until')), isNull(jobs.enqueueNumber)),
    ),
);

/** Jobs pulled from the cabinet's other installs created in a window (the cabinet's hourly quota), and the oldest one's creation. */
export function pulledJobsSince(orm: Orm, cabinetId: string, since: number, until: number): { count: number; oldest: number | null } {
  return PULLED_SINCE(orm).get({ cabinetId, since, until }) ?? { count: 0, oldest: null };
}

const OWN_SINCE = preparedQuery((orm) =>
  orm
    .select({ count: count() })
    .from(jobs)
    .where(and(eq(jobs.cabinetId, P('cabinetId')), gte(jobs.createdAt, P('since')), isNotNull(jobs.enqueueNumber))),
);

/** How many jobs this install enqueued from a time on, that time included (the offline allowance of the hourly quota). */
export function ownJobsSince(orm: Orm, cabinetId: string, since: number): number {
  return OWN_SINCE(orm).get({ cabinetId, since })?.count ?? 0;
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
 * first job of the hour that this install enqueued (pulled jobs have no number), joined to a row of
 * its own so that the newest number comes even when the hour has none.
 */
const ENQUEUES_SINCE = preparedQuery((orm) => {
  const newest = orm
    .select({ number: max(jobs.enqueueNumber) })
    .from(jobs)
    .where(eq(jobs.cabinetId, P('cabinetId')));
  const first = orm
    .select({ number: jobs.enqueueNumber, createdAt: jobs.createdAt })
    .from(jobs)
    .where(and(eq(jobs.cabinetId, P('cabinetId')), gt(jobs.createdAt, P('since')), isNotNull(jobs.enqueueNumber)))
    .orderBy(jobs.createdAt, jobs.enqueueNumber)
    .limit(1)
    .as('first');
  return orm
    .select({ newest: sql<number | null>`${newest}`, first: first.number, oldest: first.createdAt })
    .from(sql`(SELECT 1)`)
    .leftJoin(first, sql`true`);
});

/** Numbers follow creation, so the hour's enqueues are the numbers from the hour's first one to the newest. */
export function enqueuesSince(orm: Orm, cabinetId: string, since: number): EnqueuesSince {
  const row = ENQUEUES_SINCE(orm).get({ cabinetId, since });
  const nextNumber = (row?.newest ?? 0) + 1;
  const first = row?.first ?? null;
  return { count: first === null ? 0 : nextNumber - first, oldest: row?.oldest ?? null, nextNumber };
}

const LATEST_WITH_HASH = preparedQuery((orm) =>
  orm
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.cabinetId, P('cabinetId')),
        eq(jobs.requestHash, P('requestHash')),
        gt(jobs.createdAt, P('since')),
        or(isNotNull(jobs.enqueueNumber), lte(jobs.createdAt, P('pulledUntil'))),
      ),
    )
    .orderBy(desc(jobs.createdAt))
    .limit(1),
);

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
  return LATEST_WITH_HASH(orm).get({ cabinetId, requestHash, since, pulledUntil });
}
