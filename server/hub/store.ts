import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { PulledChange, SyncChange, SyncedKind, SyncOp } from '../../shared/sync-protocol.js';

/**
 * The queries of a push and a pull, in SQL through the driver: the hot path, where one statement
 * per batch matters more than a query builder. Every query names the cabinet.
 *
 * Parameters that PostgreSQL should read as jsonb are sent as text and cast in SQL, so no json
 * serializer of the driver ever sees them (connectHub's client sends json parameters as given).
 */

/** The NOTIFY channel of pushes; its payload is the cabinet id. */
export const CHANGES_CHANNEL = 'hub_changes';
/** The NOTIFY channel of revocations; its payload is the device id. */
export const DEVICES_CHANNEL = 'hub_devices';

export async function notifyRevoked(sql: Sql, deviceId: string): Promise<void> {
  await sql`SELECT pg_notify(${DEVICES_CHANNEL}, ${deviceId})`;
}

/** Whether the device was revoked since its request was authenticated (a long poll checks before it answers). */
export async function deviceRevoked(sql: Sql, deviceId: string): Promise<boolean> {
  const [row] = await sql<{ revoked: boolean }[]>`SELECT revoked_at IS NOT NULL AS revoked FROM hub_devices WHERE id = ${deviceId}`;
  return row?.revoked ?? true;
}

export interface LockedDevice {
  lastNumber: number;
  revoked: boolean;
}

/** The device's row, locked until commit: one push per device at a time, and its last_number read under the lock. */
export async function lockDevice(tx: TransactionSql, cabinetId: string, deviceId: string): Promise<LockedDevice | undefined> {
  const [row] = await tx<{ last_number: string; revoked: boolean }[]>`
    SELECT last_number, revoked_at IS NOT NULL AS revoked FROM hub_devices
    WHERE cabinet_id = ${cabinetId} AND id = ${deviceId} FOR UPDATE`;
  return row && { lastNumber: Number(row.last_number), revoked: row.revoked };
}

/**
 * Hands out `count` consecutive seqs and raises the cabinet's protocol. The UPDATE locks the
 * cabinet's row until commit, so pushes of one cabinet commit one after the other in seq order:
 * a reader that has seen seq n can never later find a seq below n appear (a sequence or bigserial
 * hands numbers out at insert time, and concurrent transactions commit out of that order).
 */
export async function allocateSeqs(
  tx: TransactionSql,
  cabinetId: string,
  count: number,
  protocol: number,
): Promise<{ firstSeq: number; highestProtocol: number; changesCount: number }> {
  const [row] = await tx<{ first_seq: string; highest_protocol: number; changes_count: string }[]>`
    UPDATE hub_cabinets SET next_seq = next_seq + ${count}, highest_protocol = GREATEST(highest_protocol, ${protocol}::int), changes_count = changes_count + ${count}
    WHERE id = ${cabinetId}
    RETURNING next_seq - ${count} AS first_seq, highest_protocol, changes_count`;
  if (!row) throw new Error(`cabinet ${cabinetId} vanished during a push`);
  return { firstSeq: Number(row.first_seq), highestProtocol: row.highest_protocol, changesCount: Number(row.changes_count) };
}

export async function raiseProtocol(sql: Sql, cabinetId: string, protocol: number): Promise<void> {
  await sql`UPDATE hub_cabinets SET highest_protocol = ${protocol}::int WHERE id = ${cabinetId} AND highest_protocol < ${protocol}::int`;
}

/** A change as received, with the size of its fields as JSON (a first check, before anything is stored). */
export type SizedChange = SyncChange & { bytes: number };

/**
 * A push's changes, parsed once into this connection's temporary table before the push takes any
 * lock: what costs (reading the JSON, sizing each change's fields as PostgreSQL writes them out,
 * the stamps a record created by the change takes) is done while other pushes of the cabinet store
 * theirs, and the cabinet's lock is held only to copy the rows. The table empties at commit.
 */
