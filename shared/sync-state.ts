import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import { deviceIdSchema, isoTime, MAX_BATCH_CHANGES, PROTOCOL_HEADERS, recordIdSchema, SYNCED_KINDS } from './sync-protocol.js';
import { hlcSchema } from './hlc.js';

/**
 * The cabinet's records as they stand on the hub (docs/SYNC.md, State and retention): what a join
 * reads before the changes after its as_of_seq, and an install whose cursor the hub no longer serves.
 */

/** A record's current state on the hub: every change it stored of it, merged field by field by their stamps. */
const recordStateSchema = z
  .object({
    kind: z
      .string()
      .min(1)
      .max(64)
      .describe(`One of ${SYNCED_KINDS.join(', ')}, or a kind of a newer version.`),
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
  kind: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('With record_id: this one record only (an install retrying a change it set aside, whose seq the hub may have compacted).'),
  record_id: z.string().min(1).max(254).optional(),
});

export const stateResponseSchema = z
  .object({
    records: z.array(recordStateSchema).describe('In (kind, record_id) order.'),
    as_of_seq: z
      .int()
      .min(0)
      .describe(
        'Every change up to this seq is merged into this page. Keep the first page’s: once the last page is applied, pull changes after it (a record changed meanwhile comes again, and merges by its stamps).',
      ),
    more: z.boolean().describe('More records follow: ask again with the last record’s kind and id.'),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncState' });
export type StateResponse = z.infer<typeof stateResponseSchema>;

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
