import type { TransactionSql } from 'postgres';
import { ERASABLE_EVENT_TYPES, ERASED_RECORD_FIELDS, eventSubjects, parseEventData, type LinkedKind } from '../../shared/erasure.js';
import { erasedEvent, recordKey, type ErasureFollowUp, type Key } from './erasure.js';

/**
 * Once the batch is stored, before the erasures' own scrub (scrubBeforeErasures, which empties the
 * client's email and SIRET that find its opportunities): what the new erasures and the newly
 * reached records reach further is recorded in hub_erasure_links, every change the hub holds of a
 * newly reached record (an opportunity, a quote, a job, a comparison) loses its personal fields, the events about them their personal data, and
 * the unsigned quotes among them their PDF.
 */
export async function followErasures(tx: TransactionSql, cabinetId: string, followUp: ErasureFollowUp): Promise<void> {
  const ids = (rows: { id: string | null }[]) => rows.flatMap((row) => (row.id === null ? [] : [row.id]));
  const { clients } = followUp;
  const devis = [...followUp.devis];
  const opportunities = [...followUp.opportunities];
  const comparisons = [...followUp.comparisons];
  if (clients.length > 0) {
    comparisons.push(...(await recordsOfClients(tx, cabinetId, 'comparaison', clients)));
    devis.push(...(await recordsOfClients(tx, cabinetId, 'devis', clients)));
    opportunities.push(...(await recordsOfClients(tx, cabinetId, 'opportunity', clients)));
    opportunities.push(...(await opportunitiesOfContacts(tx, cabinetId, clients)));
  }
  const jobs = [...followUp.jobs];
  if (devis.length > 0) {
    opportunities.push(
      ...ids(
        await tx<{ id: string | null }[]>`
      SELECT fields->>'opportunity_id' AS id FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${devis}::text[]) AND op = 'upsert'
      UNION SELECT fields->>'opportunity_id' FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${devis}::text[])`,
      ),
    );
    jobs.push(
      ...ids(
        await tx<{ id: string }[]>`
      SELECT record_id AS id FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND kind = 'job' AND op = 'upsert' AND fields->>'devis_id' = ANY(${devis}::text[])
      UNION SELECT record_id FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = 'job' AND fields->>'devis_id' = ANY(${devis}::text[])`,
      ),
    );
  }
  const notes = [...followUp.notes, ...(await notesOf(tx, cabinetId, opportunities))];
  const reached = await recordLinks(tx, cabinetId, [
    ...devis.map((id) => ({ kind: 'devis', record_id: id })),
    ...opportunities.map((id) => ({ kind: 'opportunity', record_id: id })),
    ...notes.map((id) => ({ kind: 'opportunity_note', record_id: id })),
    ...jobs.map((id) => ({ kind: 'job', record_id: id })),
    ...comparisons.map((id) => ({ kind: 'comparaison', record_id: id })),
  ]);
  for (const kind of ['opportunity', 'opportunity_note', 'devis', 'job', 'comparaison'] as const) {
    const of = reached.filter((key) => key.kind === kind).map((key) => key.record_id);
    if (of.length > 0) await scrubRecords(tx, cabinetId, kind, of);
  }
  await scrubEvents(tx, cabinetId, [...clients.map((id) => ({ kind: 'client', record_id: id })), ...reached]);
  const newlyReachedDevis = reached.filter((key) => key.kind === 'devis').map((key) => key.record_id);
  await eraseQuoteFiles(tx, cabinetId, [...new Set([...newlyReachedDevis, ...followUp.files])]);
}

/** The notes of these opportunities, in any change or state the hub holds. */
async function notesOf(tx: TransactionSql, cabinetId: string, opportunities: readonly string[]): Promise<string[]> {
  if (opportunities.length === 0) return [];
  const rows = await tx<{ id: string }[]>`
    SELECT record_id AS id FROM hub_changes
    WHERE cabinet_id = ${cabinetId} AND kind = 'opportunity_note' AND op = 'upsert' AND fields->>'opportunity_id' = ANY(${opportunities}::text[])
    UNION SELECT record_id FROM hub_records
    WHERE cabinet_id = ${cabinetId} AND kind = 'opportunity_note' AND fields->>'opportunity_id' = ANY(${opportunities}::text[])`;
  return rows.map((row) => row.id);
}

