import { z } from 'zod';
import { PRODUCT_KINDS } from './automation.js';
import { defineEndpoint } from './endpoint.js';
import { codeSchema } from './devis.js';

/**
 * The console's insurer routes (session cookie + X-CSRF-Token): the insurers and their products,
 * and the cabinet's portal login for each, saved, forgotten or tried by the robot.
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

const adapterSignerSchema = z
  .object({
    by: z.string().describe('The key that signed the package: `ed25519:` and its fingerprint.'),
    trusted: z.boolean().describe('Whether the IT policy’s trustedKeys holds that key.'),
  })
  .describe('Who signed the adapter package.');

const consoleInsurerSchema = z.object({
  code: z.string(),
  name: z.string(),
  version: z.string().describe('The version of the adapter package that prices for this insurer; every job records it.'),
  source: z.enum(['built-in', 'installed']).describe('built-in: shipped with Courtier; installed: added with `courtier insurers install`.'),
  signed: adapterSignerSchema
    .nullable()
    .describe('Who signed the package; null when unsigned (a built-in insurer is vouched for by the application’s own signature).'),
  products: z.array(z.object({ code: z.string(), label: z.string(), kind: z.enum(PRODUCT_KINDS), cost_credits: z.int() })),
  /** Never the password. */
  credentials: insurerCredentialsStateSchema,
  demo_login: z
    .object({ login: z.string(), password: z.string() })
    .nullable()
    .describe(
      'A demo insurer’s public account (its portal is served by Courtier itself, and the README prints it); null for a real insurer.',
    ),
  /** Whether the robot can check a login alone ("Test login"). */
  can_test_login: z.boolean(),
  last_login_test: lastLoginTestSchema.nullable().describe('The last "Test login" of the saved login; forgotten when the login changes.'),
  portal_changed: z
    .object({
      at: z.iso.datetime().describe('When the job that found it ended.'),
      step: z.string().describe('The robot step whose page was not the one its adapter expects.'),
      job_id: z.uuid(),
    })
    .nullable()
    .describe(
      'The cabinet’s latest job on this insurer that failed because its portal changed (portal_changed), until a later job of the cabinet on it is priced; null otherwise. Its robot fails until its adapter is updated.',
    ),
});
export type ConsoleInsurer = z.infer<typeof consoleInsurerSchema>;

export const consoleInsurerListSchema = z.object({
  data: z.array(consoleInsurerSchema),
  problems: z
    .array(z.string())
    .describe('The insurer packages that did not load, one sentence each, for administrators; always empty for a broker.'),
});

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
