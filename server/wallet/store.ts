import { desc, eq, sum } from 'drizzle-orm';
import type { Orm } from '../db/open.js';
import { tableSql } from '../db/table-sql.js';
import { walletLedger } from './schema.js';

export type LedgerRow = typeof walletLedger.$inferSelect;

/** Every enqueue debits and every finished job reads its entries: prepared once (table-sql.ts). */
const LEDGER = tableSql(walletLedger);

export function balance(orm: Orm, cabinetId: string): number {
  return (orm.prepared('SELECT balance FROM wallet_balances WHERE cabinet_id = ?').pluck(true).get(cabinetId) as number | undefined) ?? 0;
}

/**
 * Appends an entry and moves the balance by its amount; false, changing nothing, when the job
 * already has an entry of that kind (the unique index said no). Callers run it in a transaction.
 */
export function appendEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  if (!LEDGER.insertIfAbsent(orm, row)) return false;
  orm
    .prepared('INSERT INTO wallet_balances (cabinet_id, balance) VALUES (?, ?) ON CONFLICT (cabinet_id) DO UPDATE SET balance = balance + excluded.balance')
    .run(row.cabinetId, row.amount);
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
  return LEDGER.all(orm, 'WHERE cabinet_id = ? AND job_id = ?', cabinetId, jobId);
}
