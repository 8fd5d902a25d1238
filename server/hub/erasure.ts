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
 * cabinet, the PDF or documents of a signed quote, nor a job through anything but the job's own devis_id (which
 * only the install that ran the job writes).
 *
 * A pushed batch is read here (what it keeps, what it brings to follow); erasure-follow-up.ts
 * scrubs what the hub already holds once the batch is stored.
 */

/** A record as `kind\0id`. */
export function recordKey(kind: string, recordId: string): string {
  return `${kind}\u0000${recordId}`;
}

export type Key = { kind: string; record_id: string };

/**
 * A change, and what it names besides itself as far as erasure goes: the client of a quote, a
 * comparison or an opportunity, a job's quote, a note's opportunity, an event's subjects (its data parsed once).
 */
interface Named {
  change: SyncChange;
  named: Key[];
  data?: Record<string, unknown>;
}

function named(change: SyncChange): Named {
  if (change.op !== 'upsert') return { change, named: [] };
  const { fields } = change;
  if ((change.kind === 'devis' || change.kind === 'comparaison' || change.kind === 'opportunity') && typeof fields.client_id === 'string')
    return { change, named: [{ kind: 'client', record_id: fields.client_id }] };
  if (change.kind === 'opportunity_note' && typeof fields.opportunity_id === 'string')
    return { change, named: [{ kind: 'opportunity', record_id: fields.opportunity_id }] };
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
  /** Records this batch made name an erased client, a reached quote or a reached opportunity. */
  opportunities: string[];
  notes: string[];
  devis: string[];
  jobs: string[];
  comparisons: string[];
  /** Reached quotes whose changes in this batch name a PDF or other documents (a pricing that came after the erasure). */
  files: string[];
}

function erasedFields(kind: LinkedKind, fields: Record<string, unknown>): Record<string, unknown> {
  const erased = ERASED_RECORD_FIELDS[kind] as Record<string, unknown>;
  return Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, field in erased ? erased[field] : value]));
}

/** An event's change once what it is about was erased: a client.updated says nothing more ({}), any other keeps its data without the personal part. */
export function erasedEvent(fields: Record<string, unknown>, data: Record<string, unknown>): Record<string, unknown> {
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
  const followUp: ErasureFollowUp = { clients: [], opportunities: [], notes: [], devis: [], jobs: [], comparisons: [], files: [] };
  const followed: Record<LinkedKind, string[]> = {
    opportunity: followUp.opportunities,
    opportunity_note: followUp.notes,
    devis: followUp.devis,
    job: followUp.jobs,
    comparaison: followUp.comparisons,
  };
  const link = (kind: LinkedKind, id: string) => {
    const key = recordKey(kind, id);
    if (linked.has(key)) return;
    linked.add(key);
    followed[kind].push(id);
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
    if (subjects.some(reached)) link(change.kind, change.record_id);
    if (!linked.has(key)) return change;
    if (change.kind === 'devis' && (typeof change.fields.pdf_sha256 === 'string' || typeof change.fields.documents === 'string'))
      followUp.files.push(change.record_id);
    return { ...change, fields: erasedFields(change.kind, change.fields) };
  });
  return { changes: stored, followUp };
}

export const hasFollowUp = (followUp: ErasureFollowUp) => Object.values(followUp).some((ids: string[]) => ids.length > 0);
