import { and, desc, eq, sql, sum } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { walletBalances, walletLedger } from './schema.js';

export type LedgerRow = typeof walletLedger.$inferSelect;

export function balance(orm: Orm, cabinetId: string): number {
  return orm.select({ balance: walletBalances.balance }).from(walletBalances).where(eq(walletBalances.cabinetId, cabinetId)).get()?.balance ?? 0;
}

/**
 * Appends an entry and moves the balance by its amount; false, changing nothing, when the job
 * already has an entry of that kind (the unique index said no). Callers run it in a transaction.
 */
export function appendEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  if (orm.insert(walletLedger).values(row).onConflictDoNothing().run().changes === 0) return false;
  orm
    .insert(walletBalances)
    .values({ cabinetId: row.cabinetId, balance: row.amount })
    .onConflictDoUpdate({ target: walletBalances.cabinetId, set: { balance: sql`${walletBalances.balance} + ${row.amount}` } })
    .run();
  return true;
}

/** The ledger's own sum, to check the running balance against (tests, audits). */
export function ledgerSum(orm: Orm, cabinetId: string): number {
  return Number(orm.select({ total: sum(walletLedger.amount) }).from(walletLedger).where(eq(walletLedger.cabinetId, cabinetId)).get()?.total ?? 0);
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
