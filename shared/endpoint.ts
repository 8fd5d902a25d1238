import type { z } from 'zod';
import type { ErrorCode } from './errors.js';
import type { Scope } from './scopes.js';

/** Root of the public REST API (part 4.1). */
export const PUBLIC_API_PREFIX = '/api/v1/public';
/** Root of the console's own API (cookie session, never an API key). */
export const CONSOLE_API_PREFIX = '/api/v1/console';
/** Root of the sync hub's protocol (`courtier hub serve`, a process of its own). */
export const HUB_API_PREFIX = '/sync/v1';

/**
 * Where an endpoint's path hangs: below the public API, below the console API, or off the
 * service's root (OAuth, MCP, health, the console's pages, the sandbox insurer's portal).
 */
const SURFACE_PREFIXES = { public: PUBLIC_API_PREFIX, console: CONSOLE_API_PREFIX, hub: HUB_API_PREFIX, root: '' } as const;
type Surface = keyof typeof SURFACE_PREFIXES;

/**
 * Who may call a route, checked before its body is read by the check of that kind:
 * - none: anyone (the local guard's Host and Origin checks still apply);
 * - api_key: an API key in X-API-Key or Authorization: Bearer, its rate limit and scope;
 * - console / console_admin: a console session cookie (an administrator's), and X-CSRF-Token on
 *   anything but a read;
 * - access_token: an OAuth access token for MCP, its grant's rate limit;
 * - device: a sync device's credential (the hub's routes), refused once the device is revoked.
 */
export type AuthKind = 'none' | 'api_key' | 'console' | 'console_admin' | 'access_token' | 'device';

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface EndpointResponse {
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
  /** Which prefix the path hangs off; public when absent. */
  surface?: Surface;
  /** Path below the surface's prefix, OpenAPI style: /opportunities/{id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: AuthKind;
  /** Scope the key needs; undefined with auth api_key means any valid key. */
  scope?: Scope;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** How the body is encoded; json when absent; binary is raw bytes (application/octet-stream). */
  bodyEncoding?: 'json' | 'form' | 'binary';
  /**
   * handler: the route's handler reads the body and query against these schemas itself, because
   * its protocol fixes the error answer per field (RFC 6749 and 7591 for OAuth); they document it.
   */
  validatedBy?: 'handler';
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
  /**
   * On the office LAN listener, a route with auth none is refused (403 local_only) unless it is
   * open there: the health check, the CA download, OAuth's metadata and flow, the console's pages
   * and sign-in. Everything else there needs a session, a key or a token, or is for this machine.
   */
  openOnLan?: true;
}

/** The _warning of a replayed response whose secret was shown once. */
export const REPLAYED_SECRET_WARNING =
  'This is a replay of an earlier response to the same Idempotency-Key. The secret was shown once, in that first response, and is not kept for replays (secret is null here); if it was lost, rotate the secret.';

export function defineEndpoint<const E extends Endpoint>(endpoint: E): E {
  return endpoint;
}

const CONSOLE_ERRORS = [
  'not_signed_in',
  'invalid_csrf_token',
  'password_change_required',
  'misdirected_request',
  'origin_not_allowed',
] as const satisfies readonly ErrorCode[];

/** Error codes every route of an auth kind can answer, on top of its own. */
export const COMMON_ERRORS: Record<AuthKind, readonly ErrorCode[]> = {
  none: ['rate_limited', 'misdirected_request', 'origin_not_allowed'],
  console: CONSOLE_ERRORS,
  console_admin: [...CONSOLE_ERRORS, 'admin_only'],
  access_token: ['missing_credentials', 'invalid_token', 'rate_limited', 'misdirected_request', 'origin_not_allowed'],
  device: ['missing_credentials', 'invalid_device_credential', 'device_revoked'],
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

/** The endpoint's full path, OpenAPI style: /api/v1/public/opportunities/{id}. */
export function endpointPath(endpoint: Pick<Endpoint, 'surface' | 'path'>): string {
  return SURFACE_PREFIXES[endpoint.surface ?? 'public'] + endpoint.path;
}

type PathParams<E extends Endpoint> = E['params'] extends z.ZodType
  ? { [K in keyof z.input<E['params']>]: string | number }
  : Record<string, never>;
type QueryParams<E extends Endpoint> = E['query'] extends z.ZodType
  ? { [K in keyof z.input<E['query']>]?: string | number | boolean | null | undefined }
  : Record<string, never>;

/**
 * The URL of a call to an endpoint, its path parameters encoded: what the server registers, the
 * console fetches and the tests request are one string built one way.
 */
export function pathTo<E extends Endpoint>(
  endpoint: E,
  ...[params, query]: E['params'] extends z.ZodType ? [PathParams<E>, QueryParams<E>?] : [Record<string, never>?, QueryParams<E>?]
): string {
  const values: Record<string, string | number> = params ?? {};
  const path = endpointPath(endpoint).replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${endpoint.operationId} needs the path parameter ${name}.`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** A public endpoint's errors as the console meets them: it sends no Idempotency-Key, so none of its refusals. */
export function consoleErrorsOf(endpoint: Endpoint): ErrorCode[] {
  return endpoint.errors.filter((code) => !code.startsWith('idempotency_'));
}

/**
 * A public endpoint offered to the console as well: the same path below the console's prefix, the
 * same schemas and answers, a console session instead of an API key (so no scope and no
 * Idempotency-Key).
 */
export function consoleTwin<const E extends Endpoint, const A extends 'console' | 'console_admin'>(
  endpoint: E,
  twin: { operationId: string; tag: string; auth: A },
): Omit<E, 'scope' | 'headers' | 'surface' | 'auth' | 'operationId' | 'tag'> & {
  surface: 'console';
  auth: A;
  operationId: string;
  tag: string;
} {
  const copy: Endpoint = {
    ...endpoint,
    ...twin,
    surface: 'console',
    errors: consoleErrorsOf(endpoint),
  };
  delete copy.scope;
  delete copy.headers;
  return copy as Omit<E, 'scope' | 'headers' | 'surface' | 'auth' | 'operationId' | 'tag'> & {
    surface: 'console';
    auth: A;
    operationId: string;
    tag: string;
  };
}
