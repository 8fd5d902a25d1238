import { and, count, desc, eq, inArray, lt, ne, or, sql } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { syncConflicts } from './schema.js';

/** Pulled changes this install set aside (it could not apply them), until applied at last or discarded. */

export type ConflictRow = typeof syncConflicts.$inferSelect;

/** Sets a pulled change aside; keyed by seq, so a change set aside again (a retry) only gets its new reason. */
export function insertConflict(orm: Orm, row: typeof syncConflicts.$inferInsert): void {
  orm
    .insert(syncConflicts)
    .values(row)
    .onConflictDoUpdate({
      target: [syncConflicts.cabinetId, syncConflicts.seq],
      set: {
        reason: row.reason,
        message: row.message,
        notUnderstood: row.notUnderstood,
        fromState: row.fromState ?? false,
        setAsideAt: row.setAsideAt,
      },
    })
    .run();
}

export function findConflict(orm: Orm, cabinetId: string, seq: number): ConflictRow | undefined {
  return orm
    .select()
    .from(syncConflicts)
    .where(and(eq(syncConflicts.cabinetId, cabinetId), eq(syncConflicts.seq, seq)))
    .get();
}

/** Forgets a set-aside change (applied at last, or discarded by a person). */
export function deleteConflict(orm: Orm, cabinetId: string, seq: number): boolean {
  return (
    orm
      .delete(syncConflicts)
      .where(and(eq(syncConflicts.cabinetId, cabinetId), eq(syncConflicts.seq, seq)))
      .run().changes > 0
  );
}

/** The changes a newer version sent, oldest first, with what this install lacked to apply them (no field: the kind). */
export function listNotUnderstood(orm: Orm, cabinetId: string): { seq: number; kind: string; notUnderstood: string[] }[] {
  return orm
    .select({ seq: syncConflicts.seq, kind: syncConflicts.kind, notUnderstood: syncConflicts.notUnderstood })
    .from(syncConflicts)
    .where(and(eq(syncConflicts.cabinetId, cabinetId), eq(syncConflicts.reason, 'not_understood')))
    .orderBy(syncConflicts.seq)
    .all()
    .map((row) => ({ seq: row.seq, kind: row.kind, notUnderstood: JSON.parse(row.notUnderstood ?? '[]') as string[] }));
}

/** The cabinet's set-aside changes, newest first. */
export function listConflicts(orm: Orm, cabinetId: string, limit: number): ConflictRow[] {
  return orm.select().from(syncConflicts).where(eq(syncConflicts.cabinetId, cabinetId)).orderBy(desc(syncConflicts.seq)).limit(limit).all();
}

/** Deletes the set-aside changes of a record, or whose fields name it (an event about a client). */
export function deleteConflictsNaming(orm: Orm, cabinetId: string, recordId: string): void {
  orm
    .delete(syncConflicts)
    .where(
      and(
        eq(syncConflicts.cabinetId, cabinetId),
        or(eq(syncConflicts.recordId, recordId), sql`instr(${syncConflicts.fields}, ${recordId}) > 0`),
      ),
    )
    .run();
}

/** Whether a change of this record was set aside (pulled, not applied). */
export function hasConflictOf(orm: Orm, cabinetId: string, kind: string, recordId: string): boolean {
  return (
    orm
      .select({ seq: syncConflicts.seq })
      .from(syncConflicts)
      .where(and(eq(syncConflicts.cabinetId, cabinetId), eq(syncConflicts.kind, kind), eq(syncConflicts.recordId, recordId)))
      .limit(1)
      .get() !== undefined
  );
}

/** The set-aside changes among these seqs (a page's). */
export function conflictsOfSeqs(orm: Orm, cabinetId: string, seqs: readonly number[]): ConflictRow[] {
  if (seqs.length === 0) return [];
  return orm
    .select()
    .from(syncConflicts)
    .where(and(eq(syncConflicts.cabinetId, cabinetId), inArray(syncConflicts.seq, [...seqs])))
    .all();
}

export function countConflicts(orm: Orm, cabinetId: string): number {
  return orm.select({ n: count() }).from(syncConflicts).where(eq(syncConflicts.cabinetId, cabinetId)).get()?.n ?? 0;
}

/**
 * Keeps the newest `keep` set-aside changes of the cabinet, and the newest `keepNotUnderstood` a
 * newer version sent: a hostile device cannot fill the disk through them.
 */
export function trimConflicts(orm: Orm, cabinetId: string, keep: number, keepNotUnderstood: number): void {
  for (const [understood, kept] of [
    [true, keep],
    [false, keepNotUnderstood],
  ] as const) {
    const ofReason = understood ? ne(syncConflicts.reason, 'not_understood') : eq(syncConflicts.reason, 'not_understood');
    const oldestKept = orm
      .select({ seq: syncConflicts.seq })
      .from(syncConflicts)
      .where(and(eq(syncConflicts.cabinetId, cabinetId), ofReason))
      .orderBy(desc(syncConflicts.seq))
      .limit(1)
      .offset(kept - 1)
      .get();
    if (oldestKept)
      orm
        .delete(syncConflicts)
        .where(and(eq(syncConflicts.cabinetId, cabinetId), ofReason, lt(syncConflicts.seq, oldestKept.seq)))
        .run();
  }
}
