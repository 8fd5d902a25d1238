import type { Sql, TransactionSql } from 'postgres';
import { ApiError } from '../errors.js';
import type { HubDeps } from './deps.js';

/**
 * Retention on the hub: each record's state (hub_records) holds the effect of every change, so the
 * changes themselves are kept only as a tail, for installs that pull often, and PDFs only while a
 * record names them. Compaction runs from `courtier hub serve` periodically and from `courtier hub
 * compact`; any number of them may run at once (each deletes what is still there and counts what
 * it deleted).
 */

export interface Retention {
  /** Changes received in these last days are kept… */
  days: number;
  /** …and so are the newest this many of each cabinet, whichever keeps more (at least 1, so that a waiting cursor never expires). */
  changes: number;
  /** A PDF no record names is deleted once it is older than this (a PDF is uploaded before the change that names it). */
  blobGraceMs: number;
}

export const DEFAULT_RETENTION: Retention = { days: 30, changes: 100_000, blobGraceMs: 24 * 3600_000 };

/** Changes deleted per transaction: each holds the cabinet's row lock (pushes wait) only for its own commit. */
const COMPACTION_BATCH = 10_000;

/**
 * Where a record names a PDF (each kind's blobsOf): a quote's and an advice document's pdf_sha256,
 * and a quote's other documents (its documents field, a JSON list holding each one's SHA-256). A
 * contract's proof is its quote's PDF.
 */
const BLOB_KINDS = ['devis', 'conseil'];
const BLOB_FIELD = 'pdf_sha256';
const DOCUMENTS_FIELD = 'documents';

export interface CompactionSummary {
  cabinet_id: string;
  changes_deleted: number;
  change_bytes_deleted: number;
  blobs_deleted: number;
  blob_bytes_deleted: number;
  /** The oldest seq the hub now holds: a cursor below it minus one gets 410 cursor_expired. */
  retained_from_seq: number;
}

