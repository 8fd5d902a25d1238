import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import type { ErrorCode } from './errors.js';
import { healthSchema } from './meta.js';

/**
 * The sync protocol between an install (the agent) and the hub: the hub's routes, the batch format
 * and the hybrid logical clock that orders field values. The hub stores a change's fields as they
 * came (jsonb), so an install newer than the hub syncs fields the hub does not know.
 */

/** This build's protocol. A hub serves a device whose protocol is at most one below the cabinet's newest. */
export const SYNC_PROTOCOL_VERSION = 1;
/** Request header: the protocol of the calling install. */
export const SYNC_PROTOCOL_HEADER = 'x-courtier-sync-protocol';
/** Request header: the device's wall clock (ms since the epoch) when it sent the request. */
export const DEVICE_TIME_HEADER = 'x-courtier-device-time';
/** Response header on every hub answer: the hub's wall clock (ms since the epoch). */
export const HUB_TIME_HEADER = 'x-courtier-hub-time';
/**
 * Response header on every answer to a device: the hub's epoch for its cabinet. `courtier hub
 * restored` gives every cabinet a new one after the hub's database was restored from a backup; an
 * install that sees a new epoch pulls the cabinet again from the start and sends again what the
 * hub may have lost.
 */
export const HUB_EPOCH_HEADER = 'x-courtier-hub-epoch';
/** A device whose clock is further ahead of the hub's is refused with clock_skew. */
export const MAX_CLOCK_AHEAD_MS = 5 * 60_000;
/** Longest wait a pull may ask for, in seconds. */
const MAX_PULL_WAIT_SECONDS = 30;
/** Most changes in one push, and in one page of a pull. */
const MAX_BATCH_CHANGES = 1000;
/** Largest stored PDF the hub takes. */
export const MAX_BLOB_BYTES = 20 * 1024 * 1024;
/** Largest JSON body the hub takes (a push): an install splits its batches below both this and MAX_BATCH_CHANGES. */
export const MAX_PUSH_BYTES = 8 * 1024 * 1024;
/** Largest change the hub takes: its fields as JSON, in UTF-8 bytes. A record is a few KiB; a quote's dicData at most 64 KiB. */
export const MAX_CHANGE_BYTES = 256 * 1024;
/**
 * A pull page stops before its changes' fields pass this many bytes (at least one change always
 * fits): 1000 changes of the largest size would otherwise make one answer of 256 MiB.
 */
export const MAX_PULL_PAGE_BYTES = 4 * 1024 * 1024;

/** The most credits one job may cost (COURTIER_CREDITS_PER_QUOTE and …_PER_ROUTINE stop there): the hub refuses a larger debit. */
const MAX_JOB_COST = 100_000;
/** The most credits an opening entry (the balance an install brings when it registers its cabinet) or an operator's grant may carry. */
export const MAX_GRANT_CREDITS = 10_000_000;
/** Most credits entries in one wallet exchange, sent or served. */
const MAX_WALLET_ENTRIES = 500;

/**
 * What syncs: the cabinet's records and its staff list (`user`: emails, roles, disabled and removed,
 * never a password); the wallet has its own exchange (below). API keys, webhooks, credentials, passwords and sessions stay on their install.
 */
const SYNCED_KINDS = ['client', 'opportunity', 'devis', 'contract', 'job', 'event', 'user'] as const;
export type SyncedKind = (typeof SYNCED_KINDS)[number];
/** What a change does to its record. */
export const SYNC_OPS = ['upsert', 'erase'] as const;
export type SyncOp = (typeof SYNC_OPS)[number];

// ---------------------------------------------------------------------------------------------
// Hybrid logical clock: `<wall ms, 15 digits>-<counter, 6 digits>-<device id>`. Its text order is
// its order (time, then counter, then device), so the hub and the installs compare strings.

const HLC_PATTERN = /^(\d{15})-(\d{6})-([0-9a-z-]{1,64})$/;
const hlcSchema = z.string().regex(HLC_PATTERN, 'a hybrid logical clock: 15-digit ms, 6-digit counter, device id');

