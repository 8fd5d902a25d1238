import type { Sql, TransactionSql } from 'postgres';
import type { StagedRange } from './store.js';

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
 *
 * Beside the fields, a quote keeps for good that it was signed (a change said so, or a contract
 * names it) and the PDF it named then: the state forgets nothing a later edit says, and an erasure
 * or compaction must never take a signed quote's PDF for an unsigned one's.
 *
 * With `staged`, the batch is read from the push's staged rows (store.ts stageChanges), stored as
 * they are (no erasure scrubbed them), with the sizes and stamps worked out before the lock. With
 * `contracts: false` (the caller knows the batch holds no contract), the quotes contracts name are
 * not looked for.
 *
 * Returns the largest record the batch grew past `maxBytes`, if any: the push is then refused (a
 * state page must hold any record whole); a record already past it may still shrink.
 */
export async function foldIntoRecords(
  tx: TransactionSql,
  cabinetId: string,
  fromSeq: number,
  toSeq: number,
  maxBytes: number,
  options: { staged?: { deviceId: string; range: StagedRange }; contracts?: boolean } = {},
): Promise<OversizedRecord | undefined> {
  const { staged, contracts = true } = options;
  // No join between the batch's rows and their records' rows: with the statistics of rows just
  // inserted, PostgreSQL plans such a join as a nested loop over both, slow even for one batch.
  // Each record's prior state and changes are one set instead, flagged by window functions. The
  // prior states are looked up one record at a time (LIMIT 1 keeps the lookup a lookup): planned as
  // a join, PostgreSQL would hash every record of the cabinet at every push once it had statistics.
  // A record the batch creates with its one change of it is inserted whole first (ON CONFLICT DO
  // NOTHING finds the ones the hub already holds), and only the others go through the per-field
  // merge: an upload is mostly such records, and the merge's sorts and aggregates would be most of
  // what the fold costs there, under the cabinet's lock.
  const [oversized] = await tx<OversizedRecord[]>`
    WITH stored AS (${
      staged
        ? tx`SELECT ${staged.range.firstSeq}::bigint + (number - ${staged.range.from}::bigint) AS seq, ${staged.deviceId}::text AS device_id, kind, record_id, op, hlc, fields, stamps, bytes + stamps_bytes AS bytes
            FROM hub_push_batch WHERE number BETWEEN ${staged.range.from}::bigint AND ${staged.range.to}::bigint`
        : tx`SELECT seq, device_id, kind, record_id, op, hlc, fields, NULL::jsonb AS stamps, NULL::int AS bytes FROM hub_changes
            WHERE cabinet_id = ${cabinetId} AND seq BETWEEN ${fromSeq} AND ${toSeq}`
    }),
    batch AS (
      SELECT *, count(*) OVER (PARTITION BY kind, record_id) = 1 AS alone FROM stored
    ),
    created AS (
      INSERT INTO hub_records (cabinet_id, kind, record_id, fields, stamps, erased, last_seq, device_id, bytes, signed, signed_pdf)
      SELECT ${cabinetId}, b.kind, b.record_id, b.fields, s.stamps, false, b.seq, b.device_id, coalesce(b.bytes, octet_length(b.fields::text) + octet_length(s.stamps::text)), s.signed,
        CASE WHEN s.signed AND jsonb_typeof(b.fields->'pdf_sha256') = 'string' THEN b.fields->>'pdf_sha256' END
      FROM batch b
      CROSS JOIN LATERAL (
        SELECT coalesce(b.stamps, (SELECT coalesce(jsonb_object_agg(k, b.hlc), '{}'::jsonb) FROM jsonb_object_keys(b.fields) k)) AS stamps,
          coalesce(b.kind = 'devis' AND (b.fields->>'status' = 'signed' OR b.fields->>'contract_id' IS NOT NULL OR b.fields->>'signed_at' IS NOT NULL), false) AS signed
      ) s
      WHERE b.alone AND b.op = 'upsert'
      ON CONFLICT (cabinet_id, kind, record_id) DO NOTHING
      RETURNING kind, record_id, bytes, last_seq
    ),
    rest AS (SELECT * FROM batch WHERE seq NOT IN (SELECT last_seq FROM created)),
    sources AS (
      SELECT r.kind, r.record_id, 0::bigint AS seq, NULL::text AS device_id, CASE WHEN r.erased THEN 'erase' ELSE 'upsert' END AS op, NULL::text AS hlc, r.fields, r.stamps, true AS prior,
        r.signed, r.signed_pdf, CASE WHEN jsonb_typeof(r.fields->'pdf_sha256') = 'string' THEN r.fields->>'pdf_sha256' END AS pdf
      FROM (SELECT DISTINCT kind, record_id FROM rest) k
      CROSS JOIN LATERAL (SELECT * FROM hub_records p WHERE p.cabinet_id = ${cabinetId} AND p.kind = k.kind AND p.record_id = k.record_id LIMIT 1) r
      UNION ALL
      SELECT kind, record_id, seq, device_id, op, hlc, fields, NULL, false,
        coalesce(kind = 'devis' AND op = 'upsert' AND (fields->>'status' = 'signed' OR fields->>'contract_id' IS NOT NULL OR fields->>'signed_at' IS NOT NULL), false), NULL, NULL
      FROM rest
    ),
    flagged AS (
      SELECT *, bool_or(op = 'erase') OVER w AS erased, bool_or(prior AND op = 'erase') OVER w AS was_erased, bool_or(NOT prior AND op = 'erase') OVER w AS erases
      FROM sources WINDOW w AS (PARTITION BY kind, record_id)
    ),
    candidates AS (
      SELECT kind, record_id, f.key, f.value, CASE WHEN prior THEN stamps->>f.key ELSE hlc END AS stamp, seq
      FROM flagged, jsonb_each(fields) f
      WHERE CASE WHEN prior THEN was_erased OR NOT erases ELSE (op = 'erase') = erased END
    ),
    winners AS (
      SELECT DISTINCT ON (kind, record_id, key) kind, record_id, key, value, stamp FROM candidates
      ORDER BY kind, record_id, key, stamp COLLATE "C" DESC, seq
    ),
    merged AS (
      SELECT kind, record_id, max(seq) AS last_seq, (array_agg(device_id ORDER BY seq DESC) FILTER (WHERE device_id IS NOT NULL))[1] AS device_id, bool_or(erased) AS erased,
        coalesce(jsonb_object_agg(key, value) FILTER (WHERE key IS NOT NULL), '{}'::jsonb) AS fields,
        coalesce(jsonb_object_agg(key, stamp) FILTER (WHERE key IS NOT NULL), '{}'::jsonb) AS stamps,
        coalesce(bool_or(signed), false) AS signed, max(signed_pdf) AS signed_pdf, max(pdf) AS prior_pdf
      FROM (SELECT kind, record_id, key, value, stamp, NULL::bigint AS seq, NULL::text AS device_id, NULL::boolean AS erased, NULL::boolean AS signed, NULL::text AS signed_pdf, NULL::text AS pdf FROM winners
            UNION ALL SELECT kind, record_id, NULL, NULL, NULL, seq, device_id, erased, signed, signed_pdf, pdf FROM flagged) x
      GROUP BY kind, record_id
    ),
    upserted AS (
      INSERT INTO hub_records (cabinet_id, kind, record_id, fields, stamps, erased, last_seq, device_id, bytes, signed, signed_pdf)
      SELECT ${cabinetId}, kind, record_id, fields, stamps, erased, last_seq, device_id, octet_length(fields::text) + octet_length(stamps::text), signed,
        CASE WHEN signed THEN coalesce(signed_pdf, CASE WHEN jsonb_typeof(fields->'pdf_sha256') = 'string' THEN fields->>'pdf_sha256' END, prior_pdf) END
      FROM merged
      ON CONFLICT (cabinet_id, kind, record_id) DO UPDATE SET
        fields = excluded.fields, stamps = excluded.stamps, erased = excluded.erased, last_seq = excluded.last_seq, device_id = excluded.device_id, bytes = excluded.bytes,
        signed = excluded.signed, signed_pdf = excluded.signed_pdf
      RETURNING kind, record_id, bytes
    )
    SELECT kind, record_id, bytes FROM created WHERE bytes > ${maxBytes}
    UNION ALL
    SELECT u.kind, u.record_id, u.bytes FROM upserted u
    WHERE u.bytes > ${maxBytes}
      AND u.bytes > coalesce((SELECT p.bytes FROM hub_records p WHERE p.cabinet_id = ${cabinetId} AND p.kind = u.kind AND p.record_id = u.record_id), 0)
    ORDER BY bytes DESC LIMIT 1`;
  if (oversized) return oversized;
  if (contracts) await markSignedByContracts(tx, cabinetId, fromSeq, toSeq);
  return undefined;
}

