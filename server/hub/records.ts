import type { Sql, TransactionSql } from 'postgres';

/**
 * Each record's current state on the hub (hub_records): what an install that applied every change
 * the hub stored of it holds. Kept in the push's transaction, under the cabinet's lock, from the
 * changes as stored (after erasure scrubbed them), so that compaction can delete old changes and a
 * join read the state instead of the whole history.
 *
 * The fold is the installs' apply (server/sync/apply.ts), field by field: a field takes a change's
 * value only if the change's stamp is later than the one held (so among equal stamps the earliest
 * seq wins); an upsert of an erased record brings nothing; a record's first erasure replaces its
 * fields with the tombstone (the hub emptied every upsert before it), and later erasures merge
 * their tombstones field by field. Stamps are compared byte by byte (COLLATE "C"), as JavaScript
 * compares them on the installs.
 */
export async function foldIntoRecords(tx: TransactionSql, cabinetId: string, fromSeq: number, toSeq: number): Promise<void> {
  await tx`
    WITH batch AS (
      SELECT seq, device_id, kind, record_id, op, hlc, fields FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND seq BETWEEN ${fromSeq} AND ${toSeq}
    ),
    keys AS (SELECT kind, record_id, max(seq) AS last_seq, bool_or(op = 'erase') AS erases FROM batch GROUP BY kind, record_id),
    state AS (
      SELECT k.kind, k.record_id, k.last_seq, (SELECT b.device_id FROM batch b WHERE b.seq = k.last_seq) AS device_id,
        coalesce(r.erased, false) OR k.erases AS erased,
        CASE WHEN r.erased OR NOT k.erases THEN r.fields END AS prior_fields, r.stamps AS prior_stamps
      FROM keys k LEFT JOIN hub_records r ON r.cabinet_id = ${cabinetId} AND r.kind = k.kind AND r.record_id = k.record_id
    ),
    candidates AS (
      SELECT s.kind, s.record_id, f.key, f.value, s.prior_stamps->>f.key AS stamp, 0::bigint AS seq FROM state s, jsonb_each(s.prior_fields) f
      UNION ALL
      SELECT b.kind, b.record_id, f.key, f.value, b.hlc, b.seq
      FROM batch b JOIN state s ON s.kind = b.kind AND s.record_id = b.record_id, jsonb_each(b.fields) f
      WHERE (b.op = 'erase') = s.erased
    ),
    winners AS (
      SELECT DISTINCT ON (kind, record_id, key) kind, record_id, key, value, stamp FROM candidates
      ORDER BY kind, record_id, key, stamp COLLATE "C" DESC, seq
    ),
    merged AS (
      SELECT s.kind, s.record_id, s.last_seq, s.device_id, s.erased,
        coalesce(jsonb_object_agg(w.key, w.value) FILTER (WHERE w.key IS NOT NULL), '{}'::jsonb) AS fields,
        coalesce(jsonb_object_agg(w.key, w.stamp) FILTER (WHERE w.key IS NOT NULL), '{}'::jsonb) AS stamps
      FROM state s LEFT JOIN winners w ON w.kind = s.kind AND w.record_id = s.record_id
      GROUP BY s.kind, s.record_id, s.last_seq, s.device_id, s.erased
    )
    INSERT INTO hub_records (cabinet_id, kind, record_id, fields, stamps, erased, last_seq, device_id, bytes)
    SELECT ${cabinetId}, kind, record_id, fields, stamps, erased, last_seq, device_id, octet_length(fields::text) FROM merged
    ON CONFLICT (cabinet_id, kind, record_id) DO UPDATE SET
      fields = excluded.fields, stamps = excluded.stamps, erased = excluded.erased, last_seq = excluded.last_seq, device_id = excluded.device_id, bytes = excluded.bytes`;
}

/** A record's state as a state page serves it, its fields and stamps still the JSON text PostgreSQL holds. */
export interface StoredRecord {
  kind: string;
  record_id: string;
  erased: boolean;
  seq: number;
  device_id: string;
  fieldsJson: string;
  stampsJson: string;
}

export interface RecordsRead {
  rows: StoredRecord[];
  /** Whether records were left out to stay under maxBytes. */
  cut: boolean;
  /** The cabinet's newest committed seq when they were read: the state holds every change up to it. */
  newestSeq: number;
}

/**
 * The cabinet's records after (kind, record id), in that order, at most `limit` and no more once
 * their fields reach `maxBytes` (the first always comes), and the cabinet's newest seq, in one
 * statement (one snapshot): every change up to that seq is folded into what it reads. A record
 * that holds nothing (every change of it emptied, never erased) is left out: it would apply nothing.
 */
export async function readRecords(sql: Sql, cabinetId: string, after: { kind: string; recordId: string }, limit: number, maxBytes: number): Promise<RecordsRead> {
  const rows = await sql<
    { kind: string | null; record_id: string; erased: boolean; fields: string; stamps: string; last_seq: string; device_id: string; newest: string; listed: number }[]
  >`
    WITH cabinet AS (SELECT next_seq - 1 AS newest FROM hub_cabinets WHERE id = ${cabinetId}),
    listed AS (
      SELECT kind, record_id, sum(bytes) OVER (ORDER BY kind, record_id) - bytes AS before FROM hub_records
      WHERE cabinet_id = ${cabinetId} AND (kind, record_id) > (${after.kind}, ${after.recordId}) AND (erased OR fields <> '{}'::jsonb)
      ORDER BY kind, record_id LIMIT ${limit}
    ),
    kept AS (SELECT kind, record_id FROM listed WHERE before < ${maxBytes})
    SELECT r.kind, r.record_id, r.erased, r.fields::text AS fields, r.stamps::text AS stamps, r.last_seq, r.device_id, cabinet.newest, (SELECT count(*)::int FROM listed) AS listed
    FROM cabinet LEFT JOIN (kept JOIN hub_records r ON r.cabinet_id = ${cabinetId} AND r.kind = kept.kind AND r.record_id = kept.record_id) ON true
    ORDER BY r.kind, r.record_id`;
  const records = rows.flatMap((r) =>
    r.kind === null ? [] : [{ kind: r.kind, record_id: r.record_id, erased: r.erased, seq: Number(r.last_seq), device_id: r.device_id, fieldsJson: r.fields, stampsJson: r.stamps }],
  );
  return { rows: records, cut: records.length < (rows[0]?.listed ?? 0), newestSeq: Number(rows[0]?.newest ?? 0) };
}