export interface Hlc {
  time: number;
  counter: number;
  device: string;
}

export function formatHlc(hlc: Hlc): string {
  return `${String(hlc.time).padStart(15, '0')}-${String(hlc.counter).padStart(6, '0')}-${hlc.device}`;
}

export function parseHlc(text: string): Hlc {
  const match = HLC_PATTERN.exec(text);
  if (!match) throw new Error(`not a hybrid logical clock: ${text}`);
  return { time: Number(match[1]), counter: Number(match[2]), device: match[3] as string };
}

// ---------------------------------------------------------------------------------------------
// Wire shapes.

const isoTime = z.iso.datetime().describe('ISO 8601, UTC.');
const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256, 64 lowercase hex digits');
const deviceIdSchema = z.string().min(1).max(64);
const recordIdSchema = z.string().min(1).max(254).describe('The record’s id: a UUID, or a user’s email.');

/**
 * One change of one record, numbered by its install: an upsert of some fields (the whole record on
 * creation, the changed fields on an edit), or an erasure, which wins over every edit of the record.
 */
const syncChangeSchema = z
  .object({
    number: z.int().min(1).describe('The install’s own sequence number of this change; consecutive within a device.'),
    kind: z.enum(SYNCED_KINDS),
    record_id: recordIdSchema,
    op: z.enum(SYNC_OPS),
    hlc: hlcSchema.describe('When the change was made: orders it against other devices’ changes to the same fields.'),
    fields: z.record(z.string(), z.unknown()).describe('Column name → value; for an erasure, the values that replace the erased ones.'),
  })
  .meta({ id: 'SyncChange' });
export type SyncChange = z.infer<typeof syncChangeSchema>;

const pushBodySchema = z
  .object({ changes: z.array(syncChangeSchema).min(1).max(MAX_BATCH_CHANGES).describe('Consecutive numbers, ascending.') })
  .meta({ id: 'SyncPush' });
export type PushBody = z.infer<typeof pushBodySchema>;

export const pushResponseSchema = z
  .object({
    acknowledged_number: z.int().min(0).describe('Every change up to this number is stored on the hub; the install may forget them.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncPushAck' });
export type PushResponse = z.infer<typeof pushResponseSchema>;

/** A change as the hub serves it: its place in the cabinet's sequence and the device that made it. */
const pulledChangeSchema = syncChangeSchema
  .omit({ number: true })
  .extend({
    seq: z.int().min(1).describe('The cabinet’s sequence on the hub: commit order.'),
    device_id: deviceIdSchema,
    // Any name: a newer install's kind reaches an older one, which keeps it until it is updated.
    kind: z.string().min(1).max(64).describe(`One of ${SYNCED_KINDS.join(', ')}, or a kind of a newer version, which an older install keeps aside until it is updated.`),
  })
  .meta({ id: 'SyncPulledChange' });
export type PulledChange = z.infer<typeof pulledChangeSchema>;

const pullQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0).describe('The last seq this install has applied; 0 for everything.'),
  limit: z.coerce.number().int().min(1).max(MAX_BATCH_CHANGES).default(500),
  wait: z.coerce.number().int().min(0).max(MAX_PULL_WAIT_SECONDS).default(0).describe('Seconds to hold the request open while there is nothing after `after` (long poll).'),
  own: z
    .stringbool()
    .default(false)
    .describe('true: the caller’s own changes too (an install restored from a backup pulls again what it made after the backup).'),
  wallet_after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The install’s wallet cursor: a long poll also ends when the cabinet’s credits entries pass it (a grant, another install’s debit).'),
});

