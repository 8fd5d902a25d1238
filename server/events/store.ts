import { and, asc, eq, gt, inArray, lt, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { preparedQuery } from '../platform/db/prepared-query.js';
import { events } from './schema.js';

export type EventRow = typeof events.$inferSelect;

const P = sql.placeholder;

export function listCabinetEvents(orm: Orm, cabinetId: string, afterSeq: number, limit: number): EventRow[] {
  return orm
    .select()
    .from(events)
    .where(and(eq(events.cabinetId, cabinetId), gt(events.seq, afterSeq)))
    .orderBy(asc(events.seq))
    .limit(limit)
    .all();
}

/** The webhook fan-out reads the outbox, and every delivery attempt its event: prepared once as well. */
const OUTBOX = preparedQuery((orm) =>
  orm
    .select()
    .from(events)
    .where(gt(events.seq, P('afterSeq')))
    .orderBy(asc(events.seq))
    .limit(P('limit')),
);

export function readOutbox(orm: Orm, afterSeq: number, limit: number): EventRow[] {
  return OUTBOX(orm).all({ afterSeq, limit });
}

const NEWEST_SEQ = preparedQuery((orm) => orm.select({ seq: sql<number | null>`max(${events.seq})` }).from(events));

/** The newest event's position in the outbox; 0 when there is none. */
export function newestSeq(orm: Orm): number {
  return NEWEST_SEQ(orm).get()?.seq ?? 0;
}

const EVENT = preparedQuery((orm) =>
  orm
    .select()
    .from(events)
    .where(and(eq(events.cabinetId, P('cabinetId')), eq(events.id, P('id')))),
);

export function findEvent(orm: Orm, cabinetId: string, id: string): EventRow | undefined {
  return EVENT(orm).get({ cabinetId, id });
}

export function deleteEventsBefore(orm: Orm, cutoff: number): number {
  return orm.delete(events).where(lt(events.createdAt, cutoff)).run().changes;
}

/** A cabinet's events of one type whose data names a subject (data[field] = id), e.g. every client.updated of one client. */
export function findEventsAbout(orm: Orm, cabinetId: string, type: string, field: string, id: string): EventRow[] {
  return orm
    .select()
    .from(events)
    .where(and(eq(events.cabinetId, cabinetId), eq(events.type, type), sql`json_extract(${events.data}, ${`$.${field}`}) = ${id}`))
    .all();
}

/** A cabinet's events of these types whose data names one of these ids under one of these fields (candidates: the caller checks which field each type is about). */
export function findEventsNaming(
  orm: Orm,
  cabinetId: string,
  types: readonly string[],
  ids: Readonly<Record<string, readonly string[]>>,
): EventRow[] {
  const ties = Object.entries(ids)
    .filter(([, values]) => values.length > 0)
    .map(
      ([field, values]) => sql`json_extract(${events.data}, ${`$.${field}`}) IN (SELECT value FROM json_each(${JSON.stringify(values)}))`,
    );
  if (types.length === 0 || ties.length === 0) return [];
  return orm
    .select()
    .from(events)
    .where(and(eq(events.cabinetId, cabinetId), inArray(events.type, [...types]), or(...ties)))
    .all();
}
