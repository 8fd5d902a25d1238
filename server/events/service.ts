import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import { EVENT_PAYLOADS, type EventEnvelope, type EventPayload, type EventWithPayload } from '../../shared/events.js';
import { ERASABLE_EVENT_TYPES, erasedEventData, eventSubjects } from '../../shared/erasure.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import * as store from './store.js';
import { eventRecords } from './sync.js';

/**
 * Appends an event to the outbox. Call it inside the transaction of the change it reports, so that
 * the change and its event commit together or not at all. The payload is checked against its
 * schema in shared/, so an event can never drift from the contract.
 */
export function recordEvent<T extends EventWithPayload>(
  deps: Pick<Deps, 'db' | 'clock' | 'randomBytes' | 'outbox' | 'syncChanges'>,
  cabinetId: string,
  type: T,
  data: EventPayload<T>,
): EventEnvelope {
  const payload = EVENT_PAYLOADS[type].parse(data) as Record<string, unknown>;
  const createdAt = deps.clock.now();
  const row = {
    id: timeOrderedUuid(createdAt, deps.randomBytes),
    cabinetId,
    type,
    version: 'v1',
    createdAt,
    data: JSON.stringify(payload),
  };
  eventRecords.insert(deps, row);
  deps.outbox.notify();
  // The payload as checked, not a parse of the JSON just made from it.
  return envelope(row, payload);
}

/**
 * Rewrites the data of a cabinet's events of one type about one subject (data[field] = id), each
 * checked again against its payload schema; what an erasure does to the personal data that earlier
 * events carried, so that neither the outbox nor a replayed delivery keeps it. Call it inside the
 * transaction of the change. Deliveries already sent are the receivers' to erase.
 */
export function rewriteEvents<T extends EventWithPayload>(
  deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>,
  cabinetId: string,
  type: T,
  subject: { field: Extract<keyof EventPayload<T>, string>; id: string },
  rewrite: (data: EventPayload<T>) => EventPayload<T>,
): number {
  const rows = store.findEventsAbout(deps.db.orm, cabinetId, type, subject.field, subject.id);
  for (const row of rows) {
    const rewritten = EVENT_PAYLOADS[type].parse(rewrite(JSON.parse(row.data) as EventPayload<T>));
    const data = JSON.stringify(rewritten);
    // An erasure for the hub and the other installs: it replaces every earlier copy of the event.
    eventRecords.erase(deps, cabinetId, row.id, { data });
  }
  return rows.length;
}

/** The records an erasure reached, by kind: the events about them lose their personal data. */
export interface ErasedSubjects {
  client: readonly string[];
  opportunity: readonly string[];
  devis: readonly string[];
  job: readonly string[];
}

/**
 * Takes the personal data out of the events about records a client's erasure reached (an
 * opportunity.created's contact, what an insurer or a robot wrote in a job's or a quote's events),
 * each checked again against its payload schema, and queues each as an edit of its data for the
 * other installs (its clock wins over the data they hold; an edit does not deliver an event
 * again). client.updated events go through rewriteEvents, as erasures. Inside the erasure's
 * transaction. Deliveries already sent are the receivers' to erase.
 */
export function eraseEventsAbout(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, cabinetId: string, subjects: ErasedSubjects): number {
  const reached = new Set(Object.entries(subjects).flatMap(([kind, ids]) => (ids as readonly string[]).map((id) => `${kind}:${id}`)));
  const types = ERASABLE_EVENT_TYPES.filter((type) => type !== 'client.updated');
  const candidates = store.findEventsNaming(deps.db.orm, cabinetId, types, {
    client_id: subjects.client,
    opportunity_id: subjects.opportunity,
    devis_id: subjects.devis,
    job_id: subjects.job,
  });
  let rewritten = 0;
  for (const row of candidates) {
    const data = JSON.parse(row.data) as Record<string, unknown>;
    if (!eventSubjects(row.type, data).some((subject) => reached.has(`${subject.kind}:${subject.id}`))) continue;
    const erased = JSON.stringify(EVENT_PAYLOADS[row.type as EventWithPayload].parse(erasedEventData(row.type, data)));
    if (erased === row.data) continue;
    eventRecords.update(deps, cabinetId, row.id, { data: erased });
    rewritten += 1;
  }
  return rewritten;
}

/** Events of every cabinet after a position of the outbox, oldest first: what the dispatcher fans out. */
export function readOutbox(deps: Pick<Deps, 'db'>, afterSeq: number, limit: number): (EventEnvelope & { seq: number })[] {
  return store.readOutbox(deps.db.orm, afterSeq, limit).map(toSequencedEnvelope);
}

/** The newest event's position in the outbox (0 when empty): where a consumer that wants no history starts. */
export function newestOutboxSeq(deps: Pick<Deps, 'db'>): number {
  return store.newestSeq(deps.db.orm);
}

export function getEvent(deps: Pick<Deps, 'db'>, cabinetId: string, eventId: string): EventEnvelope | undefined {
  const row = store.findEvent(deps.db.orm, cabinetId, eventId);
  return row ? toEnvelope(row) : undefined;
}

/** Events older than the retention are deleted by the daily purge. */
export function purgeEventsBefore(deps: Pick<Deps, 'db'>, cutoff: number): number {
  return store.deleteEventsBefore(deps.db.orm, cutoff);
}

function toEnvelope(row: Omit<store.EventRow, 'seq'>): EventEnvelope {
  return envelope(row, JSON.parse(row.data) as Record<string, unknown>);
}

/**
 * With its outbox position. Added by Object.assign, which follows a cached transition: a literal
 * that adds `seq` after a spread of the envelope makes V8 build a new hidden class for every event.
 */
function toSequencedEnvelope(row: store.EventRow): EventEnvelope & { seq: number } {
  return Object.assign(toEnvelope(row), { seq: row.seq });
}

function envelope(row: Omit<store.EventRow, 'seq' | 'data'>, data: Record<string, unknown>): EventEnvelope {
  return {
    id: row.id,
    type: row.type as EventEnvelope['type'],
    version: 'v1',
    created_at: toIso(row.createdAt),
    cabinet_id: row.cabinetId,
    data,
  };
}

/** Events of a cabinet in commit order, for the dispatcher, the sync and the tests. */
export function listEvents(deps: Pick<Deps, 'db'>, cabinetId: string, afterSeq = 0, limit = 1000): (EventEnvelope & { seq: number })[] {
  return store.listCabinetEvents(deps.db.orm, cabinetId, afterSeq, limit).map(toSequencedEnvelope);
}
