import { and, asc, desc, eq, gt, gte, isNull, lt, max, min, or, sql, type SQL } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { auditChainStart, auditEvents } from './schema.js';

export type AuditRow = typeof auditEvents.$inferSelect;

const P = sql.placeholder;

/** The order rows were written in, which the chain follows: SQLite's implicit rowid, which the schema does not declare. */
const ROWID = sql<number>`rowid`.mapWith(Number);

export function insertAuditEvent(orm: Orm, row: AuditRow): void {
  orm.insert(auditEvents).values(row).run();
}

export interface AuditQuery {
  cabinetId: string;
  action?: string;
  actorId?: string;
  since?: number;
  until?: number;
  limit: number;
}

/** A cabinet's events and the install-wide ones (cabinet_id null), newest first (insertion order within a millisecond). */
export function listAuditEvents(orm: Orm, query: AuditQuery): AuditRow[] {
  const conditions: SQL[] = [or(eq(auditEvents.cabinetId, query.cabinetId), isNull(auditEvents.cabinetId)) as SQL];
  if (query.action !== undefined) conditions.push(eq(auditEvents.action, query.action));
  if (query.actorId !== undefined) conditions.push(eq(auditEvents.actorId, query.actorId));
  if (query.since !== undefined) conditions.push(gte(auditEvents.at, query.since));
  if (query.until !== undefined) conditions.push(lt(auditEvents.at, query.until));
  return orm
    .select()
    .from(auditEvents)
    .where(and(...conditions))
    .orderBy(desc(auditEvents.at), desc(ROWID))
    .limit(query.limit)
    .all();
}

/** Read on every audit write, for the chain: prepared once (prepared-query.ts), as are the retention's statements below. */
const NEWEST = preparedQuery((orm) =>
  orm.select({ rowid: ROWID, at: auditEvents.at, chain: auditEvents.chain }).from(auditEvents).orderBy(desc(ROWID)).limit(1),
);

/** The newest row in the order rows were written (rowid), with its chain. */
export function newestAuditEvent(orm: Orm): { rowid: number; at: number; chain: string } | undefined {
  return NEWEST(orm).get();
}

/** Rows in the order they were written, after a rowid, a page at a time. */
export function auditEventsAfter(orm: Orm, rowid: number, limit: number): (AuditRow & { rowid: number })[] {
  return orm
    .select({ rowid: ROWID, row: auditEvents })
    .from(auditEvents)
    .where(gt(ROWID, rowid))
    .orderBy(asc(ROWID))
    .limit(limit)
    .all()
    .map(({ rowid: id, row }) => ({ ...row, rowid: id }));
}

const SET_CHAIN = preparedQuery((orm) =>
  orm
    .update(auditEvents)
    .set({ chain: sql`${P('chain')}` })
    .where(eq(ROWID, P('rowid'))),
);

export function setAuditChain(orm: Orm, rowid: number, chain: string): void {
  SET_CHAIN(orm).run({ rowid, chain });
}

export type ChainStart = Omit<typeof auditChainStart.$inferSelect, 'id'>;

export function findChainStart(orm: Orm): ChainStart | undefined {
  return orm
    .select({
      chain: auditChainStart.chain,
      purgedAt: auditChainStart.purgedAt,
      purged: auditChainStart.purged,
      seal: auditChainStart.seal,
    })
    .from(auditChainStart)
    .where(eq(auditChainStart.id, 1))
    .get();
}

export function saveChainStart(orm: Orm, start: ChainStart): void {
  orm
    .insert(auditChainStart)
    .values({ id: 1, ...start })
    .onConflictDoUpdate({ target: auditChainStart.id, set: start })
    .run();
}

/**
 * Each row's age, counted back from the newest row: the sum of the gaps between the rows written
 * after it, each gap counted at most `maxGapMs` and never below zero.
 */
const FIRST_RETAINED = preparedQuery((orm) => {
  const gaps = orm.$with('gaps').as(
    orm
      .select({
        rowid: ROWID.as('rowid'),
        gap: sql<number | null>`${auditEvents.at} - lag(${auditEvents.at}) OVER (ORDER BY ${ROWID})`.as('gap'),
      })
      .from(auditEvents),
  );
  const ages = orm.$with('ages').as(
    orm
      .select({
        rowid: gaps.rowid,
        t: sql<number>`sum(min(max(coalesce(${gaps.gap}, 0), 0), ${P('maxGapMs')})) OVER (ORDER BY ${gaps.rowid})`.as('t'),
      })
      .from(gaps),
  );
  return orm
    .with(gaps, ages)
    .select({ rowid: min(ages.rowid).mapWith(Number) })
    .from(ages)
    .where(gte(ages.t, sql`(${orm.select({ t: max(ages.t) }).from(ages)}) - ${P('retentionMs')}`));
});

/**
 * The first row the retention keeps: rows whose age, counted from the newest row, passes the
 * retention are removed, where a row's age adds up the gaps between the rows written after it,
 * each gap counted at most `maxGapMs` and never below zero. A clock set years ahead then writes a
 * row whose gap counts a few days, not years; an install idle for months keeps its rows longer.
 */
export function firstRetainedAuditRowid(orm: Orm, retentionMs: number, maxGapMs: number): number | null {
  return FIRST_RETAINED(orm).get({ maxGapMs, retentionMs })?.rowid ?? null;
}

/** The chain of the last row written before a rowid. */
const CHAIN_BEFORE = preparedQuery((orm) =>
  orm
    .select({ chain: auditEvents.chain })
    .from(auditEvents)
    .where(lt(ROWID, P('beforeRowid')))
    .orderBy(desc(ROWID))
    .limit(1),
);

const DELETE_BEFORE = preparedQuery((orm) => orm.delete(auditEvents).where(lt(ROWID, P('beforeRowid'))));

/** Removes the rows written before one; returns how many, and the chain of the last one removed. */
export function deleteAuditPrefix(orm: Orm, beforeRowid: number): { removed: number; lastChain: string } | null {
  const last = CHAIN_BEFORE(orm).get({ beforeRowid });
  if (!last) return null;
  return { removed: DELETE_BEFORE(orm).run({ beforeRowid }).changes, lastChain: last.chain };
}
