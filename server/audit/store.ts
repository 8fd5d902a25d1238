import { and, desc, eq, gte, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
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
  return orm.prepared('SELECT rowid, at, chain FROM audit_events ORDER BY rowid DESC LIMIT 1').get() as { rowid: number; at: number; chain: string } | undefined;
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

export function auditPurgedCount(orm: Orm): number {
  return orm.select({ purged: auditChainStart.purged }).from(auditChainStart).where(eq(auditChainStart.id, 1)).get()?.purged ?? 0;
}

export function auditChainStartOf(orm: Orm): string {
  return orm.select({ chain: auditChainStart.chain }).from(auditChainStart).where(eq(auditChainStart.id, 1)).get()?.chain ?? '';
}

/**
 * Retention: the only delete of the table. Removes the rows written before the first one not older
 * than the cutoff (a prefix, so the chain goes on from the last row removed), and records that
 * row's chain as where the chain now starts.
 */
export function deleteAuditPrefixBefore(orm: Orm, cutoff: number, now: number): number {
  const firstKept = orm.prepared('SELECT min(rowid) AS rowid FROM audit_events WHERE at >= ?').get(cutoff) as { rowid: number | null };
  const bound = firstKept.rowid ?? Number.MAX_SAFE_INTEGER;
  const lastRemoved = orm.prepared('SELECT chain FROM audit_events WHERE rowid < ? ORDER BY rowid DESC LIMIT 1').get(bound) as { chain: string } | undefined;
  if (!lastRemoved) return 0;
  const removed = orm.prepared('DELETE FROM audit_events WHERE rowid < ?').run(bound).changes;
  orm
    .insert(auditChainStart)
    .values({ id: 1, chain: lastRemoved.chain, purgedAt: now, purged: removed })
    .onConflictDoUpdate({ target: auditChainStart.id, set: { chain: lastRemoved.chain, purgedAt: now, purged: sql`${auditChainStart.purged} + ${removed}` } })
    .run();
  return removed;
}
