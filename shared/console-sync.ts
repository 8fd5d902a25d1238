import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import { hlcSchema } from './hlc.js';
import { SYNC_OPS } from './sync-protocol.js';
import { PAIRING_REFUSALS } from './sync-pairing.js';

/**
 * A cabinet's sync, as `courtier sync status` and the console show it. `state`: off (no hub),
 * idle (up to date), syncing (sending or receiving), offline (the hub cannot be reached; retried
 * with backoff), error (the hub refuses: last_error says why and what to do). A paused sync keeps
 * its link and queues changes; it reports its last state with paused true.
 */
const SYNC_STATES = ['off', 'idle', 'syncing', 'offline', 'error'] as const;

const isoOrNull = z.iso.datetime().nullable();

const syncStatusSchema = z
  .object({
    cabinet_id: z.string(),
    state: z.enum(SYNC_STATES),
    paused: z.boolean(),
    hub_url: z.string().nullable(),
    device_id: z.string().nullable(),
    device_name: z.string().nullable(),
    pending_changes: z.int().min(0).describe('Changes made here that the hub has not acknowledged yet.'),
    last_push_at: isoOrNull,
    last_pull_at: isoOrNull,
    last_error: z.string().nullable().describe('In words, e.g. "hub unreachable since 10:42" or "this device was revoked on the hub".'),
    last_error_code: z
      .string()
      .nullable()
      .describe(
        'Stable: hub_unreachable, device_revoked, clock_skew, sync_protocol_too_old, sync_off (the credential is missing), internal_error, or a hub error code.',
      ),
    offline_since: z.iso.datetime().nullable().describe('While the hub cannot be reached: since when.'),
    clock_ahead_seconds: z
      .int()
      .nullable()
      .describe('How far this machine’s clock is ahead of the hub’s (negative: behind), at the last answer.'),
    resyncing: z
      .boolean()
      .describe(
        'This install is pulling the cabinet again from the start: it, or the hub, was restored from a backup. Nothing is lost meanwhile.',
      ),
    refused_by_hub: z
      .int()
      .min(0)
      .describe(
        'Changes made here that the hub refused for what they hold (taken out of the queue so that the others go; courtier sync conflicts lists them).',
      ),
    set_aside_changes: z
      .int()
      .min(0)
      .describe('Changes pulled from other installs that this install set aside instead of applying (courtier sync conflicts lists them).'),
  })
  .meta({ id: 'SyncStatus' });
export type SyncStatus = z.infer<typeof syncStatusSchema>;

const SYNC_CONFLICT_REASONS = ['invalid_fields', 'operation_refused', 'record_clash', 'not_applicable', 'not_understood'] as const;

/**
 * A change pulled from the hub that this install set aside: the cabinet's other installs sent
 * something its rules refuse. `reason`: invalid_fields (a value a local write would refuse),
 * operation_refused (an erasure of a kind never erased, a change to a job this install runs),
 * record_clash (the id is another cabinet's record on this install), not_applicable (the database
 * refused it), not_understood (a kind or fields of a newer Courtier: what this version knows was
 * applied, the rest is applied once it is updated). The pull went on without it.
 */
const syncConflictSchema = z
  .object({
    seq: z.int().describe('Its place in the cabinet’s sequence on the hub.'),
    device_id: z.string().describe('The hub device that sent it.'),
    kind: z.string(),
    record_id: z.string(),
    op: z.enum(SYNC_OPS),
    hlc: z.string(),
    fields: z.string().describe('The change’s fields as JSON, cut after 4 KiB.'),
    reason: z.enum(SYNC_CONFLICT_REASONS),
    message: z.string(),
    set_aside_at: z.iso.datetime(),
  })
  .meta({ id: 'SyncConflict' });
export type SyncConflict = z.infer<typeof syncConflictSchema>;

// ---- The console's Sync page (/api/v1/console/sync) ----

const SYNC_TAG = 'Console: sync';

