import { hash as digest } from 'node:crypto';
import type { z } from 'zod';
import { MCP_SCOPES, type McpScope } from '../../shared/oauth.js';

/** An RFC 6749 error: the token, registration and revocation endpoints answer it as JSON. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** Tokens and codes are kept as their SHA-256 only (the one-shot digest api-keys and idempotency use). */
export function sha256(value: string): string {
  return digest('sha256', value, 'hex');
}

/** The MCP scopes of a stored JSON list (anything else is dropped). */
export function parseScopes(json: string): McpScope[] {
  return (JSON.parse(json) as string[]).filter((s): s is McpScope => (MCP_SCOPES as readonly string[]).includes(s));
}

/** A PKCE code challenge or verifier (RFC 7636 4.1). */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Canonical form of a resource indicator: no trailing slash. */
export function canonicalResource(value: string): string {
  return value.replace(/\/+$/, '');
}

/**
 * Reads a form against its contract schema. Parameters without a value count as omitted, and a
 * repeated parameter is refused (RFC 6749 3.1, 3.2).
 */
export function readForm<T extends z.ZodType>(schema: T, form: Record<string, unknown>): z.infer<T> {
  const present: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `${name} must be given once.`);
    if (value !== '') present[name] = value;
  }
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'request';
  throw new OAuthError(
    'invalid_request',
    present[field] === undefined && field !== 'request' ? `${field} is required.` : `${field}: ${issue?.message ?? 'invalid'}`,
  );
}
