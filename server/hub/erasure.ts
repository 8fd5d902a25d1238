import type { TransactionSql } from 'postgres';
import {
  ERASABLE_EVENT_TYPES,
  ERASED_RECORD_FIELDS,
  erasedEventData,
  eventSubjects,
  parseEventData,
  type LinkedKind,
} from '../../shared/erasure.js';
import type { SyncChange } from '../../shared/sync-protocol.js';

/**
 * The right to erasure on the hub: once a client is erased, the hub holds none of its personal
 * data, in the client's changes nor in those of the records that copied it (shared/erasure.ts says
 * which records and fields). Everything runs in the push's transaction, under the cabinet's lock,
 * and every query names the cabinet.
 *
 * What an erasure reaches is derived by the hub from the changes it holds, never taken from what a
 * device says: an erase change carries the client's tombstone only (changeRuleBroken). A device can
 * widen the reach only by first making records name the client (a quote's client_id, its
 * opportunity_id, an opportunity's email), edits it could make anyway and which would already
 * overwrite those fields on every install. It never reaches a record's other fields, another
 * cabinet, the PDF of a signed quote, nor a job through anything but the job's own devis_id (which
 * only the install that ran the job writes).
 */

/** A record as `kind\0id`. */
function recordKey(kind: string, recordId: string): string {
  return `${kind}\u0000${recordId}`;
}

type Key = { kind: string; record_id: string };

/** A change, and what it names besides itself as far as erasure goes: a quote's client, a job's quote, an event's subjects (its data parsed once). */
interface Named {
  change: SyncChange;
  named: Key[];
  data?: Record<string, unknown>;
}

function named(change: SyncChange): Named {
  if (change.op !== 'upsert') return { change, named: [] };
  const { fields } = change;
  if (change.kind === 'devis' && typeof fields.client_id === 'string')
    return { change, named: [{ kind: 'client', record_id: fields.client_id }] };
  if (change.kind === 'job' && typeof fields.devis_id === 'string')
    return { change, named: [{ kind: 'devis', record_id: fields.devis_id }] };
  if (change.kind === 'event' && ERASABLE_EVENT_TYPES.includes(fields.type as string)) {
    const data = parseEventData(fields.data);
    if (data)
      return { change, named: eventSubjects(fields.type, data).map((subject) => ({ kind: subject.kind, record_id: subject.id })), data };
  }
  return { change, named: [] };
}

/** Which of these records an erase change reached (their state says so), and which a client's erasure reached: only those found come back. */
async function erasureState(
  tx: TransactionSql,
  cabinetId: string,
  keys: ReadonlyMap<string, Key>,
  links: boolean,
): Promise<{ erased: Set<string>; linked: Set<string> }> {
  const kinds = [...keys.values()].map((key) => key.kind);
  const ids = [...keys.values()].map((key) => key.record_id);
  const rows = links
    ? await tx<{ kind: string; record_id: string; erased: boolean }[]>`
      SELECT r.kind, r.record_id, true AS erased FROM unnest(${kinds}::text[], ${ids}::text[]) AS r(kind, record_id)
      JOIN hub_records s ON s.cabinet_id = ${cabinetId} AND s.kind = r.kind AND s.record_id = r.record_id AND s.erased
      UNION ALL
      SELECT r.kind, r.record_id, false AS erased FROM unnest(${kinds}::text[], ${ids}::text[]) AS r(kind, record_id)
      JOIN hub_erasure_links l ON l.cabinet_id = ${cabinetId} AND l.kind = r.kind AND l.record_id = r.record_id`
    : await tx<{ kind: string; record_id: string; erased: boolean }[]>`
      SELECT r.kind, r.record_id, true AS erased FROM unnest(${kinds}::text[], ${ids}::text[]) AS r(kind, record_id)
      JOIN hub_records s ON s.cabinet_id = ${cabinetId} AND s.kind = r.kind AND s.record_id = r.record_id AND s.erased`;
  return {
    erased: new Set(rows.filter((row) => row.erased).map((row) => recordKey(row.kind, row.record_id))),
    linked: new Set(rows.filter((row) => !row.erased).map((row) => recordKey(row.kind, row.record_id))),
  };
}

/** Whether any client of the cabinet was ever erased: until then, nothing a batch names can have been reached. */
async function anyClientErased(tx: TransactionSql, cabinetId: string): Promise<boolean> {
  const [row] = await tx<
    { any: boolean }[]
  >`SELECT EXISTS (SELECT 1 FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = 'client' AND erased) AS any`;
  return row?.any ?? false;
}

