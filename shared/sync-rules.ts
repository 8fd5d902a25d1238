import { JOB_STATUSES } from './automation.js';
import { CLIENT_CONTACT_FIELDS } from './crm.js';
import type { SyncChange, SyncedKind } from './sync-protocol.js';

/**
 * What any change must respect, whichever install sends it: the hub refuses a batch that breaks a
 * rule, and an install sets such a change aside. A device's credential can be stolen, so these are
 * what one device can never make the others do.
 */

/**
 * Text the sync cannot carry: U+0000, which PostgreSQL's text and jsonb cannot hold, and a surrogate
 * without its pair, which jsonb refuses (text would silently turn it into U+FFFD). The hub refuses
 * it in a change; an install refuses it at its door, or its queue would hold a change no hub takes.
 */
export const UNSYNCABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The kinds a device may erase: a client (the right to erasure) and the events that copied its data. */
const ERASABLE_KINDS: ReadonlySet<SyncedKind> = new Set(['client', 'event']);
/** An erased client's tombstone: its type and times, every personal field empty. */
const CLIENT_TOMBSTONE_FIELDS: ReadonlySet<string> = new Set(['type', 'created_at', 'updated_at', 'erased_at', ...CLIENT_CONTACT_FIELDS]);

function clientTombstoneProblem(fields: Record<string, unknown>): string | null {
  const extra = Object.keys(fields).filter((field) => !CLIENT_TOMBSTONE_FIELDS.has(field));
  if (extra.length > 0) return `a client's erasure carries its tombstone only, not ${extra.join(', ')}`;
  const kept = CLIENT_CONTACT_FIELDS.filter((field) => fields[field] !== undefined && fields[field] !== null);
  if (kept.length > 0) return `a client's erasure empties every personal field, not ${kept.join(', ')}`;
  return typeof fields.erased_at === 'number' ? null : "a client's erasure says when (erased_at)";
}

/** An event is erased only as its client is: a client.updated event whose contact fields are emptied. */
function eventErasureProblem(fields: Record<string, unknown>): string | null {
  if (fields.type !== 'client.updated' || typeof fields.data !== 'string') return 'only a client.updated event is erased, with its data';
  let data: unknown;
  try {
    data = JSON.parse(fields.data);
  } catch {
    return "an erased event's data is not JSON";
  }
  if (typeof data !== 'object' || data === null) return "an erased event's data is not an object";
  const kept = CLIENT_CONTACT_FIELDS.filter(
    (field) => (data as Record<string, unknown>)[field] !== undefined && (data as Record<string, unknown>)[field] !== null,
  );
  return kept.length > 0 ? `an erased event keeps no personal field, not ${kept.join(', ')}` : null;
}

/**
 * A job's columns that mean something on the install that enqueued it only: the robot's lease, the
 * MFA challenge (its wording goes to that install's brokers), the failure's local files, the
 * callback subscription, the enqueue number (its robots run and its hourly quota counts only the jobs
 * that have one) and the timeline of the steps it saw. A job never carries them: an install that
 * pulled a job must never take it for one of its own.
 */
export const JOB_LOCAL_FIELDS: readonly string[] = [
  'lease_until',
  'mfa_challenge',
  'mfa_step',
  'artifacts',
  'callback_webhook_id',
  'enqueue_number',
  'timeline',
  'by_integration',
];

function jobProblem(fields: Record<string, unknown>): string | null {
  if (!JOB_STATUSES.some((status) => status === fields.status)) return `a job carries its status, one of ${JOB_STATUSES.join(', ')}`;
  const local = JOB_LOCAL_FIELDS.filter((field) => field in fields);
  return local.length > 0 ? `a job never carries what only the install that enqueued it holds: ${local.join(', ')}` : null;
}

/**
 * A user's columns that belong to each install: its password (a device that could send one could
 * sign in anywhere with it), whether it must be changed, and what this install holds back from
 * another's changes until one of its administrators confirms them. A user change never carries them.
 */
const USER_LOCAL_FIELDS: readonly string[] = ['password_hash', 'must_change_password', 'held_role', 'held_disabled_at'];

/** The longest email a user record carries: its record id is the email, which the hub keeps to 254 characters. */
export const MAX_USER_EMAIL = 254;

/** A user's record id is its email, lower-cased (one record per person and cabinet, whichever install adds them). */
function userProblem(recordId: string, fields: Record<string, unknown>): string | null {
  if (recordId !== recordId.toLowerCase() || !recordId.includes('@') || recordId.length > MAX_USER_EMAIL)
    return "a user's record id is its email, in lower case";
  if (fields.email !== undefined && fields.email !== recordId) return "a user's email is its record id";
  const local = USER_LOCAL_FIELDS.filter((field) => field in fields);
  return local.length > 0 ? `a user never carries what each install keeps for itself: ${local.join(', ')}` : null;
}

/**
 * Why a change breaks the protocol's rules, or null: an erasure of a kind that is never erased, an
 * erasure that carries more than its tombstone (it would freeze a record at values of the sender's
 * choice, since an erased record takes no more edits), a job without its status or with a column of
 * the install that enqueued it, a user with a password or under another email's id. A job travels at every status: only the install that enqueued it
 * runs it (server/automation/store.ts: its robots claim, recover and time out only the jobs with
 * their own enqueue number, which a pulled job never has), whatever the others pull.
 */
export function changeRuleBroken(change: Pick<SyncChange, 'kind' | 'op' | 'fields' | 'record_id'>): string | null {
  if (change.op === 'erase') {
    if (!ERASABLE_KINDS.has(change.kind)) return `${change.kind} records are never erased`;
    return change.kind === 'client' ? clientTombstoneProblem(change.fields) : eventErasureProblem(change.fields);
  }
  // An upsert the hub emptied (its record was erased since) carries nothing to check.
  if (change.kind === 'job' && Object.keys(change.fields).length > 0) return jobProblem(change.fields);
  if (change.kind === 'user') return userProblem(change.record_id, change.fields);
  return null;
}
