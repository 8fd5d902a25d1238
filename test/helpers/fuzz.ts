/**
 * The apps the HTTP fuzz tests (test/integration/fuzz/) run against, and what they check every answer
 * with. Two apps on one SQLite file: the real app (startTestServer, also over TCP on `port`), and
 * bodyApp, built with buildApp on the same deps plus throwaway routes (a body route without auth,
 * routes with a scope, a query and a path parameter). Four keys of one cabinet: full, noscope (no
 * useful scope), revoked and iplocked. Webhook deliveries go to an in-process stub: nothing leaves
 * the machine.
 *
 * checkOutcome is the invariant: never a 5xx, and every 4xx is {error, message, details?,
 * request_id} whose `error` is a code of ERROR_STATUS answered with that code's status; call() sends
 * one request through inject and checks it so.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import { PUBLIC_API_PREFIX, defineEndpoint, type Endpoint } from '../../shared/endpoint.js';
import { ERROR_STATUS, errorBodySchema, type ErrorCode } from '../../shared/errors.js';
import { revokeApiKey } from '../../server/api-keys/service.js';
import { buildApp } from '../../server/app.js';
import type { Deps } from '../../server/deps.js';
import { ApiError } from '../../server/errors.js';
import { registerEndpoint, respond } from '../../server/platform/http/endpoint.js';
import { createLogger } from '../../server/platform/logging.js';
import { dispatcherEntry, type DispatcherInputs, type WebhookOptions } from '../../server/webhooks/dispatcher-thread.js';
import type { ReadAnswer } from './api.js';
import { startTestServer, type TestServer } from './server.js';

// ---------------------------------------------------------------------------------------------
// Throwaway routes for the second app (bodyApp)
// ---------------------------------------------------------------------------------------------

export const FUZZ_PREFIX = '/fuzz';
export const KNOWN_THING_ID = '0b0e8f6e-3c55-4f43-9d0a-6a4c1f8d2b11';

const thingSchema = z.object({
  name: z.string().trim().min(1).max(100),
  tags: z.array(z.string().max(20)).max(10).optional(),
  amount: z.number().finite().min(0).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

const echo = defineEndpoint({
  method: 'POST',
  path: `${FUZZ_PREFIX}/echo`,
  operationId: 'fuzzEcho',
  summary: 'Throwaway body route without auth',
  tag: 'Fuzz',
  auth: 'none',
  body: z.object({ name: z.string().max(100) }),
  responses: { 200: { description: 'ok', schema: z.object({ length: z.int() }) } },
  errors: [],
});

const createThing = defineEndpoint({
  method: 'POST',
  path: `${FUZZ_PREFIX}/things`,
  operationId: 'fuzzCreateThing',
  summary: 'Throwaway body route with a scope',
  tag: 'Fuzz',
  auth: 'api_key',
  scope: 'crm:write',
  query: z.object({ dry_run: z.enum(['true', 'false']).optional() }),
  body: thingSchema,
  responses: { 201: { description: 'created', schema: z.object({ name: z.string(), dry_run: z.boolean(), tag_count: z.int() }) } },
  errors: [],
});

const getThing = defineEndpoint({
  method: 'GET',
  path: `${FUZZ_PREFIX}/things/{id}`,
  operationId: 'fuzzGetThing',
  summary: 'Throwaway route with a path parameter and a query',
  tag: 'Fuzz',
  auth: 'api_key',
  scope: 'crm:read',
  params: z.object({ id: z.uuid() }),
  query: z.object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    expand: z.union([z.string().max(20), z.array(z.string().max(20)).max(3)]).optional(),
  }),
  responses: { 200: { description: 'ok', schema: z.object({ id: z.string(), limit: z.int() }) } },
  errors: ['not_found'],
});

const patchThing = defineEndpoint({
  method: 'PATCH',
  path: `${FUZZ_PREFIX}/things/{id}`,
  operationId: 'fuzzPatchThing',
  summary: 'Throwaway route with a path parameter and a body',
  tag: 'Fuzz',
  auth: 'api_key',
  scope: 'crm:write',
  params: z.object({ id: z.uuid() }),
  body: thingSchema.partial(),
  responses: { 200: { description: 'ok', schema: z.object({ id: z.string(), fields: z.int() }) } },
  errors: ['not_found'],
});

const deleteThing = defineEndpoint({
  method: 'DELETE',
  path: `${FUZZ_PREFIX}/things/{id}`,
  operationId: 'fuzzDeleteThing',
  summary: 'Throwaway DELETE with a path parameter',
  tag: 'Fuzz',
  auth: 'api_key',
  scope: 'crm:write',
  params: z.object({ id: z.uuid() }),
  responses: { 204: { description: 'gone' } },
  errors: ['not_found'],
});

export const FUZZ_ENDPOINTS: readonly Endpoint[] = [echo, createThing, getThing, patchThing, deleteThing];

function notFoundThing(id: string): ApiError {
  return new ApiError('not_found', `No thing with id ${id}.`);
}

/**
 * Webhooks never leave the process: every name resolves to a loopback address, which the target
 * guard refuses (private targets are not allowed here), so that a delivery ends at once as blocked.
 */