export async function stageChanges(tx: TransactionSql, changes: readonly SyncChange[]): Promise<void> {
  await tx`
    CREATE TEMPORARY TABLE IF NOT EXISTS hub_push_batch (
      number bigint PRIMARY KEY, kind text, record_id text, op text, hlc text, fields jsonb, bytes int, stamps jsonb, stamps_bytes int
    ) ON COMMIT DELETE ROWS`;
  await restageChanges(tx, changes);
}

/** Stages changes, or stages again those whose fields changed since (an erasure emptied them). */
export async function restageChanges(tx: TransactionSql, changes: readonly SyncChange[]): Promise<void> {
  const rows = JSON.stringify(
    changes.map((c) => ({ number: c.number, kind: c.kind, record_id: c.record_id, op: c.op, hlc: c.hlc, fields: c.fields })),
  );
  await tx`
    INSERT INTO hub_push_batch (number, kind, record_id, op, hlc, fields, bytes, stamps, stamps_bytes)
    SELECT number, kind, record_id, op, hlc, fields, octet_length(fields::text), stamps, octet_length(stamps::text)
    FROM jsonb_to_recordset(${rows}::text::jsonb) AS r(number bigint, kind text, record_id text, op text, hlc text, fields jsonb)
    CROSS JOIN LATERAL (SELECT coalesce(jsonb_object_agg(k, r.hlc), '{}'::jsonb) AS stamps FROM jsonb_object_keys(r.fields) k) s
    ON CONFLICT (number) DO UPDATE SET fields = excluded.fields, bytes = excluded.bytes, stamps = excluded.stamps, stamps_bytes = excluded.stamps_bytes`;
}

/** What a push stored: each change's size by number, and the cabinet's bytes of changes now. */
export interface StoredBatch {
  stored: { number: number; bytes: number }[];
  changesBytes: number;
}

/**
 * Runs an INSERT into hub_changes (`RETURNING number, bytes`) and adds what it stored to the
 * cabinet's bytes in the same statement (the cabinet's row is locked since allocateSeqs).
 */
async function storeCounting(tx: TransactionSql, cabinetId: string, insert: PendingQuery<Row[]>): Promise<StoredBatch> {
  const rows = await tx<{ number: string; bytes: number; changes_bytes: string }[]>`
    WITH stored AS (${insert}),
    counted AS (
      UPDATE hub_cabinets SET changes_bytes = changes_bytes + (SELECT coalesce(sum(bytes), 0) FROM stored) WHERE id = ${cabinetId}
      RETURNING changes_bytes
    )
    SELECT stored.number, stored.bytes, counted.changes_bytes FROM stored CROSS JOIN counted`;
  return {
    stored: rows.map((row) => ({ number: Number(row.number), bytes: row.bytes })),
    changesBytes: Number(rows[0]?.changes_bytes ?? 0),
  };
}

/**
 * One INSERT for the whole batch: seqs firstSeq, firstSeq + 1, … in the batch's order. Each change's
 * size is its fields as PostgreSQL writes them out, what a pull will send; returned per number, and
 * added to the cabinet's bytes (storeCounting).
 */
export async function insertChanges(
  tx: TransactionSql,
  cabinetId: string,
  deviceId: string,
  firstSeq: number,
  receivedAt: string,
  changes: readonly SyncChange[],
): Promise<StoredBatch> {
  const rows = JSON.stringify(
    changes.map((c, i) => ({ i, number: c.number, kind: c.kind, record_id: c.record_id, op: c.op, hlc: c.hlc, fields: c.fields })),
  );
  return storeCounting(
    tx,
    cabinetId,
    tx`
      INSERT INTO hub_changes (cabinet_id, seq, device_id, number, kind, record_id, op, hlc, fields, bytes, received_at)
      SELECT ${cabinetId}, ${firstSeq}::bigint + r.i, ${deviceId}, r.number, r.kind, r.record_id, r.op, r.hlc, r.fields, octet_length(r.fields::text), ${receivedAt}::timestamptz
      FROM jsonb_to_recordset(${rows}::text::jsonb) AS r(i int, number bigint, kind text, record_id text, op text, hlc text, fields jsonb)
      RETURNING number, bytes`,
  );
}