/** A record whose state a batch grew past the limit (its size before the batch is read in the fold's snapshot). */
export interface OversizedRecord {
  kind: string;
  record_id: string;
  bytes: number;
}

/** A quote a contract of the batch names is signed (the contract's proof), whatever its own changes say. */
async function markSignedByContracts(tx: TransactionSql, cabinetId: string, fromSeq: number, toSeq: number): Promise<void> {
  await tx`
    UPDATE hub_records d SET signed = true, signed_pdf = coalesce(d.signed_pdf, CASE WHEN jsonb_typeof(d.fields->'pdf_sha256') = 'string' THEN d.fields->>'pdf_sha256' END)
    FROM hub_changes c
    WHERE c.cabinet_id = ${cabinetId} AND c.seq BETWEEN ${fromSeq} AND ${toSeq} AND c.kind = 'contract' AND c.op = 'upsert'
      AND d.cabinet_id = ${cabinetId} AND d.kind = 'devis' AND d.record_id = c.fields->>'devis_id' AND NOT d.signed`;
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
 * The cabinet's records after (kind, record id), in that order, at most `limit` and no more than
 * `maxBytes` of fields and stamps (the first always comes), and the cabinet's newest seq, in one
 * statement (one snapshot): every change up to that seq is folded into what it reads. A record
 * that holds nothing (every change of it emptied, never erased) is left out: it would apply nothing.
 */
export async function readRecords(
  sql: Sql,
  cabinetId: string,
  after: { kind: string; recordId: string },
  limit: number,
  maxBytes: number,
): Promise<RecordsRead> {
  const rows = await sql<
    {
      kind: string | null;
      record_id: string;
      erased: boolean;
      fields: string;
      stamps: string;
      last_seq: string;
      device_id: string;
      newest: string;
      listed: number;
    }[]
  >`
    WITH cabinet AS (SELECT next_seq - 1 AS newest FROM hub_cabinets WHERE id = ${cabinetId}),
    listed AS (
      SELECT kind, record_id, bytes, sum(bytes) OVER (ORDER BY kind, record_id) - bytes AS before FROM hub_records
      WHERE cabinet_id = ${cabinetId} AND (kind, record_id) > (${after.kind}, ${after.recordId}) AND (erased OR fields <> '{}'::jsonb)
      ORDER BY kind, record_id LIMIT ${limit}
    ),
    kept AS (SELECT kind, record_id FROM listed WHERE before + bytes <= ${maxBytes} OR before = 0)
    SELECT r.kind, r.record_id, r.erased, r.fields::text AS fields, r.stamps::text AS stamps, r.last_seq, r.device_id, cabinet.newest, (SELECT count(*)::int FROM listed) AS listed
    FROM cabinet LEFT JOIN (kept JOIN hub_records r ON r.cabinet_id = ${cabinetId} AND r.kind = kept.kind AND r.record_id = kept.record_id) ON true
    ORDER BY r.kind, r.record_id`;
  const records = rows.flatMap((r) =>
    r.kind === null
      ? []
      : [
          {
            kind: r.kind,
            record_id: r.record_id,
            erased: r.erased,
            seq: Number(r.last_seq),
            device_id: r.device_id,
            fieldsJson: r.fields,
            stampsJson: r.stamps,
          },
        ],
  );
  return { rows: records, cut: records.length < (rows[0]?.listed ?? 0), newestSeq: Number(rows[0]?.newest ?? 0) };
}

/** One record's state, and the cabinet's newest seq, in one statement (as readRecords reads a page). */
export async function readRecord(sql: Sql, cabinetId: string, only: { kind: string; recordId: string }): Promise<RecordsRead> {
  const rows = await sql<
    {
      kind: string | null;
      record_id: string;
      erased: boolean;
      fields: string;
      stamps: string;
      last_seq: string;
      device_id: string;
      newest: string;
    }[]
  >`
    SELECT r.kind, r.record_id, r.erased, r.fields::text AS fields, r.stamps::text AS stamps, r.last_seq, r.device_id, c.next_seq - 1 AS newest
    FROM hub_cabinets c LEFT JOIN hub_records r ON r.cabinet_id = c.id AND r.kind = ${only.kind} AND r.record_id = ${only.recordId}
    WHERE c.id = ${cabinetId}`;
  const records = rows.flatMap((r) =>
    r.kind === null
      ? []
      : [
          {
            kind: r.kind,
            record_id: r.record_id,
            erased: r.erased,
            seq: Number(r.last_seq),
            device_id: r.device_id,
            fieldsJson: r.fields,
            stampsJson: r.stamps,
          },
        ],
  );
  return { rows: records, cut: false, newestSeq: Number(rows[0]?.newest ?? 0) };
}