/** What a batch brings that the hub must follow once it is stored: new erasures, and records newly reached by one. */
export interface ErasureFollowUp {
  /** Clients erased by this batch for the first time. */
  clients: string[];
  /** Quotes and jobs this batch made name an erased client or a reached quote. */
  devis: string[];
  jobs: string[];
  /** Reached quotes whose changes in this batch name a PDF (a pricing that came after the erasure). */
  pdfs: string[];
}

function erasedFields(kind: LinkedKind, fields: Record<string, unknown>): Record<string, unknown> {
  const erased = ERASED_RECORD_FIELDS[kind] as Record<string, unknown>;
  return Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, field in erased ? erased[field] : value]));
}

/** An event's change once what it is about was erased: a client.updated says nothing more ({}), any other keeps its data without the personal part. */
function erasedEvent(fields: Record<string, unknown>, data: Record<string, unknown>): Record<string, unknown> {
  if (fields.type === 'client.updated') return {};
  return { ...fields, data: JSON.stringify(erasedEventData(fields.type, data)) };
}

const isLinkedKind = (kind: string): kind is LinkedKind => kind in ERASED_RECORD_FIELDS;

/**
 * The batch as the hub stores it, read under the cabinet's lock (an erasure committed by another
 * device is seen, and one committed later scrubs what this stores): an upsert of an erased record
 * keeps no fields (its place in the device's numbering only); an upsert of a record an erasure
 * reached, or that names an erased client or a reached quote, keeps no personal field; an event
 * about any of them keeps none either (a client.updated, nothing). Erasures earlier in the batch
 * count. Says what to follow once the batch is stored. A change kept as it came is returned as
 * it came, one emptied as a copy: a push that staged its changes stages the copies again.
 */
export async function withoutErasedData(
  tx: TransactionSql,
  cabinetId: string,
  changes: readonly SyncChange[],
): Promise<{ changes: SyncChange[]; followUp: ErasureFollowUp }> {
  const keys = new Map<string, Key>();
  for (const change of changes) keys.set(recordKey(change.kind, change.record_id), { kind: change.kind, record_id: change.record_id });
  // What a change names matters once a client of the cabinet was erased: before, the batch is read as it always was.
  const reaching = changes.some((change) => change.op === 'erase' && change.kind === 'client') || (await anyClientErased(tx, cabinetId));
  const batch = reaching ? changes.map(named) : changes.map((change) => ({ change, named: [] }) as Named);
  for (const { named: subjects } of batch) for (const key of subjects) keys.set(recordKey(key.kind, key.record_id), key);
  const state = await erasureState(tx, cabinetId, keys, reaching);
  const erased = state.erased;
  const linked = state.linked;
  const followUp: ErasureFollowUp = { clients: [], devis: [], jobs: [], pdfs: [] };
  const link = (kind: 'devis' | 'job', id: string) => {
    const key = recordKey(kind, id);
    if (linked.has(key)) return;
    linked.add(key);
    (kind === 'devis' ? followUp.devis : followUp.jobs).push(id);
  };
  const reached = (subject: Key) => (subject.kind === 'client' ? erased : linked).has(recordKey(subject.kind, subject.record_id));
  const stored = batch.map(({ change, named: subjects, data }): SyncChange => {
    const key = recordKey(change.kind, change.record_id);
    if (change.op === 'erase') {
      if (change.kind === 'client' && !erased.has(key)) followUp.clients.push(change.record_id);
      erased.add(key);
      return change;
    }
    if (erased.has(key)) return { ...change, fields: {} };
    if (change.kind === 'event') return data && subjects.some(reached) ? { ...change, fields: erasedEvent(change.fields, data) } : change;
    if (!isLinkedKind(change.kind)) return change;
    if (change.kind !== 'opportunity' && subjects.some(reached)) link(change.kind, change.record_id);
    if (!linked.has(key)) return change;
    if (change.kind === 'devis' && typeof change.fields.pdf_sha256 === 'string') followUp.pdfs.push(change.record_id);
    return { ...change, fields: erasedFields(change.kind, change.fields) };
  });
  return { changes: stored, followUp };
}

export const hasFollowUp = (followUp: ErasureFollowUp) =>
  followUp.clients.length + followUp.devis.length + followUp.jobs.length + followUp.pdfs.length > 0;

