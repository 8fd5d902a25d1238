import { z } from 'zod';
import { IDEMPOTENCY_HEADER } from './crm-endpoints.js';
import { devisDocumentSchema, offreSchema, signedLinkQuery } from './devis-documents.js';
import { defineEndpoint } from './endpoint.js';
import { idParam, listQueryBase, pageSchema } from './pagination.js';

export const DEVIS_STATUSES = ['draft', 'pricing', 'priced', 'failed', 'signed'] as const;
export const DEVIS_SORTS = ['-created_at', 'tarif_eur'] as const;
export type DevisSort = (typeof DEVIS_SORTS)[number];
export const devisStatusSchema = z.enum(DEVIS_STATUSES);
export type DevisStatus = z.infer<typeof devisStatusSchema>;

/** Insurer and product codes: lower-case letters, digits, dashes and underscores. */
export const CODE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,49}$/;

export const codeSchema = z.string().trim().toLowerCase().regex(CODE_PATTERN, 'must be a code such as sandbox or auto');

/** A product's data is a form's worth of answers; the cap keeps every record within what sync carries. */
const MAX_DIC_DATA_BYTES = 32 * 1024;

export const dicDataSchema = z
  .record(z.string(), z.unknown())
  .refine(
    (data) => new TextEncoder().encode(JSON.stringify(data)).length <= MAX_DIC_DATA_BYTES,
    `at most ${MAX_DIC_DATA_BYTES / 1024} KiB as JSON`,
  )
  .describe('Product data, at most 32 KiB as JSON; the keys a product needs are given by GET /produits-disponibles/{code}/schema.');

export const createDevisBody = z
  .strictObject({
    client_id: z.uuid(),
    compagnie: codeSchema.describe('Insurer code.'),
    produit: codeSchema.describe('Product code.'),
    opportunity_id: z.uuid().optional(),
    dicData: dicDataSchema.default({}),
  })
  .meta({ id: 'CreateDevis' });
export type CreateDevisInput = z.output<typeof createDevisBody>;

export const devisSchema = z
  .object({
    id: z.uuid().describe('Same as devis_id.'),
    devis_id: z.uuid(),
    status: devisStatusSchema.describe('draft → pricing → priced | failed; priced → signed.'),
    client_id: z.uuid().nullable().describe('null for a quote a tarification created without a client; such a quote cannot be signed.'),
    opportunity_id: z.uuid().nullable(),
    compagnie: z.string(),
    produit: z.string(),
    dicData: z.record(z.string(), z.unknown()),
    tarif_eur: z.number().nullable().describe('Premium in euros once priced.'),
    suspens: z.string().nullable().describe("The insurer's pending conditions, if any."),
    pdf_available: z.boolean(),
    pdf_url: z.string().nullable().describe('Path of GET /devis/{devis_id}/pdf when a PDF exists.'),
    offres: z
      .array(offreSchema)
      .nullable()
      .describe('Every formula the insurer offered, when its portal shows several (tarif_eur is the chosen one’s); null otherwise.'),
    documents: z
      .array(devisDocumentSchema)
      .describe('The other documents the insurer gave with the quote (general conditions, information document); often none.'),
    job_id: z.string().nullable().describe('The tarification job that priced it, if any.'),
    contract_id: z.uuid().nullable().describe('The contract created when the quote was signed.'),
    signed_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Devis' });
export type Devis = z.infer<typeof devisSchema>;

const devisParams = idParam('devis_id');

export const createDevis = defineEndpoint({
  method: 'POST',
  path: '/devis',
  operationId: 'createDevis',
  summary: 'Create a draft quote without pricing it',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:draft',
  headers: IDEMPOTENCY_HEADER,
  body: createDevisBody,
  responses: {
    201: { description: 'Created, status draft.', schema: devisSchema },
    200: { description: 'Replay of an earlier request with the same Idempotency-Key.', schema: devisSchema },
  },
  errors: ['idempotency_conflict', 'idempotency_key_reused'],
});

export const listDevis = defineEndpoint({
  method: 'GET',
  path: '/devis',
  operationId: 'listDevis',
  summary: 'List quotes, newest first',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:read',
  query: z.object({
    ...listQueryBase,
    status: devisStatusSchema.optional(),
    client_id: z.uuid().optional(),
    opportunity_id: z.uuid().optional(),
    sort: z
      .enum(DEVIS_SORTS)
      .default('-created_at')
      .describe(
        '-created_at: newest first (the default); tarif_eur: the lowest premium first, quotes without one last. A cursor is for the order it was made in.',
      ),
  }),
  responses: { 200: { description: 'A page.', schema: pageSchema(devisSchema, 'DevisPage') } },
  errors: ['invalid_cursor'],
});

export const getDevis = defineEndpoint({
  method: 'GET',
  path: '/devis/{devis_id}',
  operationId: 'getDevis',
  summary: 'Get a quote',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:read',
  params: devisParams,
  responses: { 200: { description: 'The quote.', schema: devisSchema } },
  errors: ['not_found'],
});

const signDevisBody = z
  .strictObject({ signed_at: z.iso.datetime({ offset: true }).optional().describe('When the client signed; defaults to now.') })
  .optional()
  .meta({ id: 'SignDevis' });

export const signDevis = defineEndpoint({
  method: 'POST',
  path: '/devis/{devis_id}/sign',
  operationId: 'signDevis',
  summary: 'Mark a priced quote as signed; it becomes a contract',
  description:
    'Only a priced quote can be signed. In one transaction: the quote becomes signed, a contract is created, devis.signed and ' +
    'contract.signed are emitted, and a linked opportunity that is still open moves to won (emitting its stage events). The body is optional.',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:draft',
  headers: IDEMPOTENCY_HEADER,
  params: devisParams,
  body: signDevisBody,
  responses: { 200: { description: 'The signed quote (also on an idempotent replay).', schema: devisSchema } },
  errors: ['not_found', 'invalid_devis_transition', 'idempotency_conflict', 'idempotency_key_reused'],
});

export const PDF_LINK_TTL_SECONDS = 300;

export const getDevisPdf = defineEndpoint({
  method: 'GET',
  path: '/devis/{devis_id}/pdf',
  operationId: 'getDevisPdf',
  summary: 'Download the quote PDF (redirect to a signed link)',
  description: 'Answers 302 to a signed URL valid 5 minutes that serves the PDF without an API key. Clients must follow redirects.',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:read',
  params: devisParams,
  responses: {
    302: { description: 'Redirect to the signed download URL.', headers: { Location: 'The signed URL (path from the host root).' } },
  },
  errors: ['not_found', 'pdf_not_available'],
});

export const downloadDevisPdf = defineEndpoint({
  method: 'GET',
  path: '/files/devis/{devis_id}.pdf',
  operationId: 'downloadDevisPdf',
  summary: 'The PDF behind a signed link',
  description: 'Reached through the redirect of GET /devis/{devis_id}/pdf; needs no API key, only a valid, unexpired signature.',
  tag: 'Quotes',
  auth: 'none',
  openOnLan: true,
  // Loose on purpose: whatever is wrong with a signed link (altered id, expiry or signature) is one 403 invalid_signature.
  params: z.object({ devis_id: z.string().max(100) }),
  query: signedLinkQuery,
  responses: { 200: { description: 'The PDF.', contentType: 'application/pdf' } },
  errors: ['invalid_signature', 'not_found'],
});