/** The staged changes numbered `from` to `to`, which a push stores under consecutive seqs from `firstSeq`. */
export interface StagedRange {
  firstSeq: number;
  from: number;
  to: number;
}

/** insertChanges from the staged rows of the range; all of them, or the push fails. */
export async function insertStagedChanges(
  tx: TransactionSql,
  cabinetId: string,
  deviceId: string,
  range: StagedRange,
  receivedAt: string,
): Promise<StoredBatch> {
  const batch = await storeCounting(
    tx,
    cabinetId,
    tx`
      INSERT INTO hub_changes (cabinet_id, seq, device_id, number, kind, record_id, op, hlc, fields, bytes, received_at)
      SELECT ${cabinetId}, ${range.firstSeq}::bigint + (number - ${range.from}::bigint), ${deviceId}, number, kind, record_id, op, hlc, fields, bytes, ${receivedAt}::timestamptz
      FROM hub_push_batch WHERE number BETWEEN ${range.from}::bigint AND ${range.to}::bigint
      RETURNING number, bytes`,
  );
  // The table empties at each commit, and a push is one transaction: a row missing or left over is a bug, never stored quietly.
  if (batch.stored.length !== range.to - range.from + 1)
    throw new Error(`the push staged ${batch.stored.length} changes of the ${range.to - range.from + 1} it stores`);
  return batch;
}

/**
 * Erasures among seqs [fromSeq, toSeq] empty the fields of every earlier upsert of their record. An
 * earlier erasure keeps its tombstone, which holds no personal data: emptied, it would be an erasure
 * that says nothing, which the installs would have to tell from a forged one. An emptied change
 * keeps the size it was counted at: compaction takes that much off the cabinet's quota.
 */
export async function scrubBeforeErasures(tx: TransactionSql, cabinetId: string, fromSeq: number, toSeq: number): Promise<number> {
  const result = await tx`
    UPDATE hub_changes h SET fields = '{}'::jsonb
    FROM (
      SELECT kind, record_id, max(seq) AS seq FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND seq BETWEEN ${fromSeq} AND ${toSeq} AND op = 'erase'
      GROUP BY kind, record_id
    ) e
    WHERE h.cabinet_id = ${cabinetId} AND h.kind = e.kind AND h.record_id = e.record_id AND h.seq < e.seq AND h.op = 'upsert' AND h.fields <> '{}'::jsonb`;
  return result.count;
}

/** The stamps the hub holds for a device's numbers in a range: what a replayed batch must match. */
export async function storedStamps(
  tx: TransactionSql,
  cabinetId: string,
  deviceId: string,
  from: number,
  to: number,
): Promise<Map<number, string>> {
  const rows = await tx<{ number: string; hlc: string }[]>`
    SELECT number, hlc FROM hub_changes WHERE cabinet_id = ${cabinetId} AND device_id = ${deviceId} AND number BETWEEN ${from} AND ${to}`;
  return new Map(rows.map((row) => [Number(row.number), row.hlc]));
}

export async function setLastNumber(tx: TransactionSql, cabinetId: string, deviceId: string, lastNumber: number): Promise<void> {
  await tx`UPDATE hub_devices SET last_number = ${lastNumber} WHERE cabinet_id = ${cabinetId} AND id = ${deviceId}`;
}

/**
 * Wakes the cabinet's long polls on every hub process (each LISTENs): sent once a push has
 * committed, in a transaction of its own, never inside the push's. PostgreSQL serialises the commits
 * of every transaction that notifies, in every database of the cluster, on one lock held until the
 * commit is flushed to disk: inside the push's transaction, pushes of all cabinets would commit one
 * at a time. A notification alone writes nothing before its commit, so it commits without waiting
 * for the disk.
 */
