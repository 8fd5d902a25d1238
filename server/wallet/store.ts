import { desc, eq, sum } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { tableSql } from '../platform/db/table-sql.js';
import { walletHubLinks, walletLedger } from './schema.js';

export type LedgerRow = typeof walletLedger.$inferSelect;
export type HubLinkRow = typeof walletHubLinks.$inferSelect;

/** Every enqueue debits and every finished job reads its entries: prepared once (table-sql.ts). */
const LEDGER = tableSql(walletLedger);
const LINKS = tableSql(walletHubLinks);

/** This install's own entries (made here): what its jobs were debited and refunded. */
const OWN = "(hub_state IS NULL OR hub_state <> 'mirrored')";

export function balance(orm: Orm, cabinetId: string): number {
  return (orm.prepared('SELECT balance FROM wallet_balances WHERE cabinet_id = ?').pluck(true).get(cabinetId) as number | undefined) ?? 0;
}

export function setBalance(orm: Orm, cabinetId: string, value: number): void {
  orm
    .prepared(
      'INSERT INTO wallet_balances (cabinet_id, balance) VALUES (?, ?) ON CONFLICT (cabinet_id) DO UPDATE SET balance = excluded.balance',
    )
    .run(cabinetId, value);
}

/**
 * Appends an entry and moves the balance by its amount; false, changing nothing, when the job
 * already has an entry of that kind (the unique index said no). Callers run it in a transaction.
 */
export function appendEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  if (!LEDGER.insertIfAbsent(orm, row)) return false;
  orm
    .prepared(
      'INSERT INTO wallet_balances (cabinet_id, balance) VALUES (?, ?) ON CONFLICT (cabinet_id) DO UPDATE SET balance = balance + excluded.balance',
    )
    .run(row.cabinetId, row.amount);
  return true;
}

/** Writes an entry that came from the hub without moving the balance (the hub's balance is the authority); false if it is here already. */
export function mirrorEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  return LEDGER.insertIfAbsent(orm, row);
}

/** The ledger's own sum, to check the running balance against (tests, audits). */
export function ledgerSum(orm: Orm, cabinetId: string): number {
  return Number(
    orm
      .select({ total: sum(walletLedger.amount) })
      .from(walletLedger)
      .where(eq(walletLedger.cabinetId, cabinetId))
      .get()?.total ?? 0,
  );
}

/** The sum of the entries made here that the balance counts on top of the link's base: pending ones, and those made after an unlink. */
export function countedOnTop(orm: Orm, cabinetId: string, sinceEntry: number): number {
  return orm
    .prepared(
      "SELECT coalesce(sum(amount), 0) FROM wallet_ledger WHERE cabinet_id = ? AND (hub_state = 'pending' OR (hub_state IS NULL AND id > ?))",
    )
    .pluck(true)
    .get(cabinetId, sinceEntry) as number;
}

/** Credits spent here (net of refunds) that the hub has not acknowledged: the offline allowance's count. */
export function pendingSpend(orm: Orm, cabinetId: string): number {
  return (
    0 -
    (orm
      .prepared(
        "SELECT coalesce(sum(amount), 0) FROM wallet_ledger WHERE cabinet_id = ? AND hub_state = 'pending' AND kind IN ('debit', 'refund')",
      )
      .pluck(true)
      .get(cabinetId) as number)
  );
}

/** The entries to send, oldest first but an opening first of all: the hub takes it only in the registering device's first exchange. */
export function pendingEntries(orm: Orm, cabinetId: string, limit: number): LedgerRow[] {
  return LEDGER.all(orm, "WHERE cabinet_id = ? AND hub_state = 'pending' ORDER BY kind <> 'opening', id LIMIT ?", cabinetId, limit);
}

export function setHubState(
  orm: Orm,
  cabinetId: string,
  entryId: string,
  changes: { hubState: LedgerRow['hubState']; hubSeq?: number },
): void {
  LEDGER.update(orm, changes, 'WHERE cabinet_id = ? AND entry_id = ?', cabinetId, entryId);
}

/** Every entry made here and held by the hub goes back to pending (sent again: the hub may have lost it). */
export function resendHeld(orm: Orm, cabinetId: string): void {
  LEDGER.update(orm, { hubState: 'pending', hubSeq: null }, "WHERE cabinet_id = ? AND hub_state = 'held'", cabinetId);
}

/**
 * The link ends, or a new one begins: entries made here stay this install's history. Those the hub
 * never acknowledged are not sent any more, and those it held are an earlier device's, whose
 * refunds the next device could not make (the hub takes a refund of the sender's own debit only).
 */
export function keepOwnHere(orm: Orm, cabinetId: string): void {
  LEDGER.update(orm, { hubState: null }, "WHERE cabinet_id = ? AND hub_state IN ('pending', 'held')", cabinetId);
}

/** This install's debits of these jobs that are not the hub's (made before the link), took credits and were not refunded. */
export function unsentDebits(orm: Orm, cabinetId: string, jobIds: readonly string[]): LedgerRow[] {
  if (jobIds.length === 0) return [];
  return LEDGER.all(
    orm,
    `WHERE cabinet_id = ? AND kind = 'debit' AND amount < 0 AND hub_state IS NULL AND job_id IN (SELECT value FROM json_each(?))
       AND job_id NOT IN (SELECT job_id FROM wallet_ledger WHERE cabinet_id = ? AND kind = 'refund' AND job_id IS NOT NULL AND hub_state IS NOT 'mirrored')`,
    cabinetId,
    JSON.stringify(jobIds),
    cabinetId,
  );
}

/** An entry made here becomes one to send, under this entry id. */
export function markPending(orm: Orm, id: number, entryId: string): void {
  LEDGER.update(orm, { hubState: 'pending', entryId }, 'WHERE id = ?', id);
}

export function newestEntryId(orm: Orm, cabinetId: string): number {
  return (orm.prepared('SELECT coalesce(max(id), 0) FROM wallet_ledger WHERE cabinet_id = ?').pluck(true).get(cabinetId) as number) ?? 0;
}

export function recentEntries(orm: Orm, cabinetId: string, limit: number): LedgerRow[] {
  return orm.select().from(walletLedger).where(eq(walletLedger.cabinetId, cabinetId)).orderBy(desc(walletLedger.id)).limit(limit).all();
}

/** This install's entries of one of its jobs (the other installs' entries of a job are theirs). */
export function jobEntries(orm: Orm, cabinetId: string, jobId: string): LedgerRow[] {
  return LEDGER.all(orm, `WHERE cabinet_id = ? AND job_id = ? AND ${OWN}`, cabinetId, jobId);
}

export function findLink(orm: Orm, cabinetId: string): HubLinkRow | undefined {
  return LINKS.get(orm, 'WHERE cabinet_id = ?', cabinetId);
}

export function saveLink(orm: Orm, row: HubLinkRow): void {
  orm.insert(walletHubLinks).values(row).onConflictDoUpdate({ target: walletHubLinks.cabinetId, set: row }).run();
}

export function updateLink(orm: Orm, cabinetId: string, changes: Partial<HubLinkRow>): void {
  LINKS.update(orm, changes, 'WHERE cabinet_id = ?', cabinetId);
}
