import { and, asc, count, eq, lte, sql } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { syncConnections, syncFieldClocks, syncOutbox } from './schema.js';

export type ConnectionRow = typeof syncConnections.$inferSelect;
export type OutboxRow = typeof syncOutbox.$inferSelect;

export function insertConnection(orm: Orm, row: ConnectionRow): void {
  orm.insert(syncConnections).values(row).run();
}

export function findConnection(orm: Orm, cabinetId: string): ConnectionRow | undefined {
  return orm.select().from(syncConnections).where(eq(syncConnections.cabinetId, cabinetId)).get();
}

export function listConnections(orm: Orm): ConnectionRow[] {
  return orm.select().from(syncConnections).all();
}

export function updateConnection(orm: Orm, cabinetId: string, changes: Partial<Omit<ConnectionRow, 'cabinetId'>>): void {
  orm.update(syncConnections).set(changes).where(eq(syncConnections.cabinetId, cabinetId)).run();
}

/** Forgets the link, its queue and its clocks: what disconnect leaves is a plain local cabinet. */
export function deleteConnection(orm: Orm, cabinetId: string): void {
  orm.delete(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).run();
  orm.delete(syncFieldClocks).where(eq(syncFieldClocks.cabinetId, cabinetId)).run();
  orm.delete(syncConnections).where(eq(syncConnections.cabinetId, cabinetId)).run();
}

export function appendOutbox(orm: Orm, row: OutboxRow): void {
  orm.insert(syncOutbox).values(row).run();
}

export function readOutbox(orm: Orm, cabinetId: string, limit: number): OutboxRow[] {
  return orm.select().from(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).orderBy(asc(syncOutbox.number)).limit(limit).all();
}

export function countOutbox(orm: Orm, cabinetId: string): number {
  return orm.select({ n: count() }).from(syncOutbox).where(eq(syncOutbox.cabinetId, cabinetId)).get()?.n ?? 0;
}

/** Deletes what the hub acknowledged, and nothing after it. */
export function deleteOutboxThrough(orm: Orm, cabinetId: string, number: number): void {
  orm.delete(syncOutbox).where(and(eq(syncOutbox.cabinetId, cabinetId), lte(syncOutbox.number, number))).run();
}

export interface FieldClocks {
  clocks: Record<string, string>;
  erased: boolean;
}

export function findFieldClocks(orm: Orm, cabinetId: string, kind: string, recordId: string): FieldClocks | undefined {
  const row = orm
    .select({ clocks: syncFieldClocks.clocks, erased: syncFieldClocks.erased })
    .from(syncFieldClocks)
    .where(and(eq(syncFieldClocks.cabinetId, cabinetId), eq(syncFieldClocks.kind, kind), eq(syncFieldClocks.recordId, recordId)))
    .get();
  return row ? { clocks: JSON.parse(row.clocks) as Record<string, string>, erased: row.erased } : undefined;
}

/** Sets the clock of some fields (json_patch keeps the others'); an erasure is never undone. */
export function mergeFieldClocks(orm: Orm, cabinetId: string, kind: string, recordId: string, clocks: Record<string, string>, erased: boolean): void {
  const text = JSON.stringify(clocks);
  orm
    .insert(syncFieldClocks)
    .values({ cabinetId, kind, recordId, clocks: text, erased })
    .onConflictDoUpdate({
      target: [syncFieldClocks.cabinetId, syncFieldClocks.kind, syncFieldClocks.recordId],
      set: { clocks: sql`json_patch(${syncFieldClocks.clocks}, ${text})`, erased: sql`max(${syncFieldClocks.erased}, ${erased ? 1 : 0})` },
    })
    .run();
}

/** Gives a queued change a new clock, and its fields too where they still hold the old one. */
export function restampChange(orm: Orm, cabinetId: string, row: OutboxRow, hlc: string): void {
  orm.update(syncOutbox).set({ hlc }).where(and(eq(syncOutbox.cabinetId, cabinetId), eq(syncOutbox.number, row.number))).run();
  const held = findFieldClocks(orm, cabinetId, row.kind, row.recordId);
  if (!held) return;
  const clocks = Object.fromEntries(Object.entries(held.clocks).map(([field, clock]) => [field, clock === row.hlc ? hlc : clock]));
  orm
    .update(syncFieldClocks)
    .set({ clocks: JSON.stringify(clocks) })
    .where(and(eq(syncFieldClocks.cabinetId, cabinetId), eq(syncFieldClocks.kind, row.kind), eq(syncFieldClocks.recordId, row.recordId)))
    .run();
}
