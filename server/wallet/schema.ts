import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { LEDGER_KINDS } from '../../shared/automation.js';
import { cabinets } from '../tenancy/schema.js';

/**
 * The credits ledger: the balance is the sum. A job is debited once and refunded at most once,
 * enforced by the unique index, not by code paths.
 */
export const walletLedger = sqliteTable(
  'wallet_ledger',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    cabinetId: text('cabinet_id')
      .notNull()
      .references(() => cabinets.id),
    kind: text('kind', { enum: LEDGER_KINDS }).notNull(),
    amount: integer('amount').notNull(),
    jobId: text('job_id'),
    note: text('note'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('wallet_ledger_cabinet_idx').on(t.cabinetId, t.id),
    uniqueIndex('wallet_ledger_job_once_idx')
      .on(t.jobId, t.kind)
      .where(sql`job_id IS NOT NULL`),
  ],
);

/**
 * The running balance of each cabinet, updated in the same transaction as every ledger entry, so
 * that an enqueue reads one row instead of summing the whole history. The ledger stays the record.
 */
export const walletBalances = sqliteTable('wallet_balances', {
  cabinetId: text('cabinet_id')
    .primaryKey()
    .references(() => cabinets.id),
  balance: integer('balance').notNull(),
});
