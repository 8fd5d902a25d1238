import type { ZodType } from 'zod';
import { STRINGS, chooseLang } from './i18n.js';

/** The error body every Courtier error has: {error, message, details?, request_id}. */
export interface ApiErrorBody {
  error: string;
  message: string;
  request_id?: string;
  details?: unknown;
}

export type ApiResult<T> =
  | { ok: true; status: number; data: T; headers: Headers }
  | { ok: false; status: number; error: ApiErrorBody; headers: Headers | null };

export interface ApiOptions<T> {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
  /** Checks a successful body; a body that does not match is reported as an error. */
  schema?: ZodType<T>;
}

const CSRF_COOKIE = 'courtier_csrf';

function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.error === 'string' && typeof v.message === 'string';
}

/**
 * fetch against the service (same origin, its session cookie included), with error bodies parsed.
 * Never throws: a network failure is status 0 with error "network_error".
 */
export async function api<T = unknown>(path: string, options: ApiOptions<T> = {}): Promise<ApiResult<T>> {
  const t = STRINGS[chooseLang()];
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  // The server binds this token to the session; a page on another site cannot read the cookie.
  if (method !== 'GET') headers['X-CSRF-Token'] = readCookie(CSRF_COOKIE) ?? '';
  const init: RequestInit = { method, credentials: 'same-origin', headers };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, error: { error: 'network_error', message: t.networkError }, headers: null };
  }
  let json: unknown;
  try {
    const text = await response.text();
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = isErrorBody(json) ? json : { error: 'unexpected_response', message: t.unexpectedError(response.status) };
    return { ok: false, status: response.status, error, headers: response.headers };
  }
  if (options.schema) {
    const parsed = options.schema.safeParse(json);
    if (!parsed.success) {
      return { ok: false, status: response.status, error: { error: 'unexpected_response', message: t.unexpectedError(response.status) }, headers: response.headers };
    }
    return { ok: true, status: response.status, data: parsed.data, headers: response.headers };
  }
  return { ok: true, status: response.status, data: json as T, headers: response.headers };
}

/** The login page, coming back to `returnTo` (a path on this origin) once signed in. */
export function loginUrl(returnTo?: string): string {
  return returnTo ? `/console/login?return_to=${encodeURIComponent(returnTo)}` : '/console/login';
}
