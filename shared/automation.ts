import { z } from 'zod';
import { codeSchema, dicDataSchema } from './devis.js';
import { defineEndpoint } from './endpoint.js';
import { idParam, listQueryBase, pageSchema } from './pagination.js';
import { IDEMPOTENCY_HEADER } from './crm-endpoints.js';

export const JOB_STATUSES = ['pending', 'running', 'mfa_required', 'awaiting_mfa', 'completed', 'partial', 'failed', 'cancelled'] as const;
export const jobStatusSchema = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof jobStatusSchema>;
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'partial', 'failed', 'cancelled'];
/** What a waiting job asks a person for (the adapter kit's HumanStep kinds). */
export const MFA_KINDS = ['otp', 'app_approval', 'captcha', 'question'] as const;
export type MfaKind = (typeof MFA_KINDS)[number];
/** A robot is on the job: it holds a lease and its insurer login. */
export const ACTIVE_STATUSES = ['running', 'mfa_required', 'awaiting_mfa'] as const satisfies readonly JobStatus[];
/** What a product does: a quote is priced, a routine acts on a policy (the adapter kit's ProductKind). */
export const PRODUCT_KINDS = ['quote', 'routine'] as const;

/** Part 2.3. */
export const tarificationRequestBody = z
  .strictObject({
    compagnie: codeSchema.describe('Insurer code.'),
    produit: codeSchema.describe('Product code.'),
    dicData: dicDataSchema,
    dry_run: z.boolean().optional().describe('true: validation only, no job, no cost.'),
    callback_webhook_id: z.uuid().optional().describe('A webhook subscription that receives this job’s terminal event.'),
    devis_id: z.uuid().optional().describe('Price this draft quote (made with POST /devis) instead of creating a new one.'),
    client_id: z.uuid().optional().describe('Link the new quote to this client (so that it can be signed).'),
  })
  .meta({ id: 'TarificationRequest' });
export type TarificationRequest = z.output<typeof tarificationRequestBody>;

/** Part 2.4, exactly. */
export const dryRunResultSchema = z
  .object({
    job_id: z.null(),
    status: z.literal('dry_run_ok'),
    validation: z.object({
      schema_ok: z.boolean(),
      missing_required_fields: z
        .array(z.string())
        .describe(
          'Every field of the product schema’s `required` list that dicData lacks (absent or undefined), whatever its type, in the schema’s order. Other problems make schema_ok false without a name here; a real enqueue lists them all.',
        ),
      quota: z.object({ remaining: z.int(), limit: z.int() }),
      credentials_configured: z.boolean(),
      would_cost_credits: z.int(),
    }),
    credits_consumed: z.literal(0),
  })
  .meta({ id: 'TarificationDryRun' });
export type DryRunResult = z.infer<typeof dryRunResultSchema>;

export const enqueuedSchema = z
  .object({ job_id: z.uuid(), status: z.literal('pending'), poll_url: z.string().describe('Path of GET /automation/jobs/{job_id}.') })
  .meta({ id: 'TarificationEnqueued' });

export const jobErrorSchema = z.object({
  code: z.string().describe('e.g. insurer_unavailable, risk_declined, mfa_timeout, worker_crashed, browser_unavailable.'),
  message: z.string(),
  technical: z
    .boolean()
    .describe(
      'true for technical failures (refunded), false for business refusals (not refunded, but for invalid_credentials: the portal refused the login, nothing was priced).',
    ),
  details: z
    .object({ step: z.string().describe('The robot step whose page was not the one its adapter expects.') })
    .nullable()
    .describe('For portal_changed: the robot step whose page changed; null otherwise.'),
});

