import { z } from 'zod';
import { EVENT_PAYLOADS } from '../../shared/events.js';
import { anyJsonObject, storedJson, storedText, storedTime } from '../sync/stored-values.js';
import { syncedTable, type Refusal } from '../sync/synced-table.js';
import { events } from './schema.js';

const eventRow = z.object({
  type: storedText(100),
  version: storedText(20),
  created_at: storedTime,
  data: storedJson(anyJsonObject, 'a JSON object'),
});

/** The personal fields of a client.updated event: an erasure of the event empties them, and changes nothing else. */
const CONTACT_FIELDS = ['last_name', 'first_name', 'company_name', 'siret', 'email', 'phone', 'address', 'birth_date'];

/** An event's data must be what recordEvent would have written for its type (a newer install's types: any object). */
function payloadRefusal(type: unknown, data: unknown, erasing: boolean): Refusal | null {
  if (typeof type !== 'string' || typeof data !== 'string') return null;
  const payload = JSON.parse(data) as Record<string, unknown>;
  if (erasing && (type !== 'client.updated' || CONTACT_FIELDS.some((field) => payload[field] !== null && payload[field] !== undefined))) {
    return { reason: 'invalid_fields', message: 'an event erasure may only empty the contact fields of a client.updated event' };
  }
  const schema = (EVENT_PAYLOADS as Record<string, z.ZodType | undefined>)[type];
  if (schema && !schema.safeParse(payload).success) return { reason: 'invalid_fields', message: `the data of this ${type} event is not what the event carries` };
  return null;
}

/**
 * Events sync with their original id, so that every install delivers the cabinet's events to its
 * own subscriptions under the same envelope id. The outbox position (seq) is each install's own.
 * They are erased only as a client's erasure rewrites them.
 */
export const eventRecords = syncedTable('event', events, {
  local: ['seq'],
  fields: eventRow,
  erasure: eventRow.strict(),
  accepts: (_orm, _cabinetId, change) => payloadRefusal(change.fields.type, change.fields.data, change.op === 'erase'),
});
