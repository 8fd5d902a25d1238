import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { LEDGER_KINDS } from '../../shared/wallet.js';
import { cabinets } from '../tenancy/schema.js';

/**
 * Where an entry stands with the cabinet's hub (null: made here while the cabinet did not sync).
 * `outside`: a refund of a debit the cabinet's wallet never held (made before this link, or refused
 * by the hub), kept on this install's ledger, never sent and never counted.
 */
export const HUB_STATES = ['pending', 'held', 'refused', 'mirrored', 'outside'] as const;

/**
 * The credits ledger. Without sync the balance is the sum. With sync on, it mirrors the cabinet's
 * one wallet on the hub: this install's entries (pending until the hub acknowledges them, then
 * held) and those it got from the hub (mirrored: grants, the other installs' debits and refunds).
 * A job of this install is debited once and refunded at most once, enforced by the unique index.
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
    /** The entry's id on the hub (made here, or the hub's); null on entries made before this column. */
    entryId: text('entry_id'),
    hubState: text('hub_state', { enum: HUB_STATES }),
    /** The hub's wallet seq of the entry, once it holds it. */
    hubSeq: integer('hub_seq'),
    /** The install that made a mirrored entry (null for the operator's grants). */
    deviceId: text('device_id'),
  },
  (t) => [
    index('wallet_ledger_cabinet_idx').on(t.cabinetId, t.id),
    uniqueIndex('wallet_ledger_own_job_once_idx')
      .on(t.jobId, t.kind)
      .where(sql`job_id IS NOT NULL AND hub_state IS NOT 'mirrored'`),
    uniqueIndex('wallet_ledger_entry_idx')
      .on(t.cabinetId, t.entryId)
      .where(sql`entry_id IS NOT NULL`),
    index('wallet_ledger_pending_idx')
      .on(t.cabinetId, t.hubState)
      .where(sql`hub_state = 'pending'`),
  ],
);

/**
 * The cabinet's link to its one wallet on the hub, made when it connects or joins: the balance the
 * hub last gave (`hubBalance`) and the wallet cursor. Kept, unlinked,
 * after a disconnect: the balance then goes on from what the install last knew.
 */
export const walletHubLinks = sqliteTable('wallet_hub_links', {
  cabinetId: text('cabinet_id')
    .primaryKey()
    .references(() => cabinets.id),
  linked: integer('linked', { mode: 'boolean' }).notNull(),
  deviceId: text('device_id').notNull(),
  /** Linked: the hub's last balance. Unlinked: the balance at the disconnect, which later entries move. */
  hubBalance: integer('hub_balance').notNull(),
  cursor: integer('cursor').notNull(),
  /** The newest ledger entry when the link changed: entries made here after an unlink count on top of hubBalance. */
  sinceEntry: integer('since_entry').notNull(),
});

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