/**
 * Once the batch is stored, before the erasures' own scrub (scrubBeforeErasures, which empties the
 * client's email and SIRET that find its opportunities): what the new erasures and the newly
 * reached records reach further is recorded in hub_erasure_links, every change the hub holds of a
 * newly reached record loses its personal fields, the events about them their personal data, and
 * the unsigned quotes among them their PDF.
 */
export async function followErasures(tx: TransactionSql, cabinetId: string, followUp: ErasureFollowUp): Promise<void> {
  const ids = (rows: { id: string | null }[]) => rows.flatMap((row) => (row.id === null ? [] : [row.id]));
  const { clients } = followUp;
  const devis = [...followUp.devis];
  const opportunities: string[] = [];
  if (clients.length > 0) {
    devis.push(
      ...ids(
        await tx<{ id: string }[]>`
      SELECT record_id AS id FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND op = 'upsert' AND fields->>'client_id' = ANY(${clients}::text[])
      UNION SELECT record_id FROM hub_records WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND fields->>'client_id' = ANY(${clients}::text[])`,
      ),
    );
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
  const reached = await recordLinks(tx, cabinetId, [
    ...devis.map((id) => ({ kind: 'devis', record_id: id })),
    ...opportunities.map((id) => ({ kind: 'opportunity', record_id: id })),
    ...jobs.map((id) => ({ kind: 'job', record_id: id })),
  ]);
  for (const kind of ['opportunity', 'devis', 'job'] as const) {
    const of = reached.filter((key) => key.kind === kind).map((key) => key.record_id);
    if (of.length > 0) await scrubRecords(tx, cabinetId, kind, of);
  }
  await scrubEvents(tx, cabinetId, [...clients.map((id) => ({ kind: 'client', record_id: id })), ...reached]);
  const newlyReachedDevis = reached.filter((key) => key.kind === 'devis').map((key) => key.record_id);
  await erasePdfs(tx, cabinetId, [...new Set([...newlyReachedDevis, ...followUp.pdfs])]);
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

/**
 * The PDFs of the unsigned quotes among these: gone from their changes, their state and hub_blobs
 * (unless another quote's change or state names the same bytes, or a signed quote named them), and
 * recorded so that no device stores them again. A quote is signed once any change of it the hub
 * holds says so, its state was ever signed (hub_records.signed, kept after compaction), or a
 * contract names it: a device cannot unsign a quote to have its PDF deleted.
 */
async function erasePdfs(tx: TransactionSql, cabinetId: string, devis: readonly string[]): Promise<void> {
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
  const inState = await tx<{ sha256: string }[]>`
    UPDATE hub_records h SET fields = jsonb_set(h.fields, '{pdf_sha256}', 'null'::jsonb), bytes = octet_length(jsonb_set(h.fields, '{pdf_sha256}', 'null'::jsonb)::text) + octet_length(h.stamps::text)
    FROM (SELECT record_id, fields->>'pdf_sha256' AS sha256 FROM hub_records
      WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${unsignedIds}::text[]) AND jsonb_typeof(fields->'pdf_sha256') = 'string') x
    WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND h.record_id = x.record_id
    RETURNING x.sha256`;
  const named = await tx<{ sha256: string }[]>`
    UPDATE hub_changes h SET fields = jsonb_set(h.fields, '{pdf_sha256}', 'null'::jsonb)
    FROM (SELECT seq, fields->>'pdf_sha256' AS sha256 FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND kind = 'devis' AND record_id = ANY(${unsignedIds}::text[]) AND op = 'upsert' AND jsonb_typeof(fields->'pdf_sha256') = 'string') x
    WHERE h.cabinet_id = ${cabinetId} AND h.seq = x.seq
    RETURNING x.sha256`;
  const shas = [...new Set([...inState, ...named].map((row) => row.sha256))];
  if (shas.length === 0) return;
  // Uncounted at once: compaction never sees them, and an erased PDF is never stored again.
  const deleted = await tx<{ sha256: string }[]>`
    WITH gone AS (
      DELETE FROM hub_blobs b WHERE b.cabinet_id = ${cabinetId} AND b.sha256 = ANY(${shas}::text[])
        AND NOT EXISTS (SELECT 1 FROM hub_changes h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND h.fields->>'pdf_sha256' = b.sha256)
        AND NOT EXISTS (SELECT 1 FROM hub_records h WHERE h.cabinet_id = ${cabinetId} AND h.kind = 'devis' AND (h.fields->>'pdf_sha256' = b.sha256 OR h.signed_pdf = b.sha256))
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
