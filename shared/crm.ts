import { z } from 'zod';

/** SIRET: 14 digits with a valid Luhn checksum (La Poste's establishments use their own rule). */
export function isValidSiret(siret: string): boolean {
  if (!/^\d{14}$/.test(siret)) return false;
  const digits = [...siret].map(Number);
  if (siret.startsWith('356000000')) return digits.reduce((a, b) => a + b, 0) % 5 === 0;
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    let d = digits[13 - i] ?? 0;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const siretSchema = z
  .string()
  .transform((s) => s.replace(/\s/g, ''))
  .refine(isValidSiret, 'siret must be 14 digits with a valid checksum')
  .describe('SIRET, 14 digits (spaces allowed), checked with its Luhn key.');

const name = z.string().trim().min(1).max(200);
const emailSchema = z.email('email is not a valid address').max(254);
const phoneSchema = z
  .string()
  .trim()
  .regex(/^\+?[0-9 ().-]{6,25}$/, 'phone must be digits, spaces, dots or dashes, optionally starting with +');

/** Amounts in euros with at most 2 decimals; stored as integer cents. */
const eurosSchema = z
  .number()
  .min(0)
  .max(1_000_000_000)
  .refine((v) => Math.abs(Math.round(v * 100) - v * 100) < 1e-6, 'at most 2 decimals (cents)');

export const OPPORTUNITY_STAGES = ['new', 'qualified', 'quoted', 'negotiation', 'won', 'lost'] as const;
export const opportunityStageSchema = z.enum(OPPORTUNITY_STAGES);
export type OpportunityStage = z.infer<typeof opportunityStageSchema>;
export const FINAL_STAGES: readonly OpportunityStage[] = ['won', 'lost'];
export const OPPORTUNITY_SORTS = ['-created_at', '-expected_value_eur'] as const;
export type OpportunitySort = (typeof OPPORTUNITY_SORTS)[number];
export const CREATED_VIA = ['api', 'mcp', 'console'] as const;

const opportunityContactInput = z.strictObject({
  last_name: name,
  first_name: name.optional(),
  company_name: name.optional(),
  siret: siretSchema.optional(),
  email: emailSchema.optional(),
  phone: phoneSchema.optional(),
});

const clientIdInput = z
  .uuid()
  .describe('A client of the cabinet, not erased (GET /clients); otherwise 400 validation_error at body.client_id, nothing written.');

const tagsSchema = z
  .array(z.string().trim().min(1).max(50))
  .max(50)
  .transform((tags) => [...new Set(tags)]);

export const createOpportunityBody = z
  .strictObject({
    title: name,
    product: z.string().trim().min(1).max(100).describe('Product code or label, e.g. auto, mrh.'),
    contact: opportunityContactInput,
    stage: opportunityStageSchema.default('new'),
    expected_value_eur: eurosSchema.default(0),
    source: z.string().trim().min(1).max(100).optional().describe('Where the lead came from; defaults to the channel (api).'),
    tags: tagsSchema.default([]),
    client_id: clientIdInput.optional(),
  })
  .meta({ id: 'CreateOpportunity' });
export type CreateOpportunityInput = z.output<typeof createOpportunityBody>;

export const updateOpportunityBody = z
  .strictObject({
    title: name.optional(),
    product: z.string().trim().min(1).max(100).optional(),
    contact: opportunityContactInput.partial().optional().describe('Fields given replace those of the contact; others stay.'),
    stage: opportunityStageSchema.optional(),
    reopen: z.boolean().optional().describe('Must be true to move a won or lost opportunity back to an open stage.'),
    expected_value_eur: eurosSchema.optional(),
    source: z.string().trim().min(1).max(100).optional(),
    tags: tagsSchema.optional(),
    client_id: clientIdInput
      .nullable()
      .optional()
      .describe('A client of the cabinet, not erased; null detaches the opportunity from its client.'),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'reopen'), 'give at least one field to change')
  .meta({ id: 'UpdateOpportunity' });
export type UpdateOpportunityInput = z.output<typeof updateOpportunityBody>;

const nullableString = z.string().nullable();

export const opportunitySchema = z
  .object({
    id: z.uuid().describe('Same as opportunity_id.'),
    opportunity_id: z.uuid(),
    title: z.string(),
    name: z.string().describe('Same as title.'),
    product: z.string(),
    stage: opportunityStageSchema,
    expected_value_eur: z.number(),
    amount: z.number().describe('Same as expected_value_eur, in euros.'),
    source: z.string(),
    contact: z.object({
      last_name: z.string(),
      first_name: nullableString,
      company_name: nullableString,
      siret: nullableString,
      email: nullableString,
      phone: nullableString,
    }),
    tags: z.array(z.string()),
    client_id: z.uuid().nullable().describe('The client the opportunity is for, if one was chosen; it stays once that client is erased.'),
    created_via: z.enum(CREATED_VIA),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({
    id: 'Opportunity',
    description:
      'The event names (opportunity_id, title, expected_value_eur) and the names list readers use (id, name, amount) are both present and always equal.',
  });
export type Opportunity = z.infer<typeof opportunitySchema>;

export const CLIENT_TYPES = ['person', 'company'] as const;
export const CLIENT_SORTS = ['-created_at', 'name'] as const;
export type ClientSort = (typeof CLIENT_SORTS)[number];
type ClientType = (typeof CLIENT_TYPES)[number];

const addressSchema = z.strictObject({
  line1: z.string().trim().min(1).max(200),
  line2: z.string().trim().max(200).optional(),
  postcode: z
    .string()
    .trim()
    .regex(/^[0-9A-Za-z -]{3,10}$/, 'postcode is not valid'),
  city: z.string().trim().min(1).max(100),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'country must be an ISO 3166-1 alpha-2 code such as FR')
    .default('FR'),
});
export type ClientAddressPart = keyof z.input<typeof addressSchema>;

const birthDateSchema = z.iso
  .date('birth_date must be a date as YYYY-MM-DD')
  .refine((d) => d >= '1900-01-01' && d <= new Date().toISOString().slice(0, 10), 'birth_date must be between 1900 and today');

/** The contact fields of a client: what creation takes besides its type, and what PATCH may change. */
export const CLIENT_CONTACT_FIELDS = [
  'last_name',
  'first_name',
  'company_name',
  'siret',
  'email',
  'phone',
  'address',
  'birth_date',
] as const;
export type ClientContactField = (typeof CLIENT_CONTACT_FIELDS)[number];

/** Each contact field's validation, one definition for creation and PATCH. */
const clientFields = {
  last_name: name,
  first_name: name,
  company_name: name,
  siret: siretSchema,
  email: emailSchema,
  phone: phoneSchema,
  address: addressSchema,
  birth_date: birthDateSchema,
} satisfies Record<ClientContactField, z.ZodType>;

interface ClientTypeFields {
  type: ClientType;
  last_name?: string | null;
  company_name?: string | null;
  birth_date?: string | null;
}

/**
 * The rules of a client's type, checked on a new client and on the client a PATCH would leave:
 * a person has a last_name; a company has a company_name and no birth_date.
 */
export function clientTypeProblems(client: ClientTypeFields): { field: ClientContactField; message: string }[] {
  const problems: { field: ClientContactField; message: string }[] = [];
  if (client.type === 'person' && !client.last_name) problems.push({ field: 'last_name', message: 'last_name is required for a person' });
  if (client.type === 'company' && !client.company_name)
    problems.push({ field: 'company_name', message: 'company_name is required for a company' });
  if (client.type === 'company' && client.birth_date) problems.push({ field: 'birth_date', message: 'a company has no birth_date' });
  return problems;
}

export const createClientBody = z
  .strictObject({
    type: z.enum(CLIENT_TYPES).default('person'),
    last_name: clientFields.last_name.optional(),
    first_name: clientFields.first_name.optional(),
    company_name: clientFields.company_name.optional(),
    siret: clientFields.siret.optional(),
    email: clientFields.email.optional(),
    phone: clientFields.phone.optional(),
    address: clientFields.address.optional(),
    birth_date: clientFields.birth_date.optional(),
  })
  .superRefine((c, ctx) => {
    for (const { field, message } of clientTypeProblems(c)) ctx.addIssue({ code: 'custom', path: [field], message });
  })
  .meta({ id: 'CreateClient' });
export type CreateClientInput = z.output<typeof createClientBody>;

export const clientSchema = z
  .object({
    id: z.uuid().describe('Same as client_id.'),
    client_id: z.uuid(),
    type: z.enum(CLIENT_TYPES),
    last_name: nullableString,
    first_name: nullableString,
    company_name: nullableString,
    siret: nullableString,
    email: nullableString,
    phone: nullableString,
    address: z.object({ line1: z.string(), line2: nullableString, postcode: z.string(), city: z.string(), country: z.string() }).nullable(),
    birth_date: nullableString.describe('YYYY-MM-DD'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Client' });
export type Client = z.infer<typeof clientSchema>;

/** A PATCH must name at least one contact field. */
export function changesSomeContactField(patch: Partial<Record<ClientContactField, unknown>>): boolean {
  return CLIENT_CONTACT_FIELDS.some((field) => patch[field] !== undefined);
}

export const updateClientBody = z
  .strictObject({
    last_name: clientFields.last_name.nullable().optional(),
    first_name: clientFields.first_name.nullable().optional(),
    company_name: clientFields.company_name.nullable().optional(),
    siret: clientFields.siret.nullable().optional(),
    email: clientFields.email.nullable().optional(),
    phone: clientFields.phone.nullable().optional(),
    address: clientFields.address.nullable().optional().describe('Replaced whole (line2 and country as at creation), or null to clear it.'),
    birth_date: clientFields.birth_date.nullable().optional(),
  })
  .refine(changesSomeContactField, 'give at least one field to change')
  .meta({
    id: 'UpdateClient',
    description:
      'Any of the contact fields, validated as at creation; the fields not given stay, null clears one. ' +
      'The type never changes, and its rules hold after the change: a person keeps a last_name, a company keeps a company_name and has no birth_date.',
  });
export type UpdateClientInput = z.output<typeof updateClientBody>;

/** What an erasure leaves to say: which client, and when. The client.erased event's data and the erase_client tool's answer. */
export const clientErasureSchema = z.object({
  client_id: z.uuid(),
  erased_at: z.iso.datetime().describe('When the personal data was erased (the first erasure, if asked again).'),
});
export type ClientErasure = z.infer<typeof clientErasureSchema>;