const connectSyncBodySchema = z.object({
  hub_url: z.string().trim().min(1).max(2000).describe('https://…, or http:// to this machine only.'),
  code: z.string().trim().min(1).max(64).describe('The pairing code the hub’s operator gave (courtier hub invite).'),
  device_name: z.string().trim().min(1).max(200).optional().describe('How the hub lists this install; the machine’s name when absent.'),
});

export const getSyncStatus = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/sync',
  operationId: 'consoleGetSyncStatus',
  summary: 'The cabinet’s sync with its hub',
  tag: SYNC_TAG,
  auth: 'console',
  responses: { 200: { description: 'The state, the queue, the last exchanges and the last problem in words.', schema: syncStatusSchema } },
  errors: [],
});

export const connectSync = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/sync/connect',
  operationId: 'consoleConnectSync',
  summary: 'Register the cabinet on a hub',
  description:
    'Pairs this install with the hub (the hub’s cabinet takes this cabinet’s id and name) and queues everything the cabinet holds; the service uploads it in the background. With a code that joins this very cabinet on the hub (after a revocation, or a hub restored from a backup), it reconnects: only what changed here meanwhile is sent, with when it changed, and the rest comes down from the hub.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  body: connectSyncBodySchema,
  responses: { 200: { description: 'Connected; the upload has started.', schema: syncStatusSchema } },
  errors: ['invalid_hub_url', 'sync_already_on', ...PAIRING_REFUSALS, 'hub_unreachable'],
});

export const listSyncConflicts = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/sync/conflicts',
  operationId: 'consoleListSyncConflicts',
  summary: 'Changes from other installs that this one set aside',
  description:
    'Newest first, at most 100: what this install’s rules refused (the change’s fields may hold personal data, hence administrators only).',
  tag: SYNC_TAG,
  auth: 'console_admin',
  responses: {
    200: {
      description: 'The set-aside changes.',
      schema: z.object({ data: z.array(syncConflictSchema) }).meta({ id: 'SyncConflictList' }),
    },
  },
  errors: [],
});

const conflictRetrySchema = z
  .object({
    applied: z.array(z.int()).describe('Seqs of the changes applied at last.'),
    still_set_aside: z.array(z.int()).describe('Seqs of the changes still refused (their reason may have changed).'),
    no_longer_on_hub: z.array(z.int()).describe('Seqs of the changes the hub no longer serves: discard them.'),
  })
  .meta({ id: 'SyncConflictRetry' });
export type SyncConflictRetry = z.infer<typeof conflictRetrySchema>;

const conflictParams = z.object({ seq: z.coerce.number().int().min(1).describe('The set-aside change’s seq.') });

export const retrySyncConflict = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/sync/conflicts/{seq}/retry',
  operationId: 'consoleRetrySyncConflict',
  summary: 'Try a set-aside change again',
  description:
    'Fetches the change whole from the hub and applies it as a pulled change is (a field changed since keeps its later value); it leaves the list once applied.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  params: conflictParams,
  responses: { 200: { description: 'What became of it.', schema: conflictRetrySchema } },
  errors: ['sync_off', 'not_found', 'hub_unreachable'],
});

export const discardSyncConflict = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/sync/conflicts/{seq}',
  operationId: 'consoleDiscardSyncConflict',
  summary: 'Discard a set-aside change',
  description: 'This install forgets it for good; the other installs keep what they applied. Recorded in the audit log.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  params: conflictParams,
  responses: { 204: { description: 'Discarded.' } },
  errors: ['sync_off', 'not_found'],
});

/**
 * A change made on this install that the hub refused for what it holds (a value it cannot store, a
 * change over its size limit, a kind a hub of an earlier version does not know): taken out of the
 * queue so that the ones after it went. The value stays on this install; the others do not have it.
 */