/** Part 2.5, plus error, mfa and timestamps. */
export const jobSchema = z
  .object({
    job_id: z.uuid(),
    status: jobStatusSchema,
    compagnie: z.string(),
    produit: z.string(),
    devis_id: z.uuid().describe('The quote this job prices.'),
    result: z
      .object({
        tarif_eur: z.number(),
        suspens: z.string().nullable(),
        pdf_url: z.string().nullable().describe('Path of GET /devis/{devis_id}/pdf.'),
      })
      .nullable()
      .describe('Set when completed (pdf_url) or partial (no PDF).'),
    progress: z.object({ step: z.string(), percent: z.int().min(0).max(100) }),
    poll_url: z.string(),
    credits_consumed: z.int().describe('Debited minus refunded.'),
    error: jobErrorSchema.nullable(),
    mfa: z
      .object({
        kind: z
          .enum(MFA_KINDS)
          .describe(
            'What the person is asked for: otp (a one-time code: answer {code}), app_approval (approve in the insurer’s app, then answer {approved: true}), captcha (type the text of the image at image_url: {code}), question (answer {answer}: one of the choices’ values when there are choices).',
          ),
        challenge: z.string().describe('What to show the person: what the portal said, e.g. where the code was sent, or its question.'),
        channel: z
          .enum(['sms', 'email', 'app'])
          .nullable()
          .describe('otp: where the code was sent (app: an authenticator app); null otherwise.'),
        choices: z
          .array(z.object({ value: z.string(), label: z.string() }))
          .nullable()
          .describe('question: the answers to pick from (send the value); null for free text and the other kinds.'),
        image_url: z.string().nullable().describe('captcha: path of GET /automation/jobs/{job_id}/mfa/image; null otherwise.'),
        requested_at: z.iso.datetime(),
        expires_at: z.iso.datetime(),
      })
      .nullable()
      .describe('Set while the job waits for a person (a code, an approval, a captcha, an answer).'),
    environment: z.enum(['prod', 'test']).describe('The environment of the key that enqueued it.'),
    ran_on: z.string().describe('The insurer whose robot runs the job: sandbox for a test key, whatever compagnie says.'),
    adapter: z
      .object({
        code: z.string().describe('The insurer’s code (ran_on).'),
        version: z.string().describe('The version of its adapter package, e.g. 1.4.2.'),
      })
      .nullable()
      .describe(
        'The insurer adapter whose robot took the job, as it was when the robot started: a quote is traced to the code that priced it, even after the adapter was updated. null until a robot has taken the job.',
      ),
    artifacts: z
      .object({
        screenshot_url: z.string().nullable(),
        trace_url: z.string().nullable(),
        portal_changes_url: z
          .string()
          .nullable()
          .describe(
            'After a portal_changed failure: what the robot step expected of the page and what it found (JSON: step, expected, found, missing).',
          ),
      })
      .nullable()
      .describe(
        'After a robot failure: a screenshot and a Playwright trace (and, when the portal changed, what the step expected and found), kept 7 days; downloading them needs the scope automation:artifacts.',
      ),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof jobSchema>;

export const automationStatusSchema = z
  .object({
    robots_enabled: z
      .boolean()
      .describe('false while either switch below is on: new tarifications are refused (503) and queued jobs wait.'),
    kill_switch: z
      .object({ reason: z.string(), since: z.iso.datetime() })
      .nullable()
      .describe('The install-wide switch, set by the operator of this install (courtier robots disable, the desktop tray, the IT policy).'),
    cabinet_pause: z
      .object({ reason: z.string(), since: z.iso.datetime() })
      .nullable()
      .describe('This cabinet’s own pause, set by its administrators in the console; other cabinets are not affected.'),
    breakers: z.array(
      z.object({
        compagnie: z.string(),
        state: z.enum(['closed', 'open', 'half_open']),
        consecutive_failures: z.int(),
        open_until: z.iso.datetime().nullable(),
      }),
    ),
    quota: z.object({ limit: z.int(), remaining: z.int(), reset_at: z.iso.datetime().nullable() }),
    workers: z.object({ concurrency: z.int(), running: z.int() }),
  })
  .meta({ id: 'AutomationStatus' });
export type AutomationStatus = z.infer<typeof automationStatusSchema>;

export const enqueueTarification = defineEndpoint({
  method: 'POST',
  path: '/automation/tarifications',
  operationId: 'enqueueTarification',
  summary: 'Price a product at an insurer (a job), or check the request (dry_run)',
  description:
    'Checks, in order: body and dicData, the install-wide kill switch and the cabinet’s own pause, circuit breaker, credentials, hourly quota, replay guard, wallet. ' +
    'A real enqueue debits the credits and answers 202 with Location. dry_run answers 200 with the validation and costs nothing; ' +
    'problems in dicData are reported there rather than as a 400.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:enqueue',
  headers: IDEMPOTENCY_HEADER,
  body: tarificationRequestBody,
  responses: {
    202: { description: 'Enqueued; poll poll_url.', schema: enqueuedSchema, headers: { Location: 'The job’s poll_url.' } },
    200: {
      description: 'dry_run result, or the replay of an earlier enqueue with the same Idempotency-Key.',
      schema: z.union([dryRunResultSchema, enqueuedSchema]),
    },
  },
  errors: [
    'unknown_product',
    'unknown_insurer',
    'api_rpa_temporarily_disabled',
    'rpa_circuit_open',
    'insurer_credentials_missing',
    'rpa_quota_exceeded',
    'rpa_replay_detected',
    'credits_exhausted',
    'idempotency_conflict',
    'idempotency_key_reused',
  ],
});

const jobParams = idParam('job_id');

/** The files a failed robot run may leave beside its job. */
export const jobArtifactNameSchema = z.enum(['screenshot.png', 'trace.zip', 'portal-changed.json']);
export type JobArtifactName = z.infer<typeof jobArtifactNameSchema>;

export const getJob = defineEndpoint({
  method: 'GET',
  path: '/automation/jobs/{job_id}',
  operationId: 'getJob',
  summary: 'A tarification job, with live progress',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: jobParams,
  responses: { 200: { description: 'The job.', schema: jobSchema } },
  errors: ['not_found'],
});

export const listJobs = defineEndpoint({
  method: 'GET',
  path: '/automation/jobs',
  operationId: 'listJobs',
  summary: 'Tarification jobs, newest first',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  query: z.object({ ...listQueryBase, status: jobStatusSchema.optional() }),
  responses: { 200: { description: 'A page.', schema: pageSchema(jobSchema, 'JobPage') } },
  errors: ['invalid_cursor'],
});

export const cancelJob = defineEndpoint({
  method: 'POST',
  path: '/automation/jobs/{job_id}/cancel',
  operationId: 'cancelJob',
  summary: 'Cancel a job (refunded); a running robot is aborted',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:enqueue',
  params: jobParams,
  responses: { 200: { description: 'The job, cancelled (or already in its final state).', schema: jobSchema } },
  errors: ['not_found', 'job_not_cancellable', 'job_runs_elsewhere', 'idempotency_conflict', 'idempotency_key_reused'],
});

/** What a person answers a job waiting for them, by the kind of its mfa. */
export const mfaAnswerSchema = z
  .union([
    z.strictObject({
      code: z.string().trim().min(1, 'type the code').max(64).describe('otp: the code as received; captcha: the text of the image.'),
    }),
    z.strictObject({ approved: z.literal(true).describe('app_approval: the person approved it in the insurer’s app.') }),
    z.strictObject({ answer: z.string().trim().min(1, 'type an answer').max(500).describe('question: the text, or the chosen value.') }),
  ])
  .meta({ id: 'MfaAnswer' });
export type MfaAnswer = z.infer<typeof mfaAnswerSchema>;

export const answerMfa = defineEndpoint({
  method: 'POST',
  path: '/automation/jobs/{job_id}/mfa',
  operationId: 'answerJobMfa',
  summary: 'Answer the person’s step (a code, an approval, a captcha, a question), so that the robot goes on',
  description:
    'The body follows the job’s mfa.kind: {code} for otp and captcha, {approved: true} for app_approval, {answer} for question. ' +
    'Another shape, or an answer that is not one of the choices, is refused (400 mfa_answer_mismatch) and the job keeps waiting.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:enqueue',
  params: jobParams,
  body: mfaAnswerSchema,
  responses: { 200: { description: 'The job, resumed.', schema: jobSchema } },
  errors: [
    'not_found',
    'job_not_awaiting_mfa',
    'mfa_answer_mismatch',
    'job_runs_elsewhere',
    'idempotency_conflict',
    'idempotency_key_reused',
  ],
});

export const getMfaImage = defineEndpoint({
  method: 'GET',
  path: '/automation/jobs/{job_id}/mfa/image',
  operationId: 'getJobMfaImage',
  summary: 'The captcha image a waiting job shows the person',
  description: 'Only while the job waits for a captcha’s text (mfa.kind captcha); 404 otherwise.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  params: jobParams,
  responses: { 200: { description: 'The image (PNG or JPEG).', contentType: 'application/octet-stream' } },
  errors: ['not_found'],
});

export const getAutomationStatus = defineEndpoint({
  method: 'GET',
  path: '/automation/status',
  operationId: 'getAutomationStatus',
  summary: 'Kill switch, circuit breakers, quota and workers',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:read',
  responses: { 200: { description: 'The state of automation for this cabinet.', schema: automationStatusSchema } },
  errors: [],
});

export const getJobArtifact = defineEndpoint({
  method: 'GET',
  path: '/automation/jobs/{job_id}/artifacts/{name}',
  operationId: 'getJobArtifact',
  summary: 'The screenshot, Playwright trace or portal changes of a failed robot run',
  description:
    'name is screenshot.png, trace.zip (open the trace with npx playwright show-trace) or portal-changed.json (after a portal_changed failure: ' +
    'the step, the page address and landmarks it expected, those it found, and what is missing; no value typed and no text of the page). ' +
    'Kept 7 days after the job ended, then deleted. ' +
    'Needs the scope automation:artifacts (automation:read is not enough): they show the portal pages with the client’s data. ' +
    'The portal password is never in them: the trace is paused while a robot types a secret, and the screenshot masks password fields.',
  tag: 'Pricing',
  auth: 'api_key',
  scope: 'automation:artifacts',
  params: z.object({ job_id: z.uuid({ error: 'job_id must be a UUID' }), name: jobArtifactNameSchema }),
  responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' } },
  errors: ['not_found'],
});

/** How long a failed run's screenshot, trace and portal changes are kept after its job ended. */
export const ARTIFACT_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * How the console names a job in a sentence or a row: the last 8 characters of its id. Job ids are
 * time-ordered (UUID version 7): their start is the creation time, the same for the jobs of a
 * minute, and their end is random. The console's search finds a job by that end too.
 */
export function shortJobReference(jobId: string): string {
  return jobId.slice(-8);
}

export function pollUrl(jobId: string): string {
  return `/api/v1/public/automation/jobs/${jobId}`;
}