const FUZZ_HOSTS: NonNullable<DispatcherInputs['hosts']> = { '*': [{ address: '127.0.0.1', family: 4 }] };
export const WEBHOOKS: WebhookOptions = { entry: dispatcherEntry(), inputs: { hosts: FUZZ_HOSTS, noJitter: true } };

/** buildApp returns before ready(), so routes can still be added. Shares the test server's deps (same SQLite). */
async function buildAppWithBodyRoutes(deps: Deps): Promise<FastifyInstance> {
  const app = await buildApp(deps, { logger: createLogger({ level: 'silent' }), webhooks: WEBHOOKS });
  registerEndpoint(app, echo, (request) => ({ length: request.body.name.length }));
  registerEndpoint(app, createThing, (request) =>
    respond(201, { name: request.body.name, dry_run: request.query.dry_run === 'true', tag_count: request.body.tags?.length ?? 0 }),
  );
  registerEndpoint(app, getThing, (request) => {
    if (request.params.id !== KNOWN_THING_ID) throw notFoundThing(request.params.id);
    return { id: request.params.id, limit: request.query.limit ?? 10 };
  });
  registerEndpoint(app, patchThing, (request) => {
    if (request.params.id !== KNOWN_THING_ID) throw notFoundThing(request.params.id);
    return { id: request.params.id, fields: Object.keys(request.body).length };
  });
  registerEndpoint(app, deleteThing, (request, reply) => {
    if (request.params.id !== KNOWN_THING_ID) throw notFoundThing(request.params.id);
    return reply.code(204).send();
  });
  await app.ready();
  return app;
}

// ---------------------------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------------------------

export const ALLOWED_ORIGIN = 'http://allowed.example';

export type KeyName = 'full' | 'noscope' | 'revoked' | 'iplocked';

export let server: TestServer;
export let bodyApp: FastifyInstance;
export let port = 0;
export const keys: Record<KeyName, string> = { full: '', noscope: '', revoked: '', iplocked: '' };
/** A well-formed UUID that names nothing. */
export const ABSENT_ID = '7d1c2a9e-5b4f-4e8a-9c3d-2f6b8a1e0c47';

/** Both apps for the whole test file: started before its first test, closed after its last. */
export function useFuzzApps(): void {
  beforeAll(async () => {
    server = await startTestServer({
      // The limiter itself has its own example below; a high limit keeps the valid key useful in every run.
      config: { rateLimitPerMinute: 1_000_000, corsOrigins: [ALLOWED_ORIGIN] },
      webhooks: { hosts: FUZZ_HOSTS },
    });
    port = Number(new URL(server.url).port);
    const cabinetId = await server.createCabinet('Cabinet Fuzz');
    keys.full = server.createKey(cabinetId).key;
    keys.noscope = server.createKey(cabinetId, { name: 'no useful scope', scopes: ['webhooks:manage'] }).key;
    const revoked = server.createKey(cabinetId, { name: 'revoked' });
    revokeApiKey(server.deps, cabinetId, revoked.key_id);
    keys.revoked = revoked.key;
    keys.iplocked = server.createKey(cabinetId, { name: 'ip locked', ip_allowlist: ['10.20.30.40'] }).key;
    bodyApp = await buildAppWithBodyRoutes(server.deps);
  });
  afterAll(async () => {
    await bodyApp?.close();
    await server?.close();
  });
}

