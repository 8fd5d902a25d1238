import { expect } from 'vitest';
import { opportunitySchema, type Opportunity } from '../../shared/crm.js';
import { errorBodySchema, type ErrorBody, type ErrorCode } from '../../shared/errors.js';
import type { TestServer } from './server.js';

/** A small JSON client bound to one key, for tests that talk to the API as an integrator would. */
export function apiClient(server: TestServer, key: string) {
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await server.request(`/api/v1/public${path}`, {
      method,
      redirect: 'manual',
      headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json: unknown = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, body: json as Record<string, unknown> & { error?: string } };
  }
  return {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}

type ApiClient = ReturnType<typeof apiClient>;

/**
 * An answer already read: its status, its headers (fetch's Headers, or inject's plain object) and
 * its JSON body parsed; `text`, the raw body, is shown when the status is not the one expected.
 */
export interface ReadAnswer {
  status: number;
  headers: Headers | Record<string, unknown>;
  body: unknown;
  text?: string;
}

function headerOf(headers: ReadAnswer['headers'], name: string): unknown {
  return headers instanceof Headers ? headers.get(name) : headers[name];
}

/**
 * The answer is the error `code` with HTTP `status`, in the one error body shape
 * {error, message, details?, request_id}, whose request_id is the X-Request-Id header's. Returns
 * the error body (its message and details for the test to check further).
 */
export function expectError(answer: ReadAnswer, status: number, code: ErrorCode): ErrorBody {
  expect(answer.status, answer.text ?? JSON.stringify(answer.body)).toBe(status);
  const body = errorBodySchema.parse(answer.body);
  expect(body.error).toBe(code);
  expect(body.request_id).toBe(headerOf(answer.headers, 'x-request-id'));
  return body;
}

/** expectError on a fetch Response, whose body it reads. */
export async function expectErrorResponse(response: Response, status: number, code: ErrorCode): Promise<ErrorBody> {
  const text = await response.text();
  return expectError(
    { status: response.status, headers: response.headers, text, body: text === '' ? undefined : JSON.parse(text) },
    status,
    code,
  );
}

/** The error code of a JSON error answer, for a test that checks only that. */
export async function errorCodeOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: string }).error;
}

/**
 * Creates an opportunity through the public API: an auto lead for Dupont, with `fields` over it
 * (title, contact, tags…). Expects 201; returns the opportunity as the contract describes it.
 */
export async function createOpportunity(api: ApiClient, fields: Record<string, unknown> = {}): Promise<Opportunity> {
  const res = await api.post('/opportunities', { title: 'Auto', product: 'auto', contact: { last_name: 'Dupont' }, ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return opportunitySchema.strict().parse(res.body);
}

/** A response's JSON body, to parse with its schema or compare. */
export async function json(response: Response): Promise<unknown> {
  return response.json() as Promise<unknown>;
}
