import { z } from 'zod';
import { dryRunResultSchema, enqueuedSchema, jobSchema, jobStatusSchema, PRODUCT_KINDS } from './automation.js';
import { codeSchema } from './devis.js';
import { cursorSchema, limitSchema } from './pagination.js';
import { validationIssueSchema } from './errors.js';

/**
 * The console's automation routes (session cookie + X-CSRF-Token, never an API key): insurers and
 * their credentials, pricing, jobs with a live feed, MFA answers. Bodies reuse the REST contract
 * of shared/automation.ts; only what the console needs on top is defined here.
 */
const CONSOLE_API = '/api/v1/console';

export const consolePaths = {
  insurers: `${CONSOLE_API}/insurers`,
  credentials: (code: string) => `${CONSOLE_API}/insurers/${encodeURIComponent(code)}/credentials`,
  testLogin: (code: string) => `${CONSOLE_API}/insurers/${encodeURIComponent(code)}/test-login`,
  products: `${CONSOLE_API}/products`,
  productSchema: (produit: string, compagnie: string) => `${CONSOLE_API}/products/${encodeURIComponent(produit)}/schema?compagnie=${encodeURIComponent(compagnie)}`,
  tarifications: `${CONSOLE_API}/tarifications`,
  jobs: `${CONSOLE_API}/jobs`,
  job: (id: string) => `${CONSOLE_API}/jobs/${id}`,
  cancel: (id: string) => `${CONSOLE_API}/jobs/${id}/cancel`,
  mfa: (id: string) => `${CONSOLE_API}/jobs/${id}/mfa`,
  mfaSeen: (id: string) => `${CONSOLE_API}/jobs/${id}/mfa/seen`,
  artifact: (id: string, name: 'screenshot.png' | 'trace.zip') => `${CONSOLE_API}/jobs/${id}/artifacts/${name}`,
  pdf: (devisId: string) => `${CONSOLE_API}/devis/${devisId}/pdf`,
  events: `${CONSOLE_API}/events`,
} as const;

const insurerCredentialsStateSchema = z.object({
  configured: z.boolean(),
  login: z.string().nullable(),
  updated_at: z.iso.datetime().nullable(),
});

const consoleInsurerSchema = z.object({
  code: z.string(),
  name: z.string(),
  products: z.array(z.object({ code: z.string(), label: z.string(), kind: z.enum(PRODUCT_KINDS), cost_credits: z.int() })),
  /** Never the password. */
  credentials: insurerCredentialsStateSchema,
  /** Whether the robot can check a login alone ("Test login"). */
  can_test_login: z.boolean(),
});
export type ConsoleInsurer = z.infer<typeof consoleInsurerSchema>;

export const consoleInsurerListSchema = z.object({ data: z.array(consoleInsurerSchema) });

export const insurerCodeParams = z.object({ code: codeSchema });

export const setCredentialsBody = z.strictObject({
  login: z.string().trim().min(1, 'login must not be empty').max(200),
  password: z.string().min(1, 'password must not be empty').max(500),
  extra: z.record(z.string().max(100), z.string().max(500)).optional(),
});

export const credentialsSavedSchema = z.object({ compagnie: z.string(), login: z.string(), updated_at: z.iso.datetime() });

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

export const consoleEnqueuedSchema = enqueuedSchema;

/** A date (a whole UTC day) or an instant. */
const instantOrDate = z.union([z.iso.date(), z.iso.datetime({ offset: true })], { error: 'use a date (2026-01-31) or an ISO 8601 timestamp' });

export const consoleJobsQuery = z.object({
  status: jobStatusSchema.optional(),
  /** Created at or after (a date: from its start, UTC). */
  from: instantOrDate.optional(),
  /** Created before (a date: up to its end, UTC). */
  to: instantOrDate.optional(),
  cursor: cursorSchema.optional(),
  limit: limitSchema,
});

export const consoleJobPageSchema = z.object({
  data: z.array(jobSchema),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
  count: z.int(),
});

export const jobIdParams = z.object({ job_id: z.uuid({ error: 'job_id must be a UUID' }) });
export const artifactParams = jobIdParams.extend({ name: z.enum(['screenshot.png', 'trace.zip']) });
export const devisIdParams = z.object({ devis_id: z.uuid({ error: 'devis_id must be a UUID' }) });
export const mfaCodeBody = z.strictObject({ code: z.string().trim().min(1, 'type the code').max(32) });

/**
 * The live feed (GET /events, text/event-stream): `event: job` with a Job whenever one of the
 * cabinet's jobs changes; on connecting, every unfinished job, then `event: ready` with their ids
 * (a console drops what it showed for any other job, e.g. an MFA prompt answered meanwhile).
 */
export const JOB_EVENT = 'job';
export const READY_EVENT = 'ready';
export const readyEventSchema = z.object({ unfinished: z.array(z.uuid()) });

/** A job waits for a person's code: the MFA prompt shows it in every open console of the cabinet. */
export function waitsForCode(job: z.infer<typeof jobSchema>): boolean {
  return (job.status === 'mfa_required' || job.status === 'awaiting_mfa') && job.mfa !== null;
}
