import { z } from 'zod';
import { dryRunResultSchema, enqueuedSchema, getProductSchema as getPublicProductSchema, jobSchema, jobStatusSchema, listProducts as listPublicProducts, PRODUCT_KINDS, tarificationRequestBody } from './automation.js';
import { consoleTwin, defineEndpoint } from './endpoint.js';
import { codeSchema } from './devis.js';
import { cursorSchema, limitSchema } from './pagination.js';
import { validationIssueSchema } from './errors.js';

/**
 * The console's automation routes (session cookie + X-CSRF-Token, never an API key): insurers and
 * their credentials, pricing, jobs with a live feed, MFA answers. Bodies reuse the REST contract
 * of shared/automation.ts; only what the console needs on top is defined here.
 */
const insurerCredentialsStateSchema = z.object({
  configured: z.boolean(),
  login: z.string().nullable(),
  updated_at: z.iso.datetime().nullable(),
});

const lastLoginTestSchema = z.object({
  ok: z.boolean(),
  mfa_required: z.boolean(),
  code: z.string().nullable().describe('The robot’s error code when ok is false.'),
  message: z.string().nullable(),
  tested_at: z.iso.datetime(),
});
export type LastLoginTest = z.infer<typeof lastLoginTestSchema>;

const consoleInsurerSchema = z.object({
  code: z.string(),
  name: z.string(),
  products: z.array(z.object({ code: z.string(), label: z.string(), kind: z.enum(PRODUCT_KINDS), cost_credits: z.int() })),
  /** Never the password. */
  credentials: insurerCredentialsStateSchema,
  /** Whether the robot can check a login alone ("Test login"). */
  can_test_login: z.boolean(),
  last_login_test: lastLoginTestSchema.nullable().describe('The last "Test login" of the saved login; forgotten when the login changes.'),
});
export type ConsoleInsurer = z.infer<typeof consoleInsurerSchema>;

export const consoleInsurerListSchema = z.object({ data: z.array(consoleInsurerSchema) });

const insurerCodeParams = z.object({ code: codeSchema });

const setCredentialsBody = z.strictObject({
  login: z.string().trim().min(1, 'login must not be empty').max(200),
  password: z.string().min(1, 'password must not be empty').max(500),
  extra: z.record(z.string().max(100), z.string().max(500)).optional(),
});

const credentialsSavedSchema = z.object({ compagnie: z.string(), login: z.string(), updated_at: z.iso.datetime() });

/** POST /insurers/{code}/test-login: a 200 either way; ok false carries the robot's error code. */
export const testLoginResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), mfa_required: z.boolean() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type TestLoginResult = z.infer<typeof testLoginResultSchema>;

/** The dry run of part 2.4, plus what the console shows beside it. */
export const consoleDryRunSchema = dryRunResultSchema.extend({
  invalid_fields: z.array(validationIssueSchema.extend({ field: z.string() })).describe('Problems other than missing fields, per dicData field.'),
  balance: z.int().describe('Credits in the wallet now.'),
});
export type ConsoleDryRun = z.infer<typeof consoleDryRunSchema>;

const consoleEnqueuedSchema = enqueuedSchema;

/** A date (a whole UTC day) or an instant. */
const instantOrDate = z.union([z.iso.date(), z.iso.datetime({ offset: true })], { error: 'use a date (2026-01-31) or an ISO 8601 timestamp' });

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
const artifactParams = jobIdParams.extend({ name: z.enum(['screenshot.png', 'trace.zip']) });
const devisIdParams = z.object({ devis_id: z.uuid({ error: 'devis_id must be a UUID' }) });
const mfaCodeBody = z.strictObject({ code: z.string().trim().min(1, 'type the code').max(32) });

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

export const listInsurers = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/insurers',
  operationId: 'consoleListInsurers',
  summary: 'The insurers, their products, and whether this cabinet has portal credentials',
  tag: TAG,
  auth: 'console',
  responses: { 200: { description: 'Every insurer.', schema: consoleInsurerListSchema } },
  errors: [],
});

export const setInsurerCredentials = defineEndpoint({
  method: 'PUT',
  surface: 'console',
  path: '/insurers/{code}/credentials',
  operationId: 'consoleSetInsurerCredentials',
  summary: 'Set the cabinet’s portal login for an insurer',
  description: 'The password goes to the secret store and is never answered.',
  tag: TAG,
  auth: 'console_admin',
  params: insurerCodeParams,
  body: setCredentialsBody,
  responses: { 200: { description: 'Saved.', schema: credentialsSavedSchema } },
  errors: ['unknown_insurer'],
});

export const deleteInsurerCredentials = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/insurers/{code}/credentials',
  operationId: 'consoleDeleteInsurerCredentials',
  summary: 'Forget the cabinet’s portal login for an insurer',
  tag: TAG,
  auth: 'console_admin',
  params: insurerCodeParams,
  responses: { 204: { description: 'Forgotten.' } },
  errors: ['insurer_credentials_missing'],
});

export const testInsurerLogin = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/insurers/{code}/test-login',
  operationId: 'consoleTestInsurerLogin',
  summary: 'Have the robot sign in to the insurer’s portal with the saved login',
  tag: TAG,
  auth: 'console_admin',
  params: insurerCodeParams,
  responses: { 200: { description: 'ok, or the robot’s error code and message.', schema: testLoginResultSchema } },
  errors: ['unknown_insurer', 'insurer_credentials_missing', 'insurer_login_busy', 'api_rpa_temporarily_disabled'],
});

// The console's paths are in English; the public API keeps the contract's French ones.
export const listConsoleProducts = defineEndpoint({ ...consoleTwin(listPublicProducts, { operationId: 'consoleListProducts', tag: TAG, auth: 'console' }), path: '/products' });
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
  errors: ['unknown_product', 'unknown_insurer', 'api_rpa_temporarily_disabled', 'rpa_circuit_open', 'insurer_credentials_missing', 'rpa_quota_exceeded', 'rpa_replay_detected', 'credits_exhausted'],
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
  responses: { 202: { description: 'The new job is queued; Location is the job.', schema: consoleEnqueuedSchema, headers: { Location: 'The new job’s console URL.' } } },
  errors: ['not_found', 'job_not_retryable', 'unknown_product', 'unknown_insurer', 'api_rpa_temporarily_disabled', 'rpa_circuit_open', 'insurer_credentials_missing', 'rpa_quota_exceeded', 'rpa_replay_detected', 'credits_exhausted'],
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
  summary: 'Give the code the insurer sent',
  body: mfaCodeBody,
  responses: { 200: { description: 'The job.', schema: consoleJobSchema } },
  errors: ['not_found', 'job_not_awaiting_mfa', 'job_runs_elsewhere'],
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
  summary: 'A failed job’s screenshot or trace (admins: they show the client’s data)',
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
  description: '`event: job` with a ConsoleJob whenever one changes; on connecting, every unfinished job, then `event: ready` with their ids.',
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
  getConsoleJobArtifact,
  getConsoleDevisPdf,
  streamJobEvents,
] as const;
