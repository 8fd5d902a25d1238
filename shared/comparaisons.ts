import { z } from 'zod';
import { autoRiskSchema, homeRiskSchema } from '@courtier/adapter-kit';
import { jobErrorSchema, jobStatusSchema } from './automation.js';
import { codeSchema } from './devis.js';
import { offreSchema } from './devis-documents.js';
import { defineEndpoint } from './endpoint.js';
import { idParam, listQueryBase, pageSchema } from './pagination.js';

/** The lines of business a comparison prices: one common risk model each (the adapter kit's). */
export const RISK_LINE_CODES = ['auto', 'mrh'] as const;
const riskLineSchema = z.enum(RISK_LINE_CODES).describe('Line of business: auto (car) or mrh (home).');

const labels = z.object({ fr: z.string(), en: z.string() });

export const riskSchemaDocument = z
  .object({
    ligne: riskLineSchema,
    label: labels,
    json_schema: z
      .record(z.string(), z.unknown())
      .describe(
        'JSON Schema (2020-12) of the risk, in groups; each field has its label in title (French) and x-title-en, each choice its words in x-enum-labels and x-enum-labels-en.',
      ),
    example: z.record(z.string(), z.unknown()).describe('A risk that passes validation.'),
    garanties: z
      .array(z.object({ code: z.string(), label: labels }))
      .describe('The guarantees of the line: the codes offers of every insurer use, so that they line up.'),
    compagnies: z
      .array(z.object({ compagnie: z.string(), name: z.string(), produit: z.string() }))
      .describe('The insurers that price the line from this risk, each with the product that prices it.'),
  })
  .meta({ id: 'RiskSchema' });
export type RiskSchemaDocument = z.infer<typeof riskSchemaDocument>;

export const getRiskSchema = defineEndpoint({
  method: 'GET',
  path: '/automation/risques/{ligne}/schema',
  operationId: 'getRiskSchema',
  summary: 'The common risk model of a line of business',
  description:
    'One risk, the same for every insurer: describe the client’s car or home once, and each insurer that prices the line maps it to its own product.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: z.object({ ligne: z.string().describe('auto or mrh.') }),
  responses: { 200: { description: 'The risk model.', schema: riskSchemaDocument } },
  errors: ['unknown_line'],
});

/** An answer to an insurer's own question. */
const answerSchema = z.union([z.string().max(200), z.number().finite(), z.boolean()]);

const comparisonFields = {
  client_id: z.uuid().optional().describe('The client the quotes are for: each quote is attached to them (so that it can be signed).'),
  compagnies: z
    .array(codeSchema)
    .min(1)
    .max(16)
    .optional()
    .describe(
      'The insurers to ask. Default: every insurer that prices the line and that the key can run (the cabinet’s credentials for a live key, the demo insurers for a test key).',
    ),
  reponses: z
    .record(codeSchema, z.record(z.string(), answerSchema))
    .optional()
    .describe('Answers to the insurers’ own questions, by insurer then question code: {"tradition": {"puissance_fiscale": 5}}.'),
  dry_run: z.boolean().optional().describe('true: what would run, what it would cost and which answers are missing; nothing is enqueued.'),
};

export const comparisonRequestBody = z
  .discriminatedUnion('ligne', [
    z.strictObject({ ligne: z.literal('auto'), risque: autoRiskSchema, ...comparisonFields }),
    z.strictObject({ ligne: z.literal('mrh'), risque: homeRiskSchema, ...comparisonFields }),
  ])
  .meta({ id: 'ComparisonRequest' });
export type ComparisonRequest = z.output<typeof comparisonRequestBody>;

const questionSchema = z.object({
  code: z.string(),
  label: labels,
  type: z.enum(['text', 'integer', 'number', 'boolean', 'choice']),
  choices: z.array(z.object({ value: z.string(), label: labels })).nullable(),
});

