import type { z } from 'zod';
import { pathTo, type Endpoint, type EndpointResponse } from '../../shared/endpoint.js';
import type { ErrorBody } from '../../shared/errors.js';
import { chooseLang } from './i18n.js';
import { errorSentence } from './messages.js';
import { reportUnreachable } from './reachability.js';

/**
 * A failed call's error: the service's error body, or one the console makes up when there is none
 * (network_error: no answer at all; unexpected_response: an answer that is not the contract's).
 * Those have no request_id when the server gave none. `error` is the stable code; `message` is the
 * sentence for a person in the console's language (messages.ts), never the service's English text.
 */
export type ApiError = Omit<ErrorBody, 'request_id'> & {
  request_id?: string;
  /** The service's own (English) message, for a page that shows it as a technical detail (sync's connect form). */
  server_message?: string;
};

export type ApiFailure = { ok: false; status: number; error: ApiError; headers: Headers | null };

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 205 | 206;

/** What a declared response carries: its schema's output, or nothing when it has no JSON body. */
type ResponseData<R> = R extends { schema: infer S extends z.ZodType } ? z.output<S> : undefined;

/** One successful answer per 2xx status the endpoint declares, so that `status` tells them apart. */
type CallSuccess<E extends Endpoint> = {
  [S in keyof E['responses'] & SuccessStatus]: { ok: true; status: S; data: ResponseData<E['responses'][S]>; headers: Headers };
}[keyof E['responses'] & SuccessStatus];

/** The answer to `call(endpoint)`: an ApiResult of the endpoint's response bodies, narrowed by status. */
export type CallResult<E extends Endpoint> = CallSuccess<E> | ApiFailure;

/** What a part of the request takes: required when its schema requires something, else optional. */
type Part<K extends string, S> = S extends z.ZodType
  ? {} extends z.input<S>
    ? { [P in K]?: z.input<S> }
    : { [P in K]: z.input<S> }
  : { [P in K]?: never };

/** The path parameters, query and body of a call, typed from the endpoint's schemas (their input side). */
export type CallInput<E extends Endpoint> = Part<'params', E['params']> & Part<'query', E['query']> & Part<'body', E['body']>;

/** On the office LAN listener the server sets it with the __Host- prefix; elsewhere (loopback, a reverse proxy) without. */
const CSRF_COOKIES = ['__Host-courtier_csrf', 'courtier_csrf'] as const;

function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function isErrorBody(value: unknown): value is ApiError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.error === 'string' && typeof v.message === 'string';
}

/** Retry-After in seconds, when the service said how long to wait. */
function retryAfter(headers: Headers | null): number | undefined {
  const value = Number(headers?.get('Retry-After') ?? Number.NaN);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** pathTo without its per-endpoint typing: call() has checked the parts against the endpoint already. */
const urlOf = pathTo as (endpoint: Endpoint, params?: object, query?: object) => string;

/**
 * Calls one endpoint of the contract: its method, its URL built by pathTo (path parameters encoded,
 * the query string), the body as JSON, the session cookie, and X-CSRF-Token on anything but a read.
 * A successful body is checked against the schema the endpoint declares for the status answered; a
 * status it does not declare, or a body that does not match, is reported as unexpected_response.
 * Never throws: a network failure is status 0 with error "network_error".
 */
export async function call<E extends Endpoint>(
  endpoint: E,
  ...[input]: {} extends CallInput<E> ? [CallInput<E>?] : [CallInput<E>]
): Promise<CallResult<E>> {
  const { params, query, body } = (input ?? {}) as { params?: object; query?: object; body?: unknown };
  const lang = chooseLang();
  /** The failure as a person reads it: the code and details kept, the message in the console's words. */
  const failure = (status: number, error: ApiError, headers: Headers | null): ApiFailure => ({
    ok: false,
    status,
    error: { ...error, message: errorSentence(error, lang, retryAfter(headers)) },
    headers,
  });
  const method = endpoint.method;
  const headers: Record<string, string> = { Accept: 'application/json' };
  // The server binds this token to the session; a page on another site cannot read the cookie.
  if (method !== 'GET') headers['X-CSRF-Token'] = CSRF_COOKIES.map(readCookie).find((value) => value !== undefined) ?? '';
  const init: RequestInit = { method, credentials: 'same-origin', headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await fetch(urlOf(endpoint, params, query), init);
  } catch {
    reportUnreachable();
    return failure(0, { error: 'network_error', message: 'network_error' }, null);
  }
  let json: unknown;
  try {
    const text = await response.text();
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const requestId = response.headers.get('X-Request-Id') ?? undefined;
  const unexpected = failure(
    response.status,
    {
      error: 'unexpected_response',
      message: `unexpected response ${response.status}`,
      ...(requestId !== undefined ? { request_id: requestId } : {}),
    },
    response.headers,
  );
  if (!response.ok)
    return isErrorBody(json) ? failure(response.status, { ...json, server_message: json.message }, response.headers) : unexpected;
  const declared = (endpoint.responses as Record<number, EndpointResponse | undefined>)[response.status];
  if (!declared) return unexpected;
  let data: unknown;
  if (declared.schema) {
    const parsed = declared.schema.safeParse(json);
    if (!parsed.success) return unexpected;
    data = parsed.data;
  }
  return { ok: true, status: response.status, data, headers: response.headers } as CallResult<E>;
}

/** The login page, coming back to `returnTo` (a path on this origin) once signed in. */
export function loginUrl(returnTo?: string): string {
  return returnTo ? `/console/login?return_to=${encodeURIComponent(returnTo)}` : '/console/login';
}
