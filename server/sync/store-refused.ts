import { and, asc, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { syncOutbox, syncRefused } from './schema.js';
import { appendOutbox, captureState, readOutboxAfter, renumberOutbox, updateConnection } from './store.js';

export type RefusedRow = typeof syncRefused.$inferSelect;

/**
 * Takes queued changes the hub refused for what they hold out of the queue, keeps them whole in
 * sync_refused, and numbers the rest of the queue from the first number again, so that the ones
 * after them go.
 */
export function setAsideRefused(
  orm: Orm,
  cabinetId: string,
  numbers: readonly number[],
  refusal: { code: string; message: string; at: number },
): void {
  const queue = readOutboxAfter(orm, cabinetId, 0, Number.MAX_SAFE_INTEGER);
  const first = queue[0]?.number;
  if (first === undefined) return;
  for (const row of queue.filter((queued) => numbers.includes(queued.number))) {
    orm
      .insert(syncRefused)
      .values({
        cabinetId,
        hlc: row.hlc,
        kind: row.kind,
        recordId: row.recordId,
        op: row.op,
        fields: row.fields,
        code: refusal.code,
        message: refusal.message.slice(0, 500),
        refusedAt: refusal.at,
      })
      .onConflictDoNothing()
      .run();
    orm
      .delete(syncOutbox)
      .where(and(eq(syncOutbox.cabinetId, cabinetId), eq(syncOutbox.number, row.number)))
      .run();
  }
  renumberOutbox(orm, cabinetId, first);
}

export function listRefused(orm: Orm, cabinetId: string, limit: number): RefusedRow[] {
  return orm.select().from(syncRefused).where(eq(syncRefused.cabinetId, cabinetId)).orderBy(desc(syncRefused.refusedAt)).limit(limit).all();
}

export function countRefused(orm: Orm, cabinetId: string): number {
  return orm.select({ n: count() }).from(syncRefused).where(eq(syncRefused.cabinetId, cabinetId)).get()?.n ?? 0;
}

export function findRefused(orm: Orm, cabinetId: string, hlc: string): RefusedRow | undefined {
  return orm
    .select()
    .from(syncRefused)
    .where(and(eq(syncRefused.cabinetId, cabinetId), eq(syncRefused.hlc, hlc)))
    .get();
}

/** Deletes the refused changes of a record, or whose fields name it (an erased client's data must not stay in them). */
export function deleteRefusedNaming(orm: Orm, cabinetId: string, recordId: string): void {
  orm
    .delete(syncRefused)
    .where(
      and(eq(syncRefused.cabinetId, cabinetId), or(eq(syncRefused.recordId, recordId), sql`instr(${syncRefused.fields}, ${recordId}) > 0`)),
    )
    .run();
}

export function deleteRefused(orm: Orm, cabinetId: string, hlc: string): void {
  orm
    .delete(syncRefused)
    .where(and(eq(syncRefused.cabinetId, cabinetId), eq(syncRefused.hlc, hlc)))
    .run();
}

/**
 * Puts refused changes (all of them without stamps) back at the end of the queue, oldest stamp
 * first, each with its own stamp: a field changed since keeps its later value wherever it is
 * applied. The link takes the queue's clock first, so that the next change made here is still
 * stamped after every one queued before (captureState reads the clock from the newest queued
 * change, which is now an older stamp). Returns how many were queued.
 */
export function requeueRefused(orm: Orm, cabinetId: string, hlcs?: readonly string[]): number {
  const state = captureState(orm, cabinetId);
  if (!state || state.detached) return 0;
  const which = and(eq(syncRefused.cabinetId, cabinetId), hlcs === undefined ? undefined : inArray(syncRefused.hlc, [...hlcs]));
  const rows = orm.select().from(syncRefused).where(which).orderBy(asc(syncRefused.hlc)).all();
  updateConnection(orm, cabinetId, { clockTime: state.clock.time, clockCounter: state.clock.counter });
  rows.forEach((row, i) =>
    appendOutbox(orm, {
      cabinetId,
      number: state.nextNumber + i,
      kind: row.kind,
      recordId: row.recordId,
      op: row.op,
      hlc: row.hlc,
      fields: row.fields,
    }),
  );
  orm.delete(syncRefused).where(which).run();
  return rows.length;
}
