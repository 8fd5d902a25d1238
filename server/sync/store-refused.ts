import { and, count, desc, eq } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { syncOutbox, syncRefused } from './schema.js';
import { readOutboxAfter, renumberOutbox } from './store.js';

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
