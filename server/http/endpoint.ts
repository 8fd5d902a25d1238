import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { z } from 'zod';
import { PUBLIC_API_PREFIX, REPLAYED_SECRET_WARNING, type Endpoint } from '../../shared/endpoint.js';
import { idempotencyKeySchema, requestHash, type IdempotentRequest, type OperationResponse, type StoredResponse } from '../idempotency/service.js';
import { toValidationIssues, validationError } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract line this route implements; the auth plugin reads its auth kind and scope. */
    endpoint?: Endpoint;
  }
}

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

type EndpointRequest<E extends Endpoint> = FastifyRequest<{
  Body: Infer<E['body']>;
  Querystring: Infer<E['query']>;
  Params: Infer<E['params']>;
}>;

export type EndpointHandler<E extends Endpoint> = (request: EndpointRequest<E>, reply: FastifyReply) => unknown;

/** The body of any success response the contract declares for this endpoint. */
type SuccessBody<E extends Endpoint> = {
  [S in keyof E['responses']]: E['responses'][S] extends { schema: z.ZodType } ? z.input<E['responses'][S]['schema']> : never;
}[keyof E['responses']];

const RESULT = Symbol('endpoint result');

/** A POST handler's answer with a status (and headers) of its choice; a plain body is answered with 200. */
export interface EndpointResult<B = unknown> {
  readonly [RESULT]: true;
  status: number;
  body: B;
  headers: Record<string, string>;
}

export function respond<B>(status: number, body: B, headers: Record<string, string> = {}): EndpointResult<B> {
  return { [RESULT]: true, status, body, headers };
}

function isEndpointResult(value: unknown): value is EndpointResult {
  return typeof value === 'object' && value !== null && RESULT in value;
}

/**
 * A POST handler. It returns what to answer instead of sending it: with an Idempotency-Key, its
 * work and the stored response commit in one transaction, so it must be synchronous (SQLite's
 * transactions are); one that must await is registered with `{ asynchronous: true }`.
 */
export type PostHandler<E extends Endpoint> = (request: EndpointRequest<E>) => SuccessBody<E> | EndpointResult<SuccessBody<E>>;
export type AsyncPostHandler<E extends Endpoint> = (request: EndpointRequest<E>) => Promise<SuccessBody<E> | EndpointResult<SuccessBody<E>>>;

type PostEndpoint = Endpoint & { method: 'POST' };
type OtherEndpoint = Endpoint & { method: Exclude<Endpoint['method'], 'POST'> };

/** /opportunities/{id} → /opportunities/:id */
function toFastifyPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

function endpointUrl(endpoint: Endpoint): string {
  return PUBLIC_API_PREFIX + toFastifyPath(endpoint.path);
}

function routeSchema(endpoint: Endpoint): FastifySchema {
  const schema: FastifySchema = {};
  if (endpoint.body) schema.body = endpoint.body;
  if (endpoint.query) schema.querystring = endpoint.query;
  if (endpoint.params) schema.params = endpoint.params;
  return schema;
}

/**
 * Registers a route from its contract line: the same zod schemas validate it and document it.
 * POST routes of the API are idempotent with an Idempotency-Key (see the idempotency plugin).
 */
export function registerEndpoint<E extends PostEndpoint>(app: FastifyInstance, endpoint: E, handler: PostHandler<E>): void;
export function registerEndpoint<E extends PostEndpoint>(app: FastifyInstance, endpoint: E, handler: AsyncPostHandler<E>, options: { asynchronous: true }): void;
export function registerEndpoint<E extends OtherEndpoint>(app: FastifyInstance, endpoint: E, handler: EndpointHandler<E>): void;
export function registerEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  typedHandler: (request: never, reply: never) => unknown,
  options: { asynchronous?: boolean } = {},
): void {
  // The overloads checked the handler against this endpoint's request and response types. A POST
  // handler never gets the reply: it must not send before its transaction commits.
  const handler = typedHandler as (request: FastifyRequest, reply?: FastifyReply) => unknown;
  app.route({
    method: endpoint.method,
    url: endpointUrl(endpoint),
    schema: routeSchema(endpoint),
    config: { endpoint },
    handler:
      endpoint.method !== 'POST'
        ? handler
        : options.asynchronous
          ? (request, reply) => answerAsyncPost(endpoint, request, reply, () => handler(request) as Promise<unknown>)
          : (request, reply) => answerPost(endpoint, request, reply, () => handler(request)),
  });
}

const REPLAYED_HEADERS = ['content-type', 'location'];
const JSON_TYPE = 'application/json; charset=utf-8';

/** The request's Idempotency-Key, scoped to its caller and endpoint; null without one. */
function idempotentRequest(endpoint: Endpoint, request: FastifyRequest): IdempotentRequest | null {
  const header = request.headers['idempotency-key'];
  if (header === undefined || !request.apiKey) return null;
  const key = idempotencyKeySchema.safeParse(header);
  if (!key.success) throw validationError(toValidationIssues(key.error, 'header.Idempotency-Key'));
  return {
    id: { cabinetId: request.apiKey.cabinetId, caller: `key:${request.apiKey.keyId}`, endpoint: `POST ${endpointUrl(endpoint)}`, key: key.data },
    requestHash: requestHash({ params: request.params, body: request.body }),
  };
}

/**
 * The handler's answer as sent now and as stored for replays: fields holding a secret shown once
 * are null in the stored copy, with a warning that says why.
 */
function toResponses(endpoint: Endpoint, result: unknown): OperationResponse {
  const answer = isEndpointResult(result) ? result : respond(200, result);
  const headers = { 'content-type': JSON_TYPE, ...lowerCaseKeys(answer.headers) };
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => REPLAYED_HEADERS.includes(name)));
  const response: StoredResponse = { statusCode: answer.status, body: JSON.stringify(answer.body), headers };
  const secrets = endpoint.secretsShownOnce ?? [];
  if (secrets.length === 0 || typeof answer.body !== 'object' || answer.body === null) return { response, stored: { ...response, headers: kept } };
  const redacted: Record<string, unknown> = { ...(answer.body as Record<string, unknown>) };
  for (const field of secrets) redacted[field] = null;
  redacted._warning = REPLAYED_SECRET_WARNING;
  return { response, stored: { statusCode: answer.status, body: JSON.stringify(redacted), headers: kept } };
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function send(reply: FastifyReply, response: StoredResponse, replayed: boolean): FastifyReply {
  reply.code(replayed ? 200 : response.statusCode).headers(response.headers);
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.send(response.body);
}

function answerPost(endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply, handle: () => unknown): FastifyReply {
  const idempotent = idempotentRequest(endpoint, request);
  const run = (): OperationResponse => {
    const result = handle();
    if (result instanceof Promise) throw new Error(`The handler of ${endpoint.operationId} is asynchronous: register it with { asynchronous: true }.`);
    return toResponses(endpoint, result);
  };
  if (!idempotent) return send(reply, run().response, false);
  const outcome = request.server.idempotency.once(idempotent, run);
  return send(reply, outcome.response, outcome.kind === 'replay');
}

async function answerAsyncPost(endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply, handle: () => Promise<unknown>): Promise<FastifyReply> {
  const idempotent = idempotentRequest(endpoint, request);
  const run = async (): Promise<OperationResponse> => toResponses(endpoint, await handle());
  if (!idempotent) return send(reply, (await run()).response, false);
  const outcome = await request.server.idempotency.onceAsync(idempotent, run);
  return send(reply, outcome.response, outcome.kind === 'replay');
}