/** The seq below which the retention lets changes go: the older of the newest `changes` and those of the last `days`. */
async function cutOf(sql: Sql, cabinetId: string, retention: Retention, now: number): Promise<{ from: number; cut: number }> {
  const [row] = await sql<{ newest: string; retained_from: string; recent: string | null }[]>`
    SELECT c.next_seq - 1 AS newest, c.retained_from_seq AS retained_from,
      (SELECT min(seq) FROM hub_changes h WHERE h.cabinet_id = c.id AND h.received_at >= ${new Date(now - retention.days * 86_400_000).toISOString()}::timestamptz) AS recent
    FROM hub_cabinets c WHERE c.id = ${cabinetId}`;
  if (!row) throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them).`);
  const newest = Number(row.newest);
  const byCount = newest - Math.max(1, retention.changes) + 1;
  const byAge = row.recent === null ? newest + 1 : Number(row.recent);
  const from = Number(row.retained_from);
  return { from, cut: Math.max(from, Math.min(byCount, byAge)) };
}

/**
 * Deletes one range of changes and raises the cabinet's oldest retained seq in one statement: a pull
 * reads that seq in the snapshot it reads changes in, so it never sees the gap without the 410. The
 * cabinet's row is locked first, as a push locks it before an erasure rewrites old changes: the
 * other order would let the two deadlock.
 */
async function deleteRange(sql: Sql, cabinetId: string, from: number, to: number): Promise<{ count: number; bytes: number }> {
  return sql.begin(async (tx) => {
    await tx`SELECT 1 FROM hub_cabinets WHERE id = ${cabinetId} FOR UPDATE`;
    return deleteRangeLocked(tx, cabinetId, from, to);
  });
}

async function deleteRangeLocked(
  sql: TransactionSql,
  cabinetId: string,
  from: number,
  to: number,
): Promise<{ count: number; bytes: number }> {
  const [row] = await sql<{ count: number; bytes: string }[]>`
    WITH gone AS (DELETE FROM hub_changes WHERE cabinet_id = ${cabinetId} AND seq >= ${from} AND seq < ${to} RETURNING bytes),
    counted AS (SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone)
    UPDATE hub_cabinets SET retained_from_seq = GREATEST(retained_from_seq, ${to}), changes_count = changes_count - counted.count, changes_bytes = changes_bytes - counted.bytes
    FROM counted WHERE id = ${cabinetId}
    RETURNING counted.count, counted.bytes`;
  return { count: row?.count ?? 0, bytes: Number(row?.bytes ?? 0) };
}

/**
 * PDFs past their grace period that neither a record's state, a change still held, nor a signed
 * quote ever named: deleted, and uncounted. The cabinet's row is locked first, as a push (whose
 * erasure deletes PDFs) and an upload lock it: deleting the PDFs first would let a push that holds
 * the cabinet and deletes one of them deadlock with this.
 */
async function collectBlobs(sql: Sql, cabinetId: string, before: number): Promise<{ count: number; bytes: number }> {
  return sql.begin(async (tx) => {
    // As the UPDATE below would lock it (FOR UPDATE would also wait for every insert that names the cabinet).
    await tx`SELECT 1 FROM hub_cabinets WHERE id = ${cabinetId} FOR NO KEY UPDATE`;
    return collectBlobsLocked(tx, cabinetId, before);
  });
}

async function collectBlobsLocked(sql: TransactionSql, cabinetId: string, before: number): Promise<{ count: number; bytes: number }> {
  const [row] = await sql<{ count: number; bytes: string }[]>`
    WITH gone AS (
      DELETE FROM hub_blobs b WHERE b.cabinet_id = ${cabinetId} AND b.created_at < ${new Date(before).toISOString()}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM hub_records r WHERE r.cabinet_id = ${cabinetId} AND r.kind = ANY(${BLOB_KINDS}::text[])
          AND (r.fields->>${BLOB_FIELD} = b.sha256 OR r.signed_pdf = b.sha256 OR strpos(r.fields->>${DOCUMENTS_FIELD}, b.sha256) > 0))
        AND NOT EXISTS (SELECT 1 FROM hub_changes h WHERE h.cabinet_id = ${cabinetId} AND h.kind = ANY(${BLOB_KINDS}::text[])
          AND (h.fields->>${BLOB_FIELD} = b.sha256 OR strpos(h.fields->>${DOCUMENTS_FIELD}, b.sha256) > 0))
      RETURNING size
    ),
    counted AS (SELECT count(*)::int AS count, coalesce(sum(size), 0)::bigint AS bytes FROM gone)
    UPDATE hub_cabinets SET blobs_count = blobs_count - counted.count, blobs_bytes = blobs_bytes - counted.bytes
    FROM counted WHERE id = ${cabinetId}
    RETURNING counted.count, counted.bytes`;
  return { count: row?.count ?? 0, bytes: Number(row?.bytes ?? 0) };
}

/** Compacts one cabinet: its changes older than the retention, in batches, then its PDFs no record names. */
export async function compactCabinet(
  deps: Pick<HubDeps, 'sql' | 'clock'>,
  cabinetId: string,
  retention: Retention,
): Promise<CompactionSummary> {
  const now = deps.clock.now();
  const { from, cut } = await cutOf(deps.sql, cabinetId, retention, now);
  let changes = { count: 0, bytes: 0 };
  for (let start = from; start < cut; start += COMPACTION_BATCH) {
    const gone = await deleteRange(deps.sql, cabinetId, start, Math.min(start + COMPACTION_BATCH, cut));
    changes = { count: changes.count + gone.count, bytes: changes.bytes + gone.bytes };
  }
  const blobs = await collectBlobs(deps.sql, cabinetId, now - retention.blobGraceMs);
  return {
    cabinet_id: cabinetId,
    changes_deleted: changes.count,
    change_bytes_deleted: changes.bytes,
    blobs_deleted: blobs.count,
    blob_bytes_deleted: blobs.bytes,
    retained_from_seq: Math.max(from, cut),
  };
}

/** Compacts every cabinet of the hub, or the one named, one after the other. */
export async function compactHub(
  deps: Pick<HubDeps, 'sql' | 'clock'>,
  retention: Retention,
  cabinetId?: string,
): Promise<CompactionSummary[]> {
  const ids =
    cabinetId === undefined
      ? (await deps.sql<{ id: string }[]>`SELECT id FROM hub_cabinets ORDER BY id`).map((row) => row.id)
      : [cabinetId];
  const summaries: CompactionSummary[] = [];
  for (const id of ids) summaries.push(await compactCabinet(deps, id, retention));
  return summaries;
}