const syncRefusedSchema = z
  .object({
    hlc: z.string().describe('The change’s stamp: its identity on this install.'),
    kind: z.string(),
    record_id: z.string(),
    op: z.enum(SYNC_OPS),
    fields: z.string().describe('The change’s fields as JSON, cut after 4 KiB.'),
    code: z.string().describe('The hub’s error code: validation_error or payload_too_large.'),
    message: z.string().describe('The hub’s words.'),
    refused_at: z.iso.datetime(),
  })
  .meta({ id: 'SyncRefusedChange' });
export type SyncRefusedChange = z.infer<typeof syncRefusedSchema>;

export const listSyncRefused = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/sync/refused',
  operationId: 'consoleListSyncRefused',
  summary: 'Changes made here that the hub refused',
  description: 'Newest first, at most 100 (the change’s fields may hold personal data, hence administrators only).',
  tag: SYNC_TAG,
  auth: 'console_admin',
  responses: {
    200: {
      description: 'The refused changes.',
      schema: z.object({ data: z.array(syncRefusedSchema) }).meta({ id: 'SyncRefusedList' }),
    },
  },
  errors: [],
});

const refusedParams = z.object({ hlc: hlcSchema.describe('The refused change’s stamp.') });

export const resendSyncRefused = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/sync/refused/{hlc}/send',
  operationId: 'consoleResendSyncRefused',
  summary: 'Send a refused change again',
  description:
    'Puts the change back at the end of the queue with its own stamp (a field changed since, here or elsewhere, keeps its later value); the service sends it at once. Once the hub was updated, or what it refused changed, it goes; refused again, it comes back to the list. Recorded in the audit log.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  params: refusedParams,
  responses: {
    200: {
      description: 'Queued again.',
      schema: z.object({ queued: z.int().min(0).describe('Changes put back in the queue.') }).meta({ id: 'SyncRefusedResent' }),
    },
  },
  errors: ['sync_off', 'not_found'],
});

export const discardSyncRefused = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/sync/refused/{hlc}',
  operationId: 'consoleDiscardSyncRefused',
  summary: 'Discard a refused change',
  description:
    'This install forgets it for good: the other installs never get it, and the value stays on this install as it is. Recorded in the audit log.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  params: refusedParams,
  responses: { 204: { description: 'Discarded.' } },
  errors: ['sync_off', 'not_found'],
});

export const pauseSync = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/sync/pause',
  operationId: 'consolePauseSync',
  summary: 'Pause the sync (changes are queued)',
  tag: SYNC_TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'Paused.', schema: syncStatusSchema } },
  errors: ['sync_off'],
});

export const resumeSync = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/sync/resume',
  operationId: 'consoleResumeSync',
  summary: 'Resume the sync',
  tag: SYNC_TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'Resumed.', schema: syncStatusSchema } },
  errors: ['sync_off'],
});

const disconnectedSchema = syncStatusSchema
  .extend({
    left_hub: z.boolean().describe('The hub revoked this device (false: it could not be told; ask its operator to revoke the device).'),
    left_device_id: z.string().describe('The device this install was on the hub.'),
  })
  .meta({ id: 'SyncDisconnected' });

export const disconnectSync = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/sync',
  operationId: 'consoleDisconnectSync',
  summary: 'Stop syncing this cabinet',
  description:
    'The device leaves the hub (revoked there), then the link and the queue of unsent changes go; the records stay, with when each field last changed, so that connecting again sends what changed here meanwhile. left_hub is false when the hub could not be told: its operator should then revoke the device.',
  tag: SYNC_TAG,
  auth: 'console_admin',
  responses: { 200: { description: 'Sync is off.', schema: disconnectedSchema } },
  errors: ['sync_off'],
});

export const CONSOLE_SYNC_ENDPOINTS = [
  getSyncStatus,
  connectSync,
  pauseSync,
  resumeSync,
  disconnectSync,
  listSyncConflicts,
  retrySyncConflict,
  discardSyncConflict,
  listSyncRefused,
  resendSyncRefused,
  discardSyncRefused,
] as const;