/** Why an insurer was left out of a comparison that asked every insurer. */
export const leftOutSchema = z.object({
  compagnie: z.string(),
  raison: z
    .enum(['risk_declined', 'risk_not_accepted', 'insurer_credentials_missing', 'mapping_failed'])
    .describe(
      'risk_declined: the insurer does not insure such a risk; risk_not_accepted: a value is outside its limits; insurer_credentials_missing: the cabinet set no login for it; mapping_failed: its adapter failed to map the risk.',
    ),
  message: z.string(),
});

export const comparisonEnqueuedSchema = z
  .object({
    comparaison_id: z.uuid(),
    status: z.literal('pending'),
    jobs: z.array(z.object({ compagnie: z.string(), produit: z.string(), job_id: z.uuid() })),
    ecartees: z.array(leftOutSchema).describe('The insurers left out, and why.'),
    poll_url: z.string(),
    credits_consumed: z.int(),
  })
  .meta({ id: 'ComparisonEnqueued' });

export const comparisonDryRunSchema = z
  .object({
    comparaison_id: z.null(),
    status: z.literal('dry_run_ok'),
    compagnies: z.array(
      z.object({
        compagnie: z.string(),
        produit: z.string().nullable(),
        would_run: z.boolean().describe('true when nothing is missing for this insurer.'),
        cost_credits: z.int(),
        missing_answers: z.array(questionSchema).describe('Its own questions the risk and reponses leave open.'),
        raison: z.string().nullable().describe('Why it would not run, when it would not: the reasons of ecartees, or answers_missing.'),
        message: z.string().nullable(),
      }),
    ),
    would_cost_credits: z.int(),
    credits_consumed: z.literal(0),
  })
  .meta({ id: 'ComparisonDryRun' });
export type ComparisonDryRun = z.infer<typeof comparisonDryRunSchema>;

const COMPARISON_STATUSES = ['pending', 'running', 'completed', 'partial', 'failed'] as const;