// ---------------------------------------------------------------------------------------------
// Checking an answer
// ---------------------------------------------------------------------------------------------

export interface Outcome {
  status: number;
  headers: IncomingHttpHeaders | Record<string, string | string[] | number | undefined>;
  body: string;
}

export function preview(value: string, max = 300): string {
  return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, max))}… (${value.length} chars)`;
}

export function describeExchange(method: string, url: string, headers: [string, string][], body: Buffer | null, outcome: Outcome): string {
  const headerLines = headers.map(([k, v]) => `    ${k}: ${preview(v, 120)}`).join('\n');
  return [
    `  request:  ${method} ${preview(url, 200)}`,
    headerLines,
    `    body: ${body === null ? '(none)' : preview(body.toString('utf8'), 200)}`,
    `  response: ${outcome.status}`,
    `    content-type: ${String(outcome.headers['content-type'])}`,
    `    body: ${preview(outcome.body, 500)}`,
  ].join('\n');
}

const ERROR_BODY_KEYS = new Set(['error', 'message', 'details', 'request_id']);

function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, value);
}

/** The invariant: never 5xx; every 4xx (but HEAD's, which have no body) is a well-formed error body. */
export function checkOutcome(method: string, outcome: Outcome, describe: () => string): void {
  const fail = (why: string): never => {
    throw new Error(`${why}\n${describe()}`);
  };
  if (outcome.status >= 500) return fail(`answered ${outcome.status}`);
  if (outcome.status < 400 || method === 'HEAD') return;

  let parsed: unknown;
  try {
    parsed = JSON.parse(outcome.body);
  } catch {
    return fail(`a ${outcome.status} whose body is not JSON`);
  }
  if (!String(outcome.headers['content-type']).startsWith('application/json'))
    return fail(`a ${outcome.status} that is not application/json`);
  const result = errorBodySchema.safeParse(parsed);
  if (!result.success) return fail(`a ${outcome.status} whose body is not {error, message, details?, request_id}: ${result.error.message}`);
  const body = result.data;
  const extra = Object.keys(parsed as object).filter((k) => !ERROR_BODY_KEYS.has(k));
  if (extra.length > 0) return fail(`a ${outcome.status} whose error body has extra keys ${extra.join(', ')}`);
  if (!isErrorCode(body.error)) return fail(`a ${outcome.status} with unknown error code ${body.error}`);
  if (ERROR_STATUS[body.error] !== outcome.status)
    return fail(`error ${body.error} should be ${ERROR_STATUS[body.error]}, was ${outcome.status}`);
  if (outcome.headers['x-request-id'] !== body.request_id) return fail('request_id differs from the X-Request-Id header');
  if (body.error === 'method_not_allowed' && !outcome.headers.allow) return fail('a 405 without Allow');
  if (body.error === 'rate_limited' && !outcome.headers['retry-after']) return fail('a 429 without Retry-After');
}

/** An answer of app.inject, already checked against the invariant: its raw text and its JSON body. */
interface Exchange extends ReadAnswer {
  headers: Outcome['headers'];
  text: string;
}

export async function call(
  app: FastifyInstance,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  payload?: string | Buffer,
): Promise<Exchange> {
  const allHeaders = { host: '127.0.0.1', ...headers };
  const response = await app.inject({ method: method as 'GET', url, headers: allHeaders, ...(payload === undefined ? {} : { payload }) });
  const outcome: Outcome = { status: response.statusCode, headers: response.headers, body: response.body };
  const body = payload === undefined ? null : Buffer.from(payload);
  checkOutcome(method, outcome, () => describeExchange(method, url, Object.entries(allHeaders), body, outcome));
  let json: unknown = null;
  try {
    json = JSON.parse(response.body);
  } catch {
    // HTML, PDF or empty: json stays null.
  }
  return { status: outcome.status, headers: outcome.headers, text: outcome.body, body: json };
}

export const ECHO_URL = `${PUBLIC_API_PREFIX}${FUZZ_PREFIX}/echo`;
export const THINGS_URL = `${PUBLIC_API_PREFIX}${FUZZ_PREFIX}/things`;
export const ME_URL = `${PUBLIC_API_PREFIX}/me`;
export const JSON_TYPE = { 'content-type': 'application/json' };
