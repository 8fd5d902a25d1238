import { and, desc, eq, sum } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { walletLedger } from './schema.js';

export type LedgerRow = typeof walletLedger.$inferSelect;

export function balance(orm: Orm, cabinetId: string): number {
  return Number(orm.select({ total: sum(walletLedger.amount) }).from(walletLedger).where(eq(walletLedger.cabinetId, cabinetId)).get()?.total ?? 0);
}

/** Appends an entry; false when the job already has an entry of that kind (the unique index said no). */
export function appendEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  return orm.insert(walletLedger).values(row).onConflictDoNothing().run().changes > 0;
}

export function recentEntries(orm: Orm, cabinetId: string, limit: number): LedgerRow[] {
  return orm.select().from(walletLedger).where(eq(walletLedger.cabinetId, cabinetId)).orderBy(desc(walletLedger.id)).limit(limit).all();
}

export function jobEntries(orm: Orm, cabinetId: string, jobId: string): LedgerRow[] {
  return orm
    .select()
    .from(walletLedger)
    .where(and(eq(walletLedger.cabinetId, cabinetId), eq(walletLedger.jobId, jobId)))
    .all();
}
