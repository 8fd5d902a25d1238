import { z } from 'zod';
import { hlcSchema } from './hlc.js';
import { defineEndpoint } from './endpoint.js';
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
export const MAX_BATCH_CHANGES = 1000;
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
/**
 * Largest state of one record the hub keeps (its fields and their stamps as JSON): a state page
 * stops before passing MAX_PULL_PAGE_BYTES unless its first record alone does, so that every page
 * stays within what an install reads of an answer. A change that would pass it is refused.
 */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * What syncs: the cabinet's records and its staff list (`user`: emails, roles, disabled and removed,
 * never a password); the wallet has its own exchange (below). API keys, webhooks, credentials, passwords and sessions stay on their install.
 * In the order a first upload sends them: the staff list first, a quote after its client, a contract
 * after its quote, a comparison after its jobs and an advice document after its comparison, events last. A new kind needs no new protocol version: an older install keeps
 * its changes aside until it is updated.
 */
export const SYNCED_KINDS = [
  'user',
  'client',
  'opportunity',
  'opportunity_note',
  'devis',
  'contract',
  'job',
  'comparaison',
  'conseil',
  'event',
] as const;
export type SyncedKind = (typeof SYNCED_KINDS)[number];
/** What a change does to its record. */
export const SYNC_OPS = ['upsert', 'erase'] as const;
export type SyncOp = (typeof SYNC_OPS)[number];

// ---------------------------------------------------------------------------------------------
// Wire shapes.

export const isoTime = z.iso.datetime().describe('ISO 8601, UTC.');
const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256, 64 lowercase hex digits');
export const deviceIdSchema = z.string().min(1).max(64);
export const recordIdSchema = z.string().min(1).max(254).describe('The record’s id: a UUID, or a user’s email.');

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
    kind: z
      .string()
      .min(1)
      .max(64)
      .describe(`One of ${SYNCED_KINDS.join(', ')}, or a kind of a newer version, which an older install keeps aside until it is updated.`),
  })
  .meta({ id: 'SyncPulledChange' });
export type PulledChange = z.infer<typeof pulledChangeSchema>;

const pullQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0).describe('The last seq this install has applied; 0 for everything.'),
  limit: z.coerce.number().int().min(1).max(MAX_BATCH_CHANGES).default(500),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_PULL_WAIT_SECONDS)
    .default(0)
    .describe('Seconds to hold the request open while there is nothing after `after` (long poll).'),
  own: z
    .stringbool()
    .default(false)
    .describe('true: the caller’s own changes too (an install restored from a backup pulls again what it made after the backup).'),
  wallet_after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'The install’s wallet cursor: a long poll also ends when the cabinet’s credits entries pass it (a grant, another install’s debit).',
    ),
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
      .describe(
        'The highest change number of the calling device that the hub holds. An install whose own numbering is behind it was restored from a backup: the jobs it holds may have run since.',
      ),
    wallet_seq: z
      .int()
      .min(0)
      .optional()
      .describe('The cabinet’s newest credits entry: past the install’s wallet cursor, it exchanges its wallet (POST /wallet).'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncPull' });
export type PullResponse = z.infer<typeof pullResponseSchema>;

const blobParamsSchema = z.object({ sha256: sha256Schema });
const blobStoredSchema = z.object({ sha256: sha256Schema, size: z.int().min(0) }).meta({ id: 'SyncBlob' });

// ---------------------------------------------------------------------------------------------
// The hub's routes.

export const PROTOCOL_HEADERS = {
  'X-Courtier-Sync-Protocol': { description: 'The install’s sync protocol version.', required: true },
  'X-Courtier-Device-Time': { description: 'The install’s clock, ms since the epoch.', required: false },
};

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
  errors: [
    'validation_error',
    'sync_gap',
    'device_rewound',
    'clock_skew',
    'sync_protocol_too_old',
    'sync_protocol_unsupported',
    'payload_too_large',
    'hub_quota_exceeded',
    'sync_too_many_requests',
    'hub_database_unavailable',
  ],
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
  errors: [
    'validation_error',
    'cursor_expired',
    'sync_protocol_too_old',
    'sync_protocol_unsupported',
    'sync_too_many_requests',
    'hub_database_unavailable',
  ],
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
