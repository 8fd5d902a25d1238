import { isNull } from 'drizzle-orm';
import { z } from 'zod';
import { CLIENT_TYPES, clientSchema, CREATED_VIA, OPPORTUNITY_STAGES, opportunitySchema } from '../../shared/crm.js';
import { storedId, storedJson, storedText, storedTime } from '../sync/stored-values.js';
import { syncedTable, type SyncedRecords } from '../sync/synced-table.js';
import { clearClientCopies } from './erasure.js';
import { clients, opportunities, opportunityNotes } from './schema.js';

const contactText = storedText(254).nullable();

/** A client's row as the service writes it: the reads (toClient) take any row that passes. */
const clientRow = z.object({
  type: z.enum(CLIENT_TYPES),
  last_name: contactText,
  first_name: contactText,
  company_name: contactText,
  siret: z
    .string()
    .regex(/^\d{14}$/)
    .nullable(),
  email: contactText,
  phone: storedText(40).nullable(),
  address: storedJson(clientSchema.shape.address.unwrap(), 'an address').nullable(),
  birth_date: z.iso.date().nullable(),
  created_at: storedTime,
  updated_at: storedTime,
  erased_at: storedTime.nullable(),
});

/** An erasure carries the tombstone: every personal field empty, the time of the erasure. */
const clientTombstone = z.strictObject({
  type: z.enum(CLIENT_TYPES).optional(),
  last_name: z.null().optional(),
  first_name: z.null().optional(),
  company_name: z.null().optional(),
  siret: z.null().optional(),
  email: z.null().optional(),
  phone: z.null().optional(),
  address: z.null().optional(),
  birth_date: z.null().optional(),
  created_at: storedTime.optional(),
  updated_at: storedTime.optional(),
  erased_at: storedTime,
});

/** An erased client is no longer edited here: what a later edit would write, the erasure took away. */
const clientTable = syncedTable('client', clients, {
  fields: clientRow,
  erasure: clientTombstone,
  editableWhile: isNull(clients.erasedAt),
});

/**
 * Clients sync whole; an erasure pulled from another install also clears the client's data from
 * the events this install holds, as the erasing install did with its own.
 */
export const clientRecords = {
  ...clientTable,
  afterErase: (context, cabinetId, recordId) => void clearClientCopies(context.deps, cabinetId, recordId),
} satisfies SyncedRecords & Pick<typeof clientTable, 'capture'>;

export const opportunityRow = z.object({
  title: storedText(200),
  product: storedText(100),
  stage: z.enum(OPPORTUNITY_STAGES),
  expected_value_cents: z.int().min(0).max(100_000_000_000),
  source: storedText(100),
  contact: storedJson(opportunitySchema.shape.contact, 'a contact'),
  tags: storedJson(opportunitySchema.shape.tags, 'a list of tags'),
  // Optional: an install of an earlier version creates opportunities without it.
  client_id: storedId.nullable().optional(),
  created_via: z.enum(CREATED_VIA),
  created_at: storedTime,
  updated_at: storedTime,
});

export const opportunityRecords = syncedTable('opportunity', opportunities, { fields: opportunityRow });

const noteRow = z.object({
  opportunity_id: storedId,
  author: storedText(200),
  // Empty once the opportunity's client was erased.
  body: storedText(5000),
  created_at: storedTime,
});

/** Notes travel once, whole; the only later change is a client's erasure emptying their body. */
export const opportunityNoteRecords = syncedTable('opportunity_note', opportunityNotes, { fields: noteRow });