export const pullResponseSchema = z
  .object({
    changes: z.array(pulledChangeSchema),
    last_seq: z.int().min(0).describe('Pass it as `after` next time.'),
    more: z.boolean().describe('More changes are waiting: pull again at once.'),
    device_last_number: z
      .int()
      .min(0)
      .optional()
      .describe('The highest change number of the calling device that the hub holds. An install whose own numbering is behind it was restored from a backup: the jobs it holds may have run since.'),
    wallet_seq: z.int().min(0).optional().describe('The cabinet’s newest credits entry: past the install’s wallet cursor, it exchanges its wallet (POST /wallet).'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncPull' });
export type PullResponse = z.infer<typeof pullResponseSchema>;

/** A record's current state on the hub: every change it stored of it, merged field by field by their stamps. */
const recordStateSchema = z
  .object({
    kind: z.string().min(1).max(64).describe(`One of ${SYNCED_KINDS.join(', ')}, or a kind of a newer version.`),
    record_id: recordIdSchema,
    erased: z.boolean().describe('true: the record was erased; its fields are its tombstone.'),
    fields: z.record(z.string(), z.unknown()).describe('Column name → its latest value.'),
    stamps: z.record(z.string(), hlcSchema).describe('Column name → the clock of its value (last writer wins per field, as for changes).'),
    seq: z.int().min(1).describe('The seq of the newest change merged into this state.'),
    device_id: deviceIdSchema.describe('The device of that change.'),
  })
  .meta({ id: 'SyncRecordState' });
export type RecordState = z.infer<typeof recordStateSchema>;

const stateQuerySchema = z.object({
  after_kind: z.string().max(64).default('').describe('With after_id: the last record of the previous page; empty for the first page.'),
  after_id: z.string().max(254).default(''),
  limit: z.coerce.number().int().min(1).max(MAX_BATCH_CHANGES).default(500),
  kind: z.string().min(1).max(64).optional().describe('With record_id: this one record only (an install retrying a change it set aside, whose seq the hub may have compacted).'),
  record_id: z.string().min(1).max(254).optional(),
});

export const stateResponseSchema = z
  .object({
    records: z.array(recordStateSchema).describe('In (kind, record_id) order.'),
    as_of_seq: z
      .int()
      .min(0)
      .describe('Every change up to this seq is merged into this page. Keep the first page’s: once the last page is applied, pull changes after it (a record changed meanwhile comes again, and merges by its stamps).'),
    more: z.boolean().describe('More records follow: ask again with the last record’s kind and id.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncState' });
export type StateResponse = z.infer<typeof stateResponseSchema>;

/**
 * A name the hub's operator reads in a terminal: no control character (an escape sequence could
 * rewrite the screen, hide the device's own id) and no bidirectional override (it reorders what follows).
 */
const shownName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/u, 'no control characters or direction marks');

const pairBodySchema = z
  .object({
    code: z.string().trim().min(1).max(64).describe('The single-use code `courtier hub invite` printed.'),
    device_name: shownName,
    cabinet: z
      .object({ id: z.string().min(1).max(64), name: shownName })
      .optional()
      .describe('To register this install’s cabinet (a code made with --new-cabinet for this very cabinet id); absent to join the code’s cabinet.'),
  })
  .meta({ id: 'SyncPair' });
export type PairBody = z.infer<typeof pairBodySchema>;

export const pairResponseSchema = z
  .object({
    device_id: deviceIdSchema,
    device_secret: z.string().describe('Shown once: the device’s credential (Authorization: Bearer). The hub keeps only its hash.'),
    cabinet_id: z.string(),
    cabinet_name: z.string(),
    reconnected: z
      .boolean()
      .optional()
      .describe('true: the install brought a cabinet the hub already has, with a code that joins it (a reconnect); it sends only what changed meanwhile.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncPaired' });
export type PairResponse = z.infer<typeof pairResponseSchema>;

export const leaveResponseSchema = z
  .object({ device_id: deviceIdSchema, revoked_at: isoTime, hub_time: isoTime })
  .meta({ id: 'SyncLeft' });
export type LeaveResponse = z.infer<typeof leaveResponseSchema>;

/** What an install sends of its own credits entries: a job's debit or refund, or the balance it brings when it registers its cabinet. */
const DEVICE_WALLET_KINDS = ['debit', 'refund', 'opening'] as const;
/** Every kind of the cabinet's ledger on the hub: a grant is the operator's alone. */
const HUB_WALLET_KINDS = ['grant', ...DEVICE_WALLET_KINDS] as const;
export type HubWalletKind = (typeof HUB_WALLET_KINDS)[number];

const walletNote = z.string().max(200).nullable();

const sentWalletEntrySchema = z
  .object({
    entry_id: z.uuid().describe('Made by the install: an entry sent again (a lost answer) is acknowledged, never stored twice.'),
    kind: z.enum(DEVICE_WALLET_KINDS),
    amount: z
      .int()
      .min(-MAX_JOB_COST)
      .max(MAX_GRANT_CREDITS)
      .describe('Credits: negative for a debit, the debit’s opposite for its refund, the balance brought for an opening.'),
    job_id: z.uuid().nullable().describe('The job debited or refunded; null for an opening.'),
    note: walletNote,
  })
  .meta({ id: 'SyncWalletEntrySent' });
export type SentWalletEntry = z.infer<typeof sentWalletEntrySchema>;

const walletExchangeBodySchema = z
  .object({
    after: z.int().min(0).describe('The last wallet seq this install holds; 0 for the whole ledger.'),
    entries: z.array(sentWalletEntrySchema).max(MAX_WALLET_ENTRIES).describe('This install’s entries the hub has not acknowledged yet.'),
  })
  .meta({ id: 'SyncWalletExchange' });
export type WalletExchangeBody = z.infer<typeof walletExchangeBodySchema>;

const hubWalletEntrySchema = z
  .object({
    seq: z.int().min(1).describe('The cabinet’s wallet sequence on the hub: commit order.'),
    entry_id: z.uuid(),
    kind: z.enum(HUB_WALLET_KINDS),
    amount: z.int(),
    job_id: z.uuid().nullable(),
    device_id: deviceIdSchema.nullable().describe('The install that made it; null for the operator’s grants.'),
    note: walletNote,
    created_at: isoTime,
  })
  .meta({ id: 'SyncWalletEntry' });
export type HubWalletEntry = z.infer<typeof hubWalletEntrySchema>;

export const walletExchangeResponseSchema = z
  .object({
    balance: z.int().describe('The cabinet’s balance on the hub, every entry sent included: the authority.'),
    acknowledged: z.array(z.object({ entry_id: z.uuid(), seq: z.int().min(1) })).describe('Every entry sent, as the hub holds it (stored now or before).'),
    entries: z.array(hubWalletEntrySchema).describe('The cabinet’s entries after `after`, in seq order, the caller’s own included.'),
    last_seq: z.int().min(0).describe('Pass it as `after` next time.'),
    more: z.boolean().describe('More entries wait: exchange again at once.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncWalletAnswer' });
export type WalletExchangeResponse = z.infer<typeof walletExchangeResponseSchema>;

const blobParamsSchema = z.object({ sha256: sha256Schema });
const blobStoredSchema = z.object({ sha256: sha256Schema, size: z.int().min(0) }).meta({ id: 'SyncBlob' });

// ---------------------------------------------------------------------------------------------
// The hub's routes.

/** Why the hub refuses a pairing, besides a malformed request: what an install tells the person who typed the code. */
export const PAIRING_REFUSALS = [
  'invalid_pairing_code',
  'too_many_pairing_attempts',
  'cabinet_already_on_hub',
  'pairing_code_joins',
  'sync_protocol_too_old',
  'sync_protocol_unsupported',
] as const satisfies readonly ErrorCode[];

const PROTOCOL_HEADERS = {
  'X-Courtier-Sync-Protocol': { description: 'The install’s sync protocol version.', required: true },
  'X-Courtier-Device-Time': { description: 'The install’s clock, ms since the epoch.', required: false },
};

export const pairDevice = defineEndpoint({
  method: 'POST',
  surface: 'hub',
  path: '/pair',
  operationId: 'pairDevice',
  summary: 'Trade a pairing code for a device credential',
  description:
    'Registers the install’s cabinet (a code made with --new-cabinet for that cabinet id) or joins the code’s cabinet (a code made with --cabinet, used without `cabinet`). The code is single use; every refused attempt counts against the address’s throttle. The body is at most 4 KiB.',
  tag: 'Sync',
  auth: 'none',
  headers: PROTOCOL_HEADERS,
  body: pairBodySchema,
  responses: { 201: { description: 'Paired.', schema: pairResponseSchema } },
  errors: ['validation_error', ...PAIRING_REFUSALS, 'payload_too_large', 'hub_database_unavailable'],
});

export const pushChanges = defineEndpoint({
  method: 'POST',
  surface: 'hub',
  path: '/changes',
  operationId: 'pushChanges',
  summary: 'Store a batch of this device’s changes',
  description:
    'Applied in one transaction. Changes the hub already has are skipped (a replayed batch gets the same acknowledgement); a batch that does not start at the next number is refused with sync_gap and details.expected_number; ' +
    'a batch that gives a number the hub holds another change under (the install was restored from a backup and numbers again) is refused with device_rewound and details.expected_number. ' +
    'Refused whole (nothing stored): a change that breaks the protocol’s rules (an erasure of a kind other than client or event, or carrying more than its tombstone; a job that is not finished; a clock stamped with another device’s id) with validation_error, ' +
    'a change whose fields pass 256 KiB as JSON with payload_too_large, a cabinet over one of the hub’s quotas with hub_quota_exceeded.',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  body: pushBodySchema,
  responses: { 200: { description: 'Stored.', schema: pushResponseSchema } },
  errors: ['validation_error', 'sync_gap', 'device_rewound', 'clock_skew', 'sync_protocol_too_old', 'sync_protocol_unsupported', 'payload_too_large', 'hub_quota_exceeded', 'sync_too_many_requests', 'hub_database_unavailable'],
});

export const pullChanges = defineEndpoint({
  method: 'GET',
  surface: 'hub',
  path: '/changes',
  operationId: 'pullChanges',
  summary: 'The other devices’ changes after a seq, in commit order',
  description:
    'The caller’s own changes are left out (unless own=true), and last_seq moves past them; last_seq below `after` means the hub went back (restored from a backup): the install pulls again from 0. ' +
    'A cursor older than the changes the hub still holds is 410 cursor_expired (details.oldest_seq): the install reads the state (GET /state), then pulls after its as_of_seq. A page ends at `limit` changes or once their fields pass 4 MiB (at least one change always comes), and then says more. ' +
    'With wait > 0 and nothing new, the request is held until another device pushes (any hub process wakes it), the wait ends, or the device is revoked (401 device_revoked). A device has at most 2 such waits and 8 requests in progress on a hub process (429 sync_too_many_requests).',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  query: pullQuerySchema,
  responses: { 200: { description: 'A page of changes.', schema: pullResponseSchema } },
  errors: ['validation_error', 'cursor_expired', 'sync_protocol_too_old', 'sync_protocol_unsupported', 'sync_too_many_requests', 'hub_database_unavailable'],
});

export const getState = defineEndpoint({
  method: 'GET',
  surface: 'hub',
  path: '/state',
  operationId: 'getState',
  summary: 'The current state of the cabinet’s records, by pages',
  description:
    'What a join, or an install whose cursor expired, reads instead of the whole history: each record of the caller’s cabinet with its fields, their stamps and whether it was erased, in (kind, record_id) order. ' +
    'A page ends at `limit` records or once their fields pass 4 MiB (at least one record always comes). Keep the first page’s as_of_seq, apply every page as changes are applied (field by field by stamp), then pull changes after as_of_seq.',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  query: stateQuerySchema,
  responses: { 200: { description: 'A page of records.', schema: stateResponseSchema } },
  errors: ['validation_error', 'sync_protocol_too_old', 'sync_protocol_unsupported', 'sync_too_many_requests', 'hub_database_unavailable'],
});

export const leaveHub = defineEndpoint({
  method: 'DELETE',
  surface: 'hub',
  path: '/device',
  operationId: 'leaveHub',
  summary: 'This device leaves its cabinet',
  description:
    'What an install does when it disconnects: the calling device is revoked, at once and on every hub process, so its credential opens nothing any more. Leaving twice answers the first revocation.',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  responses: { 200: { description: 'Revoked.', schema: leaveResponseSchema } },
  errors: ['hub_database_unavailable'],
});

export const exchangeWallet = defineEndpoint({
  method: 'POST',
  surface: 'hub',
  path: '/wallet',
  operationId: 'exchangeWallet',
  summary: 'Send this device’s credits entries; get the cabinet’s balance and ledger',
  description:
    'The hub keeps the cabinet’s one wallet. In one transaction, under the cabinet’s lock: stores the entries sent that it does not hold yet (an entry it holds is acknowledged again, never doubled), moves the balance, and answers it with the entries after `after` (grants, other installs’ debits and refunds, this device’s own). ' +
    'Refused whole with wallet_entry_refused (details.refused), nothing stored: a debit that is not negative or passes what a job may cost, a refund without this device’s debit of the job or of another amount, a second debit or refund of a job by this device, an opening from a device that did not register the cabinet or a second one, an entry id the cabinet holds for another entry. A device never sends a grant: only the operator mints credits (courtier hub credits grant).',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  body: walletExchangeBodySchema,
  responses: { 200: { description: 'Stored; the cabinet’s balance and entries.', schema: walletExchangeResponseSchema } },
  errors: ['validation_error', 'wallet_entry_refused', 'sync_protocol_too_old', 'sync_protocol_unsupported', 'sync_too_many_requests', 'hub_database_unavailable'],
});

export const putBlob = defineEndpoint({
  method: 'PUT',
  surface: 'hub',
  path: '/blobs/{sha256}',
  operationId: 'putBlob',
  summary: 'Store a quote’s PDF by its SHA-256',
  description: 'The hub checks the body’s SHA-256 against the path. Storing a blob the cabinet has is a no-op.',
  tag: 'Sync',
  auth: 'device',
  params: blobParamsSchema,
  bodyEncoding: 'binary',
  responses: { 200: { description: 'Stored (or already there).', schema: blobStoredSchema } },
  errors: ['blob_hash_mismatch', 'payload_too_large', 'hub_quota_exceeded', 'sync_too_many_requests', 'hub_database_unavailable'],
});

export const getBlob = defineEndpoint({
  method: 'GET',
  surface: 'hub',
  path: '/blobs/{sha256}',
  operationId: 'getBlob',
  summary: 'A stored PDF',
  tag: 'Sync',
  auth: 'device',
  params: blobParamsSchema,
  responses: { 200: { description: 'The bytes.', contentType: 'application/pdf' } },
  errors: ['not_found', 'hub_database_unavailable'],
});

export const getHubHealth = defineEndpoint({
  method: 'GET',
  surface: 'root',
  path: '/healthz',
  operationId: 'getHubHealth',
  summary: 'Liveness of a hub process',
  tag: 'Meta',
  auth: 'none',
  responses: { 200: { description: 'The hub answers.', schema: healthSchema } },
  errors: [],
});

export const getHubOpenApiDocument = defineEndpoint({
  method: 'GET',
  surface: 'hub',
  path: '/openapi.json',
  operationId: 'getHubOpenApiDocument',
  summary: 'The OpenAPI 3.1 document of the hub',
  tag: 'Meta',
  auth: 'none',
  responses: { 200: { description: 'The OpenAPI document of the hub.', schema: z.record(z.string(), z.unknown()) } },
  errors: [],
});

export const HUB_ENDPOINTS = [pairDevice, pushChanges, pullChanges, getState, exchangeWallet, leaveHub, putBlob, getBlob, getHubHealth, getHubOpenApiDocument] as const;
