import { and, asc, eq, gt } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { events } from './schema.js';

export type EventRow = typeof events.$inferSelect;

export function insertEvent(orm: Orm, row: Omit<EventRow, 'seq'>): void {
  orm.insert(events).values(row).run();
}

export function listCabinetEvents(orm: Orm, cabinetId: string, afterSeq: number, limit: number): EventRow[] {
  return orm
    .select()
    .from(events)
    .where(and(eq(events.cabinetId, cabinetId), gt(events.seq, afterSeq)))
    .orderBy(asc(events.seq))
    .limit(limit)
    .all();
}
