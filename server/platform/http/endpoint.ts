import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler } from 'fastify';
import type { z } from 'zod';
import { endpointPath, REPLAYED_SECRET_WARNING, type AuthKind, type Endpoint } from '../../../shared/endpoint.js';
import {
  idempotencyKeySchema,
  requestHash,
  type IdempotentRequest,
  type OperationResponse,
  type StoredResponse,
} from '../../idempotency/service.js';
import { ApiError } from '../../errors.js';
import { toValidationIssues, validationError } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract line this route implements; the auth plugin reads its auth kind and scope. */
    endpoint?: Endpoint;
  }
}

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

/** A route that reads its own body and query gets them unchecked. */
type Checked<E extends Endpoint, T> = E['validatedBy'] extends 'handler' ? unknown : Infer<T>;

/** A binary body (bodyEncoding 'binary') reaches the handler as the raw bytes. */
type BodyOf<E extends Endpoint> = E['bodyEncoding'] extends 'binary' ? Buffer : Checked<E, E['body']>;

type EndpointRequest<E extends Endpoint> = FastifyRequest<{
  Body: BodyOf<E>;
  Querystring: Checked<E, E['query']>;
  Params: Infer<E['params']>;
}>;

/** The body of any response the contract declares with a JSON schema for this endpoint. */
type ResponseBody<E extends Endpoint> = {
  [S in keyof E['responses']]: E['responses'][S] extends { schema: z.ZodType } ? z.input<E['responses'][S]['schema']> : never;
}[keyof E['responses']];

const RESULT = Symbol('endpoint result');

/** An answer with a status (and headers) of the handler's choice; a plain body is answered with 200. */
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
 * What a handler may return: a body its contract declares (checked at compile time), the same
 * with a status of its choice, or the reply it sent itself (a redirect, a page, a file, a 204).
 */
type Answer<E extends Endpoint> = ResponseBody<E> | EndpointResult<ResponseBody<E>> | FastifyReply;
export type EndpointHandler<E extends Endpoint> = (request: EndpointRequest<E>, reply: FastifyReply) => Answer<E> | Promise<Answer<E>>;

/**
 * A POST handler of the API (an API key's call, idempotent with an Idempotency-Key). It returns
 * what to answer instead of sending it: with an Idempotency-Key, its work and the stored response
 * commit in one transaction, so it must be synchronous (SQLite's transactions are); one that must
 * await is registered with `{ asynchronous: true }`.
 */
export type PostHandler<E extends Endpoint> = (request: EndpointRequest<E>) => ResponseBody<E> | EndpointResult<ResponseBody<E>>;
export type AsyncPostHandler<E extends Endpoint> = (
  request: EndpointRequest<E>,
) => Promise<ResponseBody<E> | EndpointResult<ResponseBody<E>>>;

type IdempotentEndpoint = Endpoint & { method: 'POST'; auth: 'api_key' };
type OtherEndpoint = Endpoint & ({ method: Exclude<Endpoint['method'], 'POST'> } | { auth: Exclude<AuthKind, 'api_key'> });

/** A check of its own that runs before the body is read (first-run setup's "this machine only"); a body limit of its own. */
export interface EndpointOptions {
  onRequest?: onRequestHookHandler;
  /** Bytes; the app's limit when absent. A binary body (a PDF) may need more than JSON does. */
  bodyLimit?: number;
}

/** /opportunities/{id} → /opportunities/:id; a trailing {rest*} → * (the rest of the URL). */
function toFastifyPath(path: string): string {
  return path.replace(/\{[^}]+\*\}$/, '*').replace(/\{([^}]+)\}/g, ':$1');
}

function endpointUrl(endpoint: Endpoint): string {
  return toFastifyPath(endpointPath(endpoint));
}

const FORM_TYPE = 'application/x-www-form-urlencoded';
export const BINARY_TYPE = 'application/octet-stream';

function routeSchema(endpoint: Endpoint): FastifySchema {
  const schema: FastifySchema = {};
  if (endpoint.params) schema.params = endpoint.params;
  if (endpoint.validatedBy === 'handler') return schema;
  if (endpoint.body) schema.body = endpoint.body;
  if (endpoint.query) schema.querystring = endpoint.query;
  return schema;
}

