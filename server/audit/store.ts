import { and, desc, eq, gte, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { auditEvents } from './schema.js';

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

/** Retention: the only delete of the table. */
export function deleteAuditEventsBefore(orm: Orm, cutoff: number): number {
  return orm.delete(auditEvents).where(lt(auditEvents.at, cutoff)).run().changes;
}
