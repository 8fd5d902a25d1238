import { z } from 'zod';
import { EVENT_PAYLOADS } from '../../shared/events.js';
import { anyJsonObject, storedJson, storedText, storedTime } from '../sync/stored-values.js';
import { syncedTable, type Refusal, type SyncedRecords } from '../sync/synced-table.js';
import { events } from './schema.js';
import * as store from './store.js';

const eventRow = z.object({
  type: storedText(100),
  version: storedText(20),
  created_at: storedTime,
  data: storedJson(anyJsonObject, 'a JSON object'),
});

/** An event's data must be what recordEvent would have written for its type (a newer install's types: any object). */
function payloadRefusal(type: unknown, data: unknown): Refusal | null {
  if (typeof type !== 'string' || typeof data !== 'string') return null;
  const schema = (EVENT_PAYLOADS as Record<string, z.ZodType | undefined>)[type];
  if (schema && !schema.safeParse(JSON.parse(data)).success)
    return { reason: 'invalid_fields', message: `the data of this ${type} event is not what the event carries` };
  return null;
}

/**
 * Events sync with their original id, so that every install delivers the cabinet's events to its
 * own subscriptions under the same envelope id. The outbox position (seq) is each install's own.
 * They are erased only as a client's erasure rewrites them (changeRuleBroken checks what an erasure carries).
 */
const eventTable = syncedTable('event', events, {
  local: ['seq'],
  fields: eventRow,
  accepts: (_orm, _cabinetId, change) => payloadRefusal(change.fields.type, change.fields.data),
  // A test delivery concerns one subscription of this install: it is not the cabinet's history.
  staysHere: (row) => row.type === 'webhook.test',
});

/**
 * An erasure, or an edit (an erasure's rewrite of its data), of an event this install does not
 * hold is dropped: there is nothing here to erase, and storing it would deliver to this install's
 * webhooks, late, an event it never had (a client.updated after its client.erased).
 */
export const eventRecords = {
  ...eventTable,
  skips: (context, cabinetId, change) =>
    (change.op === 'erase' || !('type' in change.fields)) && !store.findEvent(context.deps.db.orm, cabinetId, change.recordId),
} satisfies SyncedRecords & Pick<typeof eventTable, 'capture'>;