/** The records of a kind whose client_id is one of these clients, in any change or state the hub holds. */
async function recordsOfClients(
  tx: TransactionSql,
  cabinetId: string,
  kind: 'devis' | 'comparaison' | 'opportunity',
  clients: readonly string[],
): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    SELECT record_id AS id FROM hub_changes
    WHERE cabinet_id = ${cabinetId} AND kind = ${kind} AND op = 'upsert' AND fields->>'client_id' = ANY(${clients}::text[])
    UNION SELECT record_id FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = ${kind} AND fields->>'client_id' = ANY(${clients}::text[])`;
  return rows.map((row) => row.id);
}

/**
 * The opportunities whose contact has an erased client's email or SIRET, each its latest value
 * (by clock) on the hub, as the installs hold it. The contact is JSON text, as the installs
 * write it (JSON.stringify): matched as `"email":"…"` within it, case aside for the email.
 */
async function opportunitiesOfContacts(tx: TransactionSql, cabinetId: string, clients: readonly string[]): Promise<string[]> {
  const latest = await tx<{ field: string; value: string }[]>`
    SELECT DISTINCT ON (v.record_id, v.field) v.field, v.value FROM (
      SELECT h.record_id, f.field, h.fields->>f.field AS value, h.hlc AS stamp
      FROM hub_changes h, (VALUES ('email'), ('siret')) AS f(field)
      WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'client' AND h.record_id = ANY(${clients}::text[]) AND h.op = 'upsert' AND h.fields ? f.field
      UNION ALL
      SELECT r.record_id, f.field, r.fields->>f.field, r.stamps->>f.field
      FROM hub_records r, (VALUES ('email'), ('siret')) AS f(field)
      WHERE r.cabinet_id = ${cabinetId} AND r.kind = 'client' AND r.record_id = ANY(${clients}::text[]) AND NOT r.erased AND r.fields ? f.field
    ) v
    ORDER BY v.record_id, v.field, v.stamp COLLATE "C" DESC`;
  const needles = latest.flatMap((row) =>
    typeof row.value === 'string' && row.value !== '' ? [`"${row.field}":${JSON.stringify(row.value)}`.toLowerCase()] : [],
  );
  if (needles.length === 0) return [];
  const rows = await tx<{ id: string }[]>`
    SELECT record_id AS id FROM (
      SELECT record_id, fields FROM hub_changes WHERE cabinet_id = ${cabinetId} AND kind = 'opportunity' AND op = 'upsert' AND fields ? 'contact'
      UNION ALL SELECT record_id, fields FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = 'opportunity' AND fields ? 'contact'
    ) h
    WHERE EXISTS (SELECT 1 FROM unnest(${needles}::text[]) AS n(needle) WHERE strpos(lower(h.fields->>'contact'), n.needle) > 0)
    GROUP BY record_id`;
  return rows.map((row) => row.id);
}

/** Records them as reached; returns those that were not already. */
async function recordLinks(tx: TransactionSql, cabinetId: string, keys: readonly Key[]): Promise<Key[]> {
  if (keys.length === 0) return [];
  return tx<Key[]>`
    INSERT INTO hub_erasure_links (cabinet_id, kind, record_id)
    SELECT DISTINCT ${cabinetId}, r.kind, r.record_id FROM jsonb_to_recordset(${JSON.stringify(keys)}::text::jsonb) AS r(kind text, record_id text)
    ON CONFLICT DO NOTHING
    RETURNING kind, record_id`;
}

/**
 * Every change the hub holds of these records, and their state, lose their personal fields (those
 * they carry). A change keeps the size it was counted at (quotas count what was sent, and compaction
 * takes off what it counted); a state says its new size (state pages are cut by it).
 */
async function scrubRecords(tx: TransactionSql, cabinetId: string, kind: LinkedKind, recordIds: readonly string[]): Promise<void> {
  const replacement = JSON.stringify(ERASED_RECORD_FIELDS[kind]);
  const personal = Object.keys(ERASED_RECORD_FIELDS[kind]);
  // The value a field's stamp names is emptied, the stamp stays: the state is still the fold of the changes.
  await tx`
    UPDATE hub_records s SET fields = x.fields, bytes = octet_length(x.fields::text) + octet_length(s.stamps::text)
    FROM (
      SELECT record_id, fields || (SELECT jsonb_object_agg(r.key, r.value) FROM jsonb_each(${replacement}::text::jsonb) AS r WHERE c.fields ? r.key) AS fields
      FROM hub_records c
      WHERE cabinet_id = ${cabinetId} AND kind = ${kind} AND record_id = ANY(${recordIds}::text[]) AND fields ?| ${personal}::text[]
    ) x
    WHERE s.cabinet_id = ${cabinetId} AND s.kind = ${kind} AND s.record_id = x.record_id AND s.fields IS DISTINCT FROM x.fields`;
  await tx`
    UPDATE hub_changes h SET fields = x.fields
    FROM (
      SELECT seq, fields || (SELECT jsonb_object_agg(r.key, r.value) FROM jsonb_each(${replacement}::text::jsonb) AS r WHERE c.fields ? r.key) AS fields
      FROM hub_changes c
      WHERE cabinet_id = ${cabinetId} AND kind = ${kind} AND record_id = ANY(${recordIds}::text[]) AND op = 'upsert'
        AND fields ?| ${personal}::text[]
    ) x
    WHERE h.cabinet_id = ${cabinetId} AND h.seq = x.seq AND h.fields IS DISTINCT FROM x.fields`;
}

/**
 * The events the hub holds about these records (an erased client, reached records), in their
 * changes and their state: found by their ids in the data's text, then checked on the parsed data.
 * A client.updated keeps nothing; any other keeps its data without the personal part.
 */
async function scrubEvents(tx: TransactionSql, cabinetId: string, subjects: readonly Key[]): Promise<void> {
  if (subjects.length === 0) return;
  const wanted = new Set(subjects.map((subject) => recordKey(subject.kind, subject.record_id)));
  const ids = [...new Set(subjects.map((subject) => subject.record_id))];
  const candidates = await tx<{ seq: string | null; record_id: string; fields: Record<string, unknown> }[]>`
    SELECT seq, record_id, fields FROM hub_changes h
    WHERE cabinet_id = ${cabinetId} AND kind = 'event' AND op = 'upsert' AND fields->>'type' = ANY(${ERASABLE_EVENT_TYPES}::text[])
      AND EXISTS (SELECT 1 FROM unnest(${ids}::text[]) AS s(id) WHERE strpos(h.fields->>'data', s.id) > 0)
    UNION ALL
    SELECT NULL, record_id, fields FROM hub_records h
    WHERE cabinet_id = ${cabinetId} AND kind = 'event' AND NOT erased AND fields->>'type' = ANY(${ERASABLE_EVENT_TYPES}::text[])
      AND EXISTS (SELECT 1 FROM unnest(${ids}::text[]) AS s(id) WHERE strpos(h.fields->>'data', s.id) > 0)`;
  const rewritten = candidates.flatMap((row) => {
    const data = parseEventData(row.fields.data);
    if (!data || !eventSubjects(row.fields.type, data).some((subject) => wanted.has(recordKey(subject.kind, subject.id)))) return [];
    return [{ seq: row.seq === null ? null : Number(row.seq), record_id: row.record_id, fields: erasedEvent(row.fields, data) }];
  });
  if (rewritten.length === 0) return;
  const changes = JSON.stringify(rewritten.filter((row) => row.seq !== null));
  const states = JSON.stringify(rewritten.filter((row) => row.seq === null));
  await tx`
    UPDATE hub_changes h SET fields = r.fields
    FROM jsonb_to_recordset(${changes}::text::jsonb) AS r(seq bigint, fields jsonb)
    WHERE h.cabinet_id = ${cabinetId} AND h.seq = r.seq`;
  // A client.updated that keeps nothing keeps no stamp either: no change of it carries a field any more.
  await tx`
    UPDATE hub_records h SET fields = r.fields, stamps = CASE WHEN r.fields = '{}'::jsonb THEN '{}'::jsonb ELSE h.stamps END,
      bytes = octet_length(r.fields::text) + CASE WHEN r.fields = '{}'::jsonb THEN 2 ELSE octet_length(h.stamps::text) END
    FROM jsonb_to_recordset(${states}::text::jsonb) AS r(record_id text, fields jsonb)
    WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'event' AND h.record_id = r.record_id`;
}

/** The blobs a quote's fields name: its PDF and its other documents (a documents field that does not parse names none). */
function blobsNamed(fields: Record<string, unknown>): string[] {
  const named = typeof fields.pdf_sha256 === 'string' ? [fields.pdf_sha256] : [];
  if (typeof fields.documents !== 'string') return named;
  try {
    const documents: unknown = JSON.parse(fields.documents);
    if (Array.isArray(documents))
      for (const doc of documents)
        if (typeof (doc as { sha256?: unknown })?.sha256 === 'string') named.push((doc as { sha256: string }).sha256);
  } catch {
    // A device's malformed list names no blob; the field is emptied all the same.
  }
  return named;
}

/** A quote's fields without its files: the keys it has, set to null. */
function withoutFiles(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    ...fields,
    ...('pdf_sha256' in fields ? { pdf_sha256: null } : {}),
    ...('documents' in fields ? { documents: null } : {}),
  };
}

/**
 * The files of the unsigned quotes among these (their PDF and their other documents): gone from
 * their changes, their state and hub_blobs (unless another quote's change or state names the same
 * bytes, or a signed quote named them), and recorded so that no device stores them again. A quote
 * is signed once any change of it the hub holds says so, its state was ever signed
 * (hub_records.signed, kept after compaction), or a contract names it: a device cannot unsign a
 * quote to have its files deleted.
 */
async function eraseQuoteFiles(tx: TransactionSql, cabinetId: string, devis: readonly string[]): Promise<void> {
  if (devis.length === 0) return;
  const unsigned = await tx<{ id: string }[]>`
    SELECT d.id FROM unnest(${devis}::text[]) AS d(id)
    WHERE NOT EXISTS (
      SELECT 1 FROM hub_changes h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND h.record_id = d.id AND h.op = 'upsert'
        AND (h.fields->>'status' = 'signed' OR h.fields->>'contract_id' IS NOT NULL OR h.fields->>'signed_at' IS NOT NULL))
    AND NOT EXISTS (SELECT 1 FROM hub_records h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND h.record_id = d.id AND h.signed)
    AND NOT EXISTS (SELECT 1 FROM hub_changes h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'contract' AND h.fields->>'devis_id' = d.id)
    AND NOT EXISTS (SELECT 1 FROM hub_records h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'contract' AND h.fields->>'devis_id' = d.id)`;
  if (unsigned.length === 0) return;
  const unsignedIds = unsigned.map((row) => row.id);
  const naming = tx`(jsonb_typeof(fields->'pdf_sha256') = 'string' OR jsonb_typeof(fields->'documents') = 'string')`;
  const states = await tx<{ record_id: string; fields: Record<string, unknown> }[]>`
    SELECT record_id, fields FROM hub_records
    WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${unsignedIds}::text[]) AND ${naming}`;
  const changes = await tx<{ seq: string; fields: Record<string, unknown> }[]>`
    SELECT seq, fields FROM hub_changes
    WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${unsignedIds}::text[]) AND op = 'upsert' AND ${naming}`;
  const shas = [...new Set([...states, ...changes].flatMap((row) => blobsNamed(row.fields)))];
  const clearedStates = JSON.stringify(states.map((row) => ({ record_id: row.record_id, fields: withoutFiles(row.fields) })));
  const clearedChanges = JSON.stringify(changes.map((row) => ({ seq: Number(row.seq), fields: withoutFiles(row.fields) })));
  await tx`
    UPDATE hub_records h SET fields = r.fields, bytes = octet_length(r.fields::text) + octet_length(h.stamps::text)
    FROM jsonb_to_recordset(${clearedStates}::text::jsonb) AS r(record_id text, fields jsonb)
    WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND h.record_id = r.record_id`;
  await tx`
    UPDATE hub_changes h SET fields = r.fields
    FROM jsonb_to_recordset(${clearedChanges}::text::jsonb) AS r(seq bigint, fields jsonb)
    WHERE h.cabinet_id = ${cabinetId} AND h.seq = r.seq`;
  if (shas.length === 0) return;
  // Uncounted at once: compaction never sees them, and an erased file is never stored again.
  const deleted = await tx<{ sha256: string }[]>`
    WITH gone AS (
      DELETE FROM hub_blobs b WHERE b.cabinet_id = ${cabinetId} AND b.sha256 = ANY(${shas}::text[])
        AND NOT EXISTS (SELECT 1 FROM hub_changes h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis'
          AND (h.fields->>'pdf_sha256' = b.sha256 OR strpos(h.fields->>'documents', b.sha256) > 0))
        AND NOT EXISTS (SELECT 1 FROM hub_records h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis'
          AND (h.fields->>'pdf_sha256' = b.sha256 OR strpos(h.fields->>'documents', b.sha256) > 0 OR h.signed_pdf = b.sha256))
      RETURNING b.sha256, b.size
    ),
    uncounted AS (
      UPDATE hub_cabinets SET blobs_count = blobs_count - (SELECT count(*) FROM gone), blobs_bytes = blobs_bytes - (SELECT coalesce(sum(size), 0) FROM gone)
      WHERE id = ${cabinetId}
    )
    SELECT sha256 FROM gone`;
  await recordLinks(
    tx,
    cabinetId,
    deleted.map((row) => ({ kind: 'blob', record_id: row.sha256 })),
  );
}
