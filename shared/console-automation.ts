import { z } from 'zod';
import {
  dryRunResultSchema,
  enqueueTarification,
  enqueuedSchema,
  jobArtifactNameSchema,
  jobSchema,
  jobStatusSchema,
  mfaAnswerSchema,
  tarificationRequestBody,
} from './automation.js';
import { getProductSchema as getPublicProductSchema, listProducts as listPublicProducts } from './products.js';
import { consoleErrorsOf, consoleTwin, defineEndpoint } from './endpoint.js';
import { cursorSchema, limitSchema } from './pagination.js';
import { validationIssueSchema } from './errors.js';
import { deleteInsurerCredentials, listInsurers, setInsurerCredentials, testInsurerLogin } from './console-insurers.js';

/**
 * The console's automation routes (session cookie + X-CSRF-Token, never an API key): insurers and
 * their credentials, pricing, jobs with a live feed, MFA answers. Bodies reuse the REST contract
 * of shared/automation.ts; only what the console needs on top is defined here.
 */
/** The dry run of part 2.4, plus what the console shows beside it. */
export const consoleDryRunSchema = dryRunResultSchema.extend({
  invalid_fields: z
    .array(validationIssueSchema.extend({ field: z.string() }))
    .describe('Problems other than missing fields, per dicData field.'),
  balance: z.int().describe('Credits in the wallet now.'),
});
export type ConsoleDryRun = z.infer<typeof consoleDryRunSchema>;

const consoleEnqueuedSchema = enqueuedSchema;

/** A date (a whole UTC day) or an instant. */
const instantOrDate = z.union([z.iso.date(), z.iso.datetime({ offset: true })], {
  error: 'use a date (2026-01-31) or an ISO 8601 timestamp',
});

const consoleJobsQuery = z.object({
  status: jobStatusSchema.optional(),
  /** The insured's or client's name (any part), or the start or the end of the job's or quote's id. */
  q: z.string().trim().min(1, 'type at least one character').max(100).optional(),
  /** Created at or after (a date: from its start, UTC). */
  from: instantOrDate.optional(),
  /** Created before (a date: up to its end, UTC). */
  to: instantOrDate.optional(),
  cursor: cursorSchema.optional(),
  limit: limitSchema,
});

/**
 * A job as the console shows it: the API's Job, plus who it is for and what it cost, so that a
 * broker tells rows apart without reading ids.
 */
export const consoleJobSchema = jobSchema
  .extend({
    insured: z.string().nullable().describe('The linked client’s name, else the insured named in dicData; null when neither says.'),
    product_label: z.string().describe('The product’s label at the insurer (its code when the insurer no longer offers it).'),
    insurer_name: z.string().describe('The insurer’s name (its code when unknown here).'),
    client_id: z.uuid().nullable().describe('The client of the quote this job prices, if any.'),
    elsewhere: z
      .boolean()
      .describe(
        'Enqueued on another computer of the cabinet (synced here): its robots run it, and only there can it be cancelled or given a code; this computer shows it as that one last synced it.',
      ),
    credits: z
      .object({
        cost: z.int().describe('What a run of this product costs.'),
        debited: z.int(),
        refunded: z.int(),
      })
      .describe('For a job another install ran: debited is the cost and refunded what its outcome gave back.'),
  })
  .meta({ id: 'ConsoleJob' });
export type ConsoleJob = z.infer<typeof consoleJobSchema>;

const jobStepSchema = z.object({
  at: z.iso.datetime(),
  status: jobStatusSchema,
  step: z.string(),
  percent: z.int(),
});

/** One job in full: its inputs and its steps (as seen by this install) besides the row. */
export const consoleJobDetailSchema = consoleJobSchema.extend({
  dicData: z.record(z.string(), z.unknown()).describe('The data the quote was priced with.'),
  steps: z.array(jobStepSchema).describe('Oldest first; empty for a job enqueued on another install.'),
  retryable: z.boolean().describe('Failed or cancelled: Retry makes a new job with the same data.'),
});
export type ConsoleJobDetail = z.infer<typeof consoleJobDetailSchema>;

export const consoleJobPageSchema = z.object({
  data: z.array(consoleJobSchema),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
  count: z.int(),
});

const jobIdParams = z.object({ job_id: z.uuid({ error: 'job_id must be a UUID' }) });
const artifactParams = jobIdParams.extend({ name: jobArtifactNameSchema });
const devisIdParams = z.object({ devis_id: z.uuid({ error: 'devis_id must be a UUID' }) });

/**
 * The live feed (GET /events, text/event-stream): `event: job` with a Job whenever one of the
 * cabinet's jobs changes; on connecting, every unfinished job, then `event: ready` with their ids
 * (a console drops what it showed for any other job, e.g. an MFA prompt answered meanwhile).
 */
export const JOB_EVENT = 'job';
export const READY_EVENT = 'ready';
export const readyEventSchema = z.object({ unfinished: z.array(z.uuid()) });

/** A job waits for a person's code: the MFA prompt shows it in every open console of the cabinet. */
export function waitsForCode(job: Pick<z.infer<typeof jobSchema>, 'status' | 'mfa'>): boolean {
  return (job.status === 'mfa_required' || job.status === 'awaiting_mfa') && job.mfa !== null;
}

// ---- Endpoints ----

const TAG = 'Console: automation';

// The console's paths are in English; the public API keeps the contract's French ones.
export const listConsoleProducts = defineEndpoint({
  ...consoleTwin(listPublicProducts, { operationId: 'consoleListProducts', tag: TAG, auth: 'console' }),
  path: '/products',
});
export const getConsoleProductSchema = defineEndpoint({
  ...consoleTwin(getPublicProductSchema, { operationId: 'consoleGetProductSchema', tag: TAG, auth: 'console' }),
  path: '/products/{code}/schema',
});

