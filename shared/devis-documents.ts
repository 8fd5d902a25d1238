import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/** The caps that keep a quote's offers and documents within what a record and sync carry. */
const MAX_OFFRES = 12;
const MAX_GARANTIES = 40;
export const MAX_DEVIS_DOCUMENTS = 5;
export const MAX_DEVIS_DOCUMENT_BYTES = 10 * 1024 * 1024;

const libelle = z.string().trim().min(1).max(200);
const euros = z.number().finite().min(0).max(100_000_000);

const garantieSchema = z
  .object({
    code: z.string().trim().min(1).max(60).describe('The insurer’s (or the adapter’s) code for the guarantee.'),
    libelle,
    incluse: z.boolean().describe('Included in this formula.'),
    plafond_eur: euros.nullable().describe('Its limit in euros, when the insurer states one.'),
  })
  .meta({ id: 'Garantie' });

export const offreSchema = z
  .object({
    formule: z.string().trim().min(1).max(60).describe('The insurer’s code for the formula.'),
    libelle,
    prime_annuelle_eur: euros,
    prime_mensuelle_eur: euros.nullable(),
    franchise_eur: euros.nullable().describe('The main deductible, in euros.'),
    garanties: z.array(garantieSchema).max(MAX_GARANTIES),
  })
  .meta({ id: 'Offre' });
export type Offre = z.infer<typeof offreSchema>;

/** An amount a robot may leave out: absent reads as null. */
const optionalEuros = euros.nullish().transform((value) => value ?? null);

/** The offers as a robot returns them (adapter API RobotOffer): the same bounds, optional amounts made null. */
export const robotOffresSchema = z
  .array(
    offreSchema.extend({
      prime_mensuelle_eur: optionalEuros,
      franchise_eur: optionalEuros,
      garanties: z.array(garantieSchema.extend({ plafond_eur: optionalEuros })).max(MAX_GARANTIES),
    }),
  )
  .max(MAX_OFFRES);

/** A signed download link's query: loose on purpose, whatever is wrong with it is one 403 invalid_signature. */
export const signedLinkQuery = z.object({
  cabinet_id: z.string().max(100).optional(),
  expires: z.string().max(20).optional().describe('Unix seconds after which the link is refused.'),
  signature: z.string().max(200).optional().describe('HMAC-SHA256 over the path and expires, hex.'),
});

export const DEVIS_DOCUMENT_KINDS = ['conditions', 'information', 'other'] as const;

export const devisDocumentSchema = z
  .object({
    position: z.int().min(1).max(MAX_DEVIS_DOCUMENTS).describe('Its number among the quote’s documents, from 1.'),
    kind: z
      .enum(DEVIS_DOCUMENT_KINDS)
      .describe('conditions: general or special conditions; information: the product information document (IPID); other.'),
    label: libelle.describe('Its title, as the insurer gives it.'),
    url: z.string().describe('Path of GET /devis/{devis_id}/documents/{position}.'),
  })
  .meta({ id: 'DevisDocument' });
export type DevisDocument = z.infer<typeof devisDocumentSchema>;

const documentParams = z.object({ devis_id: z.uuid(), position: z.coerce.number().int().min(1).max(MAX_DEVIS_DOCUMENTS) });

export const getDevisDocument = defineEndpoint({
  method: 'GET',
  path: '/devis/{devis_id}/documents/{position}',
  operationId: 'getDevisDocument',
  summary: 'Download one of the quote’s other documents (redirect to a signed link)',
  description:
    'The documents the insurer gave with the quote besides its PDF (general conditions, information document). Answers 302 to a ' +
    'signed URL valid 5 minutes, as GET /devis/{devis_id}/pdf does. Clients must follow redirects.',
  tag: 'Quotes',
  auth: 'api_key',
  scope: 'devis:read',
  params: documentParams,
  responses: {
    302: { description: 'Redirect to the signed download URL.', headers: { Location: 'The signed URL (path from the host root).' } },
  },
  errors: ['not_found', 'pdf_not_available'],
});

export const downloadDevisDocument = defineEndpoint({
  method: 'GET',
  path: '/files/devis/{devis_id}/documents/{position}.pdf',
  operationId: 'downloadDevisDocument',
  summary: 'A quote’s document behind a signed link',
  description:
    'Reached through the redirect of GET /devis/{devis_id}/documents/{position}; needs no API key, only a valid, unexpired signature.',
  tag: 'Quotes',
  auth: 'none',
  openOnLan: true,
  // Loose on purpose: whatever is wrong with a signed link is one 403 invalid_signature.
  params: z.object({ devis_id: z.string().max(100), position: z.string().max(10) }),
  query: signedLinkQuery,
  responses: { 200: { description: 'The PDF.', contentType: 'application/pdf' } },
  errors: ['invalid_signature', 'not_found'],
});
