import type { z } from 'zod';
import type { ErrorCode } from './errors.js';
import type { Scope } from './scopes.js';

/** Root of the public REST API (part 4.1). */
export const PUBLIC_API_PREFIX = '/api/v1/public';

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

interface EndpointResponse {
  description: string;
  /** JSON body schema; absent for responses without a JSON body (redirects, HTML). */
  schema?: z.ZodType;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * One line of the public contract: what the route takes, what it answers, which scope it needs.
 * Routes are registered from these, and the OpenAPI document is generated from them.
 */
export interface Endpoint {
  method: HttpMethod;
  /** Path below PUBLIC_API_PREFIX, OpenAPI style: /opportunities/{id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** api_key: X-API-Key or Bearer key required; none: open. */
  auth: 'api_key' | 'none';
  /** Scope the key needs; undefined with auth api_key means any valid key. */
  scope?: Scope;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Headers the route reads (documentation only), e.g. Idempotency-Key. */
  headers?: Record<string, { description: string; required: boolean }>;
  responses: Record<number, EndpointResponse>;
  /** Error codes specific to this route; the common ones (auth, validation, rate limit) are added by auth kind. */
  errors: readonly ErrorCode[];
  /**
   * Response fields that hold a secret shown once (a webhook's signing secret). They are never
   * kept for idempotent replays: a replay answers them as null, and its _warning says why.
   */
  secretsShownOnce?: readonly string[];
}

/** The _warning of a replayed response whose secret was shown once. */
export const REPLAYED_SECRET_WARNING =
  'This is a replay of an earlier response to the same Idempotency-Key. The secret was shown once, in that first response, and is not kept for replays (secret is null here); if it was lost, rotate the secret.';

export function defineEndpoint<const E extends Endpoint>(endpoint: E): E {
  return endpoint;
}

/** Error codes every route of an auth kind can answer, on top of its own. */
export const COMMON_ERRORS: Record<Endpoint['auth'], readonly ErrorCode[]> = {
  none: ['rate_limited', 'misdirected_request', 'origin_not_allowed'],
  api_key: [
    'missing_credentials',
    'invalid_api_key',
    'api_key_revoked',
    'api_key_expired',
    'ip_not_allowed',
    'insufficient_scope',
    'rate_limited',
    'misdirected_request',
    'origin_not_allowed',
  ],
};