function requireBinaryBody(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (Buffer.isBuffer(request.body)) return done();
  done(new ApiError('unsupported_media_type', `Send the body as ${BINARY_TYPE}.`));
}

/** Answers what a handler returned: a body (200), a body with its status, or the reply it sent. */
function settle(reply: FastifyReply, result: unknown): unknown {
  return isEndpointResult(result) ? reply.code(result.status).headers(result.headers).send(result.body) : result;
}

/**
 * Registers a route from its contract line: the same zod schemas validate it and document it, and
 * its auth kind selects the check the auth plugin runs. POST routes of the API are idempotent with
 * an Idempotency-Key (see the idempotency plugin).
 */
export function registerEndpoint<E extends IdempotentEndpoint>(app: FastifyInstance, endpoint: E, handler: PostHandler<E>): void;
export function registerEndpoint<E extends IdempotentEndpoint>(
  app: FastifyInstance,
  endpoint: E,
  handler: AsyncPostHandler<E>,
  options: { asynchronous: true },
): void;
export function registerEndpoint<E extends OtherEndpoint>(
  app: FastifyInstance,
  endpoint: E,
  handler: EndpointHandler<E>,
  options?: EndpointOptions,
): void;
export function registerEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  typedHandler: (request: never, reply: never) => unknown,
  options: { asynchronous?: boolean } & EndpointOptions = {},
): void {
  if (endpoint.bodyEncoding === 'form' && !app.hasContentTypeParser(FORM_TYPE)) {
    throw new Error(`${endpoint.operationId} takes a form: register a ${FORM_TYPE} parser in its plugin first.`);
  }
  if (endpoint.bodyEncoding === 'binary' && !app.hasContentTypeParser(BINARY_TYPE)) {
    throw new Error(`${endpoint.operationId} takes raw bytes: register a ${BINARY_TYPE} parser (parseAs buffer) in its plugin first.`);
  }
  // The overloads checked the handler against this endpoint's request and response types. A POST
  // handler of the API never gets the reply: it must not send before its transaction commits.
  const handler = typedHandler as (request: FastifyRequest, reply?: FastifyReply) => unknown;
  const idempotent = endpoint.method === 'POST' && endpoint.auth === 'api_key';
  app.route({
    method: endpoint.method,
    url: endpointUrl(endpoint),
    schema: routeSchema(endpoint),
    config: { endpoint },
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    // Another parser (JSON) may have read the body: a binary route takes its own content type only.
    ...(endpoint.bodyEncoding === 'binary' ? { preValidation: requireBinaryBody } : {}),
    handler: !idempotent
      ? (request, reply) => {
          const result = handler(request, reply);
          return result instanceof Promise ? result.then((value) => settle(reply, value)) : settle(reply, result);
        }
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
    id: {
      cabinetId: request.apiKey.cabinetId,
      caller: `key:${request.apiKey.keyId}`,
      endpoint: `POST ${endpointUrl(endpoint)}`,
      key: key.data,
    },
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
  if (secrets.length === 0 || typeof answer.body !== 'object' || answer.body === null)
    return { response, stored: { ...response, headers: kept } };
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

function answerPost(
  endpoint: Endpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  handle: () => unknown,
): FastifyReply | Promise<FastifyReply> {
  const idempotent = idempotentRequest(endpoint, request);
  const run = (): OperationResponse => {
    const result = handle();
    if (result instanceof Promise)
      throw new Error(`The handler of ${endpoint.operationId} is asynchronous: register it with { asynchronous: true }.`);
    return toResponses(endpoint, result);
  };
  if (!idempotent) return send(reply, run().response, false);
  return request.server.idempotency
    .onceInGroup(idempotent, run)
    .then((outcome) => send(reply, outcome.response, outcome.kind === 'replay'));
}

async function answerAsyncPost(
  endpoint: Endpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  handle: () => Promise<unknown>,
): Promise<FastifyReply> {
  const idempotent = idempotentRequest(endpoint, request);
  const run = async (): Promise<OperationResponse> => toResponses(endpoint, await handle());
  if (!idempotent) return send(reply, (await run()).response, false);
  const outcome = await request.server.idempotency.onceAsync(idempotent, run);
  return send(reply, outcome.response, outcome.kind === 'replay');
}