export async function notifyChanges(sql: Sql, cabinetId: string): Promise<void> {
  await sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${cabinetId})`;
}

/** A change as a pull serves it, its fields still the JSON text PostgreSQL holds: the hub never looks inside them. */
export type StoredChange = Omit<PulledChange, 'fields'> & { fieldsJson: string };

export interface ChangesRead {
  /** Other devices' changes after the seq, in seq order, at most the limit asked for and about maxBytes of fields. */
  rows: StoredChange[];
  /** Whether changes were left out to stay under maxBytes (there is more after the last row). */
  cut: boolean;
  /** The cabinet's newest committed seq when they were read. */
  newestSeq: number;
  /** The cabinet's newest wallet seq then (a long poll also ends for a new credits entry). */
  walletSeq: number;
  /** The oldest seq the hub still held then (compaction deleted those below). */
  retainedFromSeq: number;
}

/**
 * Other devices' changes after a seq, in seq order, at most `limit` (the caller asks one more than
 * it serves, to tell whether more wait) and no more once their fields reach `maxBytes` (the first
 * always comes, whatever its size), and the newest seq of the cabinet and the oldest it still holds,
 * read in one statement (one snapshot: a compaction that commits meanwhile is not half seen): since seqs commit in order, every change up to that seq is visible to it, so a
 * reader may move its cursor past the caller's own changes up to there without skipping anything.
 * The sizes are the stored `bytes`, so the fields of changes left out are never read.
 * A device needs its own changes back only when it was restored from a backup (`own`).
 */
export async function readChanges(
  sql: Sql,
  cabinetId: string,
  callerDeviceId: string,
  after: number,
  limit: number,
  maxBytes: number,
  own = false,
): Promise<ChangesRead> {
  const rows = await sql<
    {
      seq: string | null;
      device_id: string;
      kind: SyncedKind;
      record_id: string;
      op: SyncOp;
      hlc: string;
      fields: string;
      newest: string;
      retained_from: string;
      wallet_seq: string | null;
      listed: number;
    }[]
  >`
    WITH newest AS (SELECT next_seq - 1 AS seq, retained_from_seq, wallet_next_seq - 1 AS wallet_seq FROM hub_cabinets WHERE id = ${cabinetId}),
    listed AS (
      SELECT seq, sum(bytes) OVER (ORDER BY seq) - bytes AS before FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND seq > ${after} AND (device_id <> ${callerDeviceId} OR ${own})
      ORDER BY seq LIMIT ${limit}
    ),
    kept AS (SELECT seq FROM listed WHERE before < ${maxBytes} OR seq = (SELECT min(seq) FROM listed))
    SELECT h.seq, h.device_id, h.kind, h.record_id, h.op, h.hlc, h.fields::text AS fields, newest.seq AS newest, newest.retained_from_seq AS retained_from, newest.wallet_seq, (SELECT count(*)::int FROM listed) AS listed
    FROM newest LEFT JOIN (kept JOIN hub_changes h ON h.cabinet_id = ${cabinetId} AND h.seq = kept.seq) ON true ORDER BY h.seq`;
  const newestSeq = Number(rows[0]?.newest ?? 0);
  const changes = rows.flatMap((r) =>
    r.seq === null
      ? []
      : [{ seq: Number(r.seq), device_id: r.device_id, kind: r.kind, record_id: r.record_id, op: r.op, hlc: r.hlc, fieldsJson: r.fields }],
  );
  return {
    rows: changes,
    cut: changes.length < (rows[0]?.listed ?? 0),
    newestSeq,
    retainedFromSeq: Number(rows[0]?.retained_from ?? 1),
    walletSeq: Number(rows[0]?.wallet_seq ?? 0),
  };
}
