import { and, desc, eq, gte, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { auditChainStart, auditEvents } from './schema.js';

export type AuditRow = typeof auditEvents.$inferSelect;

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
    .orderBy(desc(auditEvents.at), desc(sql`rowid`))
    .limit(query.limit)
    .all();
}

/** The newest row in the order rows were written (rowid), with its chain. */
export function newestAuditEvent(orm: Orm): { rowid: number; at: number; chain: string } | undefined {
  return orm.prepared('SELECT rowid, at, chain FROM audit_events ORDER BY rowid DESC LIMIT 1').get() as
    { rowid: number; at: number; chain: string } | undefined;
}

/** Rows in the order they were written, after a rowid, a page at a time. */
export function auditEventsAfter(orm: Orm, rowid: number, limit: number): (AuditRow & { rowid: number })[] {
  return orm
    .select({ rowid: sql<number>`rowid`, row: auditEvents })
    .from(auditEvents)
    .where(sql`rowid > ${rowid}`)
    .orderBy(sql`rowid`)
    .limit(limit)
    .all()
    .map(({ rowid: id, row }) => ({ ...row, rowid: id }));
}

export function setAuditChain(orm: Orm, rowid: number, chain: string): void {
  orm.prepared('UPDATE audit_events SET chain = ? WHERE rowid = ?').run(chain, rowid);
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
 * The first row the retention keeps: rows whose age, counted from the newest row, passes the
 * retention are removed, where a row's age adds up the gaps between the rows written after it,
 * each gap counted at most `maxGapMs` and never below zero. A clock set years ahead then writes a
 * row whose gap counts a few days, not years; an install idle for months keeps its rows longer.
 */
export function firstRetainedAuditRowid(orm: Orm, retentionMs: number, maxGapMs: number): number | null {
  const row = orm
    .prepared(
      `WITH gaps AS (SELECT rowid, at - lag(at) OVER (ORDER BY rowid) AS gap FROM audit_events),
       ages AS (SELECT rowid, sum(min(max(coalesce(gap, 0), 0), ?)) OVER (ORDER BY rowid) AS t FROM gaps)
       SELECT min(rowid) AS rowid FROM ages WHERE t >= (SELECT max(t) FROM ages) - ?`,
    )
    .get(maxGapMs, retentionMs) as { rowid: number | null };
  return row.rowid;
}

/** Removes the rows written before one; returns how many, and the chain of the last one removed. */
export function deleteAuditPrefix(orm: Orm, beforeRowid: number): { removed: number; lastChain: string } | null {
  const last = orm.prepared('SELECT chain FROM audit_events WHERE rowid < ? ORDER BY rowid DESC LIMIT 1').get(beforeRowid) as
    { chain: string } | undefined;
  if (!last) return null;
  return { removed: orm.prepared('DELETE FROM audit_events WHERE rowid < ?').run(beforeRowid).changes, lastChain: last.chain };
}