export const priceFromConsole = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/tarifications',
  operationId: 'consolePrice',
  summary: 'Price a quote, or check its data first (dry_run)',
  tag: TAG,
  auth: 'console',
  body: tarificationRequestBody,
  responses: {
    200: { description: 'dry_run: what is missing or invalid, the cost and the balance.', schema: consoleDryRunSchema },
    202: { description: 'Queued; Location is the job.', schema: consoleEnqueuedSchema, headers: { Location: 'The job’s console URL.' } },
  },
  // The public enqueue's refusals: the console prices through the same guards.
  errors: consoleErrorsOf(enqueueTarification),
});

export const listConsoleJobs = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/jobs',
  operationId: 'consoleListJobs',
  summary: 'The cabinet’s jobs, newest first',
  tag: TAG,
  auth: 'console',
  query: consoleJobsQuery,
  responses: { 200: { description: 'A page.', schema: consoleJobPageSchema } },
  errors: ['invalid_cursor'],
});

export const getConsoleJob = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/jobs/{job_id}',
  operationId: 'consoleGetJob',
  summary: 'A job',
  tag: TAG,
  auth: 'console',
  params: jobIdParams,
  responses: { 200: { description: 'The job, its inputs and its steps.', schema: consoleJobDetailSchema } },
  errors: ['not_found'],
});

export const retryConsoleJob = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/jobs/{job_id}/retry',
  operationId: 'consoleRetryJob',
  summary: 'Price a failed or cancelled job again: a new job with the same data (and its cost)',
  tag: TAG,
  auth: 'console',
  params: jobIdParams,
  responses: {
    202: {
      description: 'The new job is queued; Location is the job.',
      schema: consoleEnqueuedSchema,
      headers: { Location: 'The new job’s console URL.' },
    },
  },
  errors: [
    'not_found',
    'job_not_retryable',
    'unknown_product',
    'unknown_insurer',
    'api_rpa_temporarily_disabled',
    'rpa_circuit_open',
    'insurer_credentials_missing',
    'rpa_quota_exceeded',
    'rpa_replay_detected',
    'credits_exhausted',
  ],
});

export const cancelConsoleJob = defineEndpoint({
  ...getConsoleJob,
  method: 'POST',
  path: '/jobs/{job_id}/cancel',
  operationId: 'consoleCancelJob',
  summary: 'Cancel a job (its robot stops)',
  responses: { 200: { description: 'The job, cancelled.', schema: consoleJobSchema } },
  errors: ['not_found', 'job_not_cancellable', 'job_runs_elsewhere'],
});

export const answerConsoleMfa = defineEndpoint({
  ...getConsoleJob,
  method: 'POST',
  path: '/jobs/{job_id}/mfa',
  operationId: 'consoleAnswerMfa',
  summary: 'Answer the person’s step: a code, an approval, a captcha’s text, a question',
  body: mfaAnswerSchema,
  responses: { 200: { description: 'The job.', schema: consoleJobSchema } },
  errors: ['not_found', 'job_not_awaiting_mfa', 'mfa_answer_mismatch', 'job_runs_elsewhere'],
});

export const getConsoleMfaImage = defineEndpoint({
  ...getConsoleJob,
  path: '/jobs/{job_id}/mfa/image',
  operationId: 'consoleGetMfaImage',
  summary: 'The captcha image a waiting job shows',
  responses: { 200: { description: 'The image (PNG or JPEG).', contentType: 'application/octet-stream' } },
  errors: ['not_found'],
});

export const acknowledgeConsoleMfa = defineEndpoint({
  ...getConsoleJob,
  method: 'POST',
  path: '/jobs/{job_id}/mfa/seen',
  operationId: 'consoleAcknowledgeMfa',
  summary: 'A person saw the code prompt (mfa_required becomes awaiting_mfa)',
  responses: { 200: { description: 'The job.', schema: consoleJobSchema } },
  errors: ['not_found', 'job_runs_elsewhere'],
});

export const getConsoleJobArtifact = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/jobs/{job_id}/artifacts/{name}',
  operationId: 'consoleGetJobArtifact',
  summary: 'A failed job’s screenshot, trace or portal changes (admins: they show the client’s data)',
  tag: TAG,
  auth: 'console_admin',
  params: artifactParams,
  responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
  errors: ['not_found'],
});

export const getConsoleDevisPdf = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/devis/{devis_id}/pdf',
  operationId: 'consoleGetDevisPdf',
  summary: 'A quote’s PDF',
  tag: TAG,
  auth: 'console',
  params: devisIdParams,
  responses: { 200: { description: 'The PDF.', contentType: 'application/pdf' } },
  errors: ['not_found', 'pdf_not_available'],
});

export const streamJobEvents = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/events',
  operationId: 'consoleStreamJobEvents',
  summary: 'Live feed of the cabinet’s jobs (server-sent events)',
  description:
    '`event: job` with a ConsoleJob whenever one changes; on connecting, every unfinished job, then `event: ready` with their ids.',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'An endless text/event-stream.', contentType: 'text/event-stream' } },
  errors: [],
});

export const CONSOLE_AUTOMATION_ENDPOINTS = [
  listInsurers,
  setInsurerCredentials,
  deleteInsurerCredentials,
  testInsurerLogin,
  listConsoleProducts,
  getConsoleProductSchema,
  priceFromConsole,
  listConsoleJobs,
  getConsoleJob,
  retryConsoleJob,
  cancelConsoleJob,
  answerConsoleMfa,
  acknowledgeConsoleMfa,
  getConsoleMfaImage,
  getConsoleJobArtifact,
  getConsoleDevisPdf,
  streamJobEvents,
] as const;
