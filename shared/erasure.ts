import { CLIENT_CONTACT_FIELDS } from './crm.js';

/**
 * What a client's erasure takes out of the records that name the client, as they sync (column →
 * value, values as SQLite stores them): the hub scrubs its copies with it, and each install its
 * own. The list follows shared/masking.ts, which names the personal data of every payload: the
 * contact of an opportunity, the dicData of a quote or a job and what an insurer or a robot wrote
 * (pending conditions, an error message, an MFA challenge), which may name the client.
 *
 * What a record links to a client: a quote whose client_id is the client; the jobs that priced
 * those quotes (their own devis_id, which only the install that ran the job writes); the opportunities
 * whose client_id is the client, that those quotes name (opportunity_id) or whose contact has the
 * client's email or SIRET (as the console lists a client's opportunities); the notes of those
 * opportunities (their opportunity_id). A record keeps its client_id: the erased client's tombstone. A signed quote keeps its PDF, the contract's proof (README, "Right to
 * erasure"); every other quote of the client loses it.
 */

/** An opportunity's contact once erased: every field empty (last_name is a string, always). */
const ERASED_OPPORTUNITY_CONTACT = { last_name: '', first_name: null, company_name: null, siret: null, email: null, phone: null } as const;

/** The synced fields of each linked kind that hold personal data, and what erasure leaves in them. */
export const ERASED_RECORD_FIELDS = {
  opportunity: { contact: JSON.stringify(ERASED_OPPORTUNITY_CONTACT) },
  // A broker's note on the client's opportunity: what the client said. Who wrote it stays.
  opportunity_note: { body: '' },
  devis: { dic_data: '{}', suspens: null },
  // A job's request_hash is the SHA-256 of its insurer, product and dicData: a fingerprint of the data.
  job: { dic_data: '{}', request_hash: '0'.repeat(64), result_suspens: null, error_message: null },
  // A comparison's risk: the driver's or policyholder's name, birth date, address. Its advice documents are kept (the duty to advise).
  comparaison: { risque: '{}' },
} as const satisfies Record<string, Record<string, string | null>>;

export type LinkedKind = keyof typeof ERASED_RECORD_FIELDS;

/** An event field that names the record an event is about, and that record's kind. */
const SUBJECT_KINDS = { client_id: 'client', opportunity_id: 'opportunity', devis_id: 'devis', job_id: 'job' } as const;
type SubjectField = keyof typeof SUBJECT_KINDS;

type EventData = Record<string, unknown>;

/**
 * The event types whose data holds personal data: the fields that say what each is about, and
 * what erasure leaves of its data. A client.updated event is the client's contact whole: erased as
 * the client is (an `erase` change), and one that comes after the erasure is dropped.
 */
const EVENT_ERASURE: Record<string, { about: readonly SubjectField[]; erase: (data: EventData) => EventData }> = {
  'client.updated': {
    about: ['client_id'],
    erase: (data) => ({ ...data, ...Object.fromEntries(CLIENT_CONTACT_FIELDS.map((field) => [field, null])) }),
  },
  'opportunity.created': {
    about: ['opportunity_id', 'client_id'],
    erase: (data) => ({ ...data, contact: { last_name: '', company_name: null, siret: null } }),
  },
  'devis.failed': { about: ['devis_id', 'job_id', 'client_id'], erase: (data) => ({ ...data, reason: '' }) },
  'job.completed': { about: ['job_id', 'devis_id'], erase: (data) => ({ ...data, suspens: null }) },
  'job.failed': {
    about: ['job_id', 'devis_id'],
    erase: (data) => ({ ...data, error: { ...(isObject(data.error) ? data.error : {}), message: '' } }),
  },
  'job.mfa_required': { about: ['job_id', 'devis_id'], erase: (data) => ({ ...data, challenge: '' }) },
};

/** The event types an erasure rewrites. */
export const ERASABLE_EVENT_TYPES: readonly string[] = Object.keys(EVENT_ERASURE);

function isObject(value: unknown): value is EventData {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An event's data as the sync carries it (JSON text), or undefined when it is not a JSON object. */
export function parseEventData(data: unknown): EventData | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(data);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The records an event of a type that holds personal data is about, as kind and id; none for any other type. */
export function eventSubjects(type: unknown, data: EventData): { kind: 'client' | LinkedKind; id: string }[] {
  const erasure = typeof type === 'string' ? EVENT_ERASURE[type] : undefined;
  if (!erasure) return [];
  return erasure.about.flatMap((field) => {
    const id = data[field];
    return typeof id === 'string' ? [{ kind: SUBJECT_KINDS[field], id }] : [];
  });
}

/** The data an event keeps once what it is about was erased (the same data for a type that holds none). */
export function erasedEventData(type: unknown, data: EventData): EventData {
  const erasure = typeof type === 'string' ? EVENT_ERASURE[type] : undefined;
  return erasure ? erasure.erase(data) : data;
}
