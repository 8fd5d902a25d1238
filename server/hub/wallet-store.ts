import type { Sql, TransactionSql } from 'postgres';
import type { HubWalletEntry, HubWalletKind } from '../../shared/sync-wallet.js';

/**
 * The queries of the cabinet's wallet on the hub, in SQL through the driver like the changes'.
 * Every query names the cabinet; every write runs under the cabinet's row lock (lockWallet).
 */

export interface LockedWallet {
  balance: number;
  newestSeq: number;
  registeredBy: string | null;
}

/**
 * The cabinet's row, locked until commit: one writer of the cabinet's wallet at a time, so that
 * seqs commit in seq order (a cursor never skips one) and the balance moves with its entries.
 */
export async function lockWallet(tx: TransactionSql, cabinetId: string): Promise<LockedWallet | undefined> {
  const [row] = await tx<{ wallet_balance: string; wallet_next_seq: string; registered_by: string | null }[]>`
    SELECT wallet_balance, wallet_next_seq, registered_by FROM hub_cabinets WHERE id = ${cabinetId} FOR UPDATE`;
  return row && { balance: Number(row.wallet_balance), newestSeq: Number(row.wallet_next_seq) - 1, registeredBy: row.registered_by };
}

/**
 * The registering device's first exchange is its only chance to bring an opening balance: after it,
 * whatever it carried, none is taken (a stolen laptop could otherwise mint one later).
 */
export async function closeOpening(tx: TransactionSql, cabinetId: string): Promise<void> {
  await tx`UPDATE hub_cabinets SET registered_by = NULL WHERE id = ${cabinetId}`;
}

/** An entry as the hub holds it. */
export interface StoredWalletEntry {
  seq: number;
  entryId: string;
  kind: HubWalletKind;
  amount: number;
  jobId: string | null;
  deviceId: string | null;
}

interface Row {
  seq: string;
  entry_id: string;
  kind: HubWalletKind;
  amount: number;
  job_id: string | null;
  device_id: string | null;
  note: string | null;
  created_at: Date | string;
}

const stored = (r: Row): StoredWalletEntry => ({
  seq: Number(r.seq),
  entryId: r.entry_id,
  kind: r.kind,
  amount: r.amount,
  jobId: r.job_id,
  deviceId: r.device_id,
});

/** The entries the cabinet holds under these ids (an entry sent again), and this device's entries of these jobs (a refund's debit, a second debit). */
export async function relatedEntries(
  tx: TransactionSql,
  cabinetId: string,
  deviceId: string,
  entryIds: readonly string[],
  jobIds: readonly string[],
): Promise<StoredWalletEntry[]> {
  const rows = await tx<Row[]>`
    SELECT seq, entry_id, kind, amount, job_id, device_id, note, created_at FROM hub_wallet_entries
    WHERE cabinet_id = ${cabinetId} AND (entry_id = ANY(${entryIds as string[]}::text[]) OR (device_id = ${deviceId} AND job_id = ANY(${jobIds as string[]}::text[])))`;
  return rows.map(stored);
}

/** Whether the cabinet holds an opening entry. */
export async function hasOpening(tx: TransactionSql, cabinetId: string): Promise<boolean> {
  const [row] = await tx<
    { found: boolean }[]
  >`SELECT EXISTS (SELECT 1 FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId} AND kind = 'opening') AS found`;
  return row?.found ?? false;
}

export interface NewWalletEntry {
  entryId: string;
  kind: HubWalletKind;
  amount: number;
  jobId: string | null;
  deviceId: string | null;
  note: string | null;
}

/**
 * Stores entries with the cabinet's next seqs and moves its balance by their sum, in the caller's
 * transaction (the cabinet's row is locked). Returns each entry's seq, in order, and the new balance.
 */
export async function appendWalletEntries(
  tx: TransactionSql,
  cabinetId: string,
  entries: readonly NewWalletEntry[],
  createdAt: string,
): Promise<{ seqs: number[]; balance: number }> {
  const total = entries.reduce((sum, entry) => sum + entry.amount, 0);
  const [cabinet] = await tx<{ first_seq: string; wallet_balance: string }[]>`
    UPDATE hub_cabinets SET wallet_next_seq = wallet_next_seq + ${entries.length}, wallet_balance = wallet_balance + ${total}
    WHERE id = ${cabinetId} RETURNING wallet_next_seq - ${entries.length} AS first_seq, wallet_balance`;
  if (!cabinet) throw new Error(`cabinet ${cabinetId} vanished during a wallet exchange`);
  const firstSeq = Number(cabinet.first_seq);
  const rows = JSON.stringify(
    entries.map((e, i) => ({
      i,
      entry_id: e.entryId,
      kind: e.kind,
      amount: e.amount,
      job_id: e.jobId,
      device_id: e.deviceId,
      note: e.note,
    })),
  );
  await tx`
    INSERT INTO hub_wallet_entries (cabinet_id, seq, entry_id, kind, amount, job_id, device_id, note, created_at)
    SELECT ${cabinetId}, ${firstSeq}::bigint + r.i, r.entry_id, r.kind, r.amount, r.job_id, r.device_id, r.note, ${createdAt}::timestamptz
    FROM jsonb_to_recordset(${rows}::text::jsonb) AS r(i int, entry_id text, kind text, amount int, job_id text, device_id text, note text)`;
  return { seqs: entries.map((_, i) => firstSeq + i), balance: Number(cabinet.wallet_balance) };
}

/** The cabinet's entries after a seq, in seq order, at most `limit`. */
export async function walletEntriesAfter(
  sql: Sql | TransactionSql,
  cabinetId: string,
  after: number,
  limit: number,
): Promise<HubWalletEntry[]> {
  const rows = await sql<Row[]>`
    SELECT seq, entry_id, kind, amount, job_id, device_id, note, created_at FROM hub_wallet_entries
    WHERE cabinet_id = ${cabinetId} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
  return rows.map((r) => ({
    seq: Number(r.seq),
    entry_id: r.entry_id,
    kind: r.kind,
    amount: r.amount,
    job_id: r.job_id,
    device_id: r.device_id,
    note: r.note,
    created_at: new Date(r.created_at).toISOString(),
  }));
}

/** The newest entries of the cabinet, newest first (the operator's view). */
export async function recentWalletEntries(sql: Sql, cabinetId: string, limit: number): Promise<HubWalletEntry[]> {
  const [newest] = await sql<{ seq: string }[]>`SELECT wallet_next_seq - 1 AS seq FROM hub_cabinets WHERE id = ${cabinetId}`;
  const entries = await walletEntriesAfter(sql, cabinetId, Math.max(0, Number(newest?.seq ?? 0) - limit), limit);
  return entries.reverse();
}
