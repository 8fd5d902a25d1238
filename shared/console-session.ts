import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import { consoleSessionSchema, loginBodySchema } from './oauth.js';
import { initCabinetSchema } from './tenancy.js';

/**
 * The console's way in: sign-in, the session probe, sign-out, and first-run setup (the cabinet and
 * its first admin, from the machine that runs Courtier only).
 */
const TAG = 'Console';

// ---- First-run setup ----

export const setupStateSchema = z.object({
  needed: z.boolean().describe('No cabinet yet: the console opens on first-run setup.'),
  allowed_here: z.boolean().describe('Whether this client may do the setup: only a browser on the machine that runs Courtier may.'),
});

const setupBodySchema = initCabinetSchema;

export const setupResponseSchema = z.object({ session: consoleSessionSchema, redirect_to: z.string() });

/** What the console asks on opening: signed in or not, a 200 either way (a 401 would be logged by the browser as an error). */
const sessionProbeSchema = z.discriminatedUnion('signed_in', [
  z.object({ signed_in: z.literal(false) }),
  consoleSessionSchema.extend({ signed_in: z.literal(true) }),
]);

export const signIn = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/session',
  operationId: 'consoleSignIn',
  summary: 'Sign in to the console',
  description:
    'Sets the HttpOnly session cookie and the CSRF cookie the console copies into X-CSRF-Token. return_to is followed only when it is a path on this origin.',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  body: loginBodySchema,
  responses: { 200: { description: 'Signed in.', schema: setupResponseSchema } },
  errors: ['invalid_credentials', 'cabinet_choice_required', 'too_many_login_attempts'],
});

export const getSession = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/session',
  operationId: 'consoleGetSession',
  summary: 'The console session, if any',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'signed_in false, or the signed-in user and cabinet.', schema: sessionProbeSchema } },
  errors: [],
});

export const signOut = defineEndpoint({
  method: 'DELETE',
  surface: 'console',
  path: '/session',
  operationId: 'consoleSignOut',
  summary: 'Sign out',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 204: { description: 'Signed out; both cookies cleared.' } },
  errors: [],
});

export const getSetupState = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/setup',
  operationId: 'consoleGetSetupState',
  summary: 'Whether first-run setup is needed, and allowed from here',
  tag: TAG,
  auth: 'none',
  openOnLan: true,
  responses: { 200: { description: 'The setup state.', schema: setupStateSchema } },
  errors: [],
});

export const runSetup = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/setup',
  operationId: 'consoleRunSetup',
  summary: 'First-run setup: the cabinet and its first admin',
  description: 'Only from the machine that runs Courtier (the TCP peer decides). Signs the new admin in.',
  tag: TAG,
  auth: 'none',
  body: setupBodySchema,
  responses: { 201: { description: 'Set up and signed in.', schema: setupResponseSchema } },
  errors: ['setup_local_only', 'setup_already_done'],
});

export const CONSOLE_SESSION_ENDPOINTS = [signIn, getSession, signOut, getSetupState, runSetup] as const;