export const comparisonSchema = z
  .object({
    comparaison_id: z.uuid(),
    ligne: riskLineSchema,
    client_id: z.uuid().nullable(),
    status: z
      .enum(COMPARISON_STATUSES)
      .describe(
        'pending: no robot started; running: some insurers are pricing; completed: every insurer priced; partial: every job ended, some without a price; failed: none priced.',
      ),
    resultats: z.array(
      z.object({
        compagnie: z.string(),
        produit: z.string(),
        job_id: z.uuid(),
        status: jobStatusSchema,
        devis_id: z.uuid(),
        tarif_eur: z.number().nullable(),
        offres: z
          .array(offreSchema)
          .describe('Every formula the insurer offered; one built from tarif_eur when its portal shows one price.'),
        pdf_url: z.string().nullable(),
        error: jobErrorSchema.nullable(),
      }),
    ),
    ecartees: z.array(leftOutSchema),
    poll_url: z.string(),
    credits_consumed: z.int().describe('Debited minus refunded, over its jobs.'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Comparison' });
export type Comparison = z.infer<typeof comparisonSchema>;

export const createComparison = defineEndpoint({
  method: 'POST',
  path: '/automation/comparaisons',
  operationId: 'createComparison',
  summary: 'Price one risk at every insurer at once',
  description:
    'Validates the risk once, maps it for each insurer and enqueues one tarification per insurer, all or none: each under the usual guards (robots paused, circuit breaker, credentials, hourly quota, replay guard, wallet). With dry_run, says what would run, its cost and the answers missing.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:enqueue',
  body: comparisonRequestBody,
  responses: {
    200: { description: 'Dry run: what would run.', schema: comparisonDryRunSchema },
    202: { description: 'Enqueued: one job per insurer.', schema: comparisonEnqueuedSchema },
  },
  errors: [
    'unknown_insurer',
    'line_not_priced',
    'risk_not_accepted',
    'answers_missing',
    'no_insurer_available',
    'insurer_credentials_missing',
    'credits_exhausted',
    'rpa_quota_exceeded',
    'rpa_circuit_open',
    'rpa_replay_detected',
    'api_rpa_temporarily_disabled',
    'idempotency_conflict',
  ],
});

export const getComparison = defineEndpoint({
  method: 'GET',
  path: '/automation/comparaisons/{comparaison_id}',
  operationId: 'getComparison',
  summary: 'A comparison: its status and each insurer’s offers',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: idParam('comparaison_id'),
  responses: { 200: { description: 'The comparison.', schema: comparisonSchema } },
  errors: ['not_found'],
});

export const listComparisons = defineEndpoint({
  method: 'GET',
  path: '/automation/comparaisons',
  operationId: 'listComparisons',
  summary: 'Comparisons, newest first',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  query: z.object({ ...listQueryBase, client_id: z.uuid().optional().describe('Only this client’s comparisons.') }),
  responses: { 200: { description: 'A page.', schema: pageSchema(comparisonSchema, 'ComparisonPage') } },
  errors: ['invalid_cursor'],
});

const conseilRequestBody = z
  .strictObject({
    compagnie: codeSchema.describe('The insurer recommended: one of the comparison’s that priced.'),
    formule: z
      .string()
      .trim()
      .min(1)
      .max(60)
      .optional()
      .describe('The formula recommended, one of that insurer’s offres; default: the one its quote was priced for.'),
    motif: z.string().trim().min(1).max(2000).describe('Why this offer: the reason given to the client, in French.'),
    besoins: z.string().trim().min(1).max(4000).describe('The client’s needs and demands as they expressed them, in French.'),
  })
  .meta({ id: 'ConseilRequest' });

export const conseilSchema = z
  .object({
    conseil_id: z.uuid(),
    comparaison_id: z.uuid(),
    client_id: z.uuid(),
    compagnie: z.string(),
    formule: z.string(),
    pdf_url: z.string().describe('Path of GET /automation/conseils/{conseil_id}/pdf.'),
    pdf_sha256: z.string().describe('SHA-256 of the PDF, as kept: the document handed to the client can be checked against it.'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Conseil' });
export type Conseil = z.infer<typeof conseilSchema>;

export const createConseil = defineEndpoint({
  method: 'POST',
  path: '/automation/comparaisons/{comparaison_id}/conseil',
  operationId: 'createConseil',
  summary: 'The advice document of a comparison (the duty to advise)',
  description:
    'Makes the PDF, in French, a broker gives the client: the cabinet, the client, their needs, every offer compared (and the insurers that could not price, named), ' +
    'the offer recommended and why, the date, and the evidence (each quote’s reference, the adapter version that priced it and when, a hash of the risk). ' +
    'Kept with its hash; its creation is in the audit log.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:enqueue',
  params: idParam('comparaison_id'),
  body: conseilRequestBody,
  responses: { 201: { description: 'The document.', schema: conseilSchema } },
  errors: ['not_found', 'comparison_not_finished', 'client_required', 'offer_not_priced', 'idempotency_conflict'],
});

export const getConseilPdf = defineEndpoint({
  method: 'GET',
  path: '/automation/conseils/{conseil_id}/pdf',
  operationId: 'getConseilPdf',
  summary: 'The PDF of an advice document',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: idParam('conseil_id'),
  responses: { 200: { description: 'The PDF, as kept.', contentType: 'application/pdf' } },
  errors: ['not_found'],
});

export const listConseils = defineEndpoint({
  method: 'GET',
  path: '/automation/conseils',
  operationId: 'listConseils',
  summary: 'Advice documents, newest first',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  query: z.object({ ...listQueryBase, client_id: z.uuid().optional().describe('Only this client’s documents.') }),
  responses: { 200: { description: 'A page.', schema: pageSchema(conseilSchema, 'ConseilPage') } },
  errors: ['invalid_cursor'],
});
