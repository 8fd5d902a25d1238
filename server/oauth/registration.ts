import { randomUUID } from 'node:crypto';
import { clientRegistrationSchema, MCP_SCOPES, mcpScopeSchema, type RegisteredClient } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { OAuthError } from './common.js';
import * as store from './store.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** https anywhere, or http on a loopback address (RFC 8252 7.3); never a fragment or credentials. */
function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${value} is not an absolute URL`;
  }
  if (url.hash !== '' || value.includes('#')) return `${value} must not carry a fragment`;
  if (url.username !== '' || url.password !== '') return `${value} must not carry credentials`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `${value} must be https, or http on 127.0.0.1, [::1] or localhost`;
}

export function registerClient(deps: Deps, body: unknown): RegisteredClient {
  const parsed = clientRegistrationSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? 'body');
    const message = `${field}: ${issue?.message ?? 'invalid'}`;
    throw new OAuthError(field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', message);
  }
  const input = parsed.data;
  for (const uri of input.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }
  if (!input.grant_types.includes('authorization_code')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code.');
  }
  if (input.scope !== undefined) {
    const unknown = input.scope.split(' ').filter((s) => s !== '' && !mcpScopeSchema.safeParse(s).success);
    if (unknown.length > 0)
      throw new OAuthError('invalid_client_metadata', `Unknown scope: ${unknown.join(', ')}. Known: ${MCP_SCOPES.join(' ')}.`);
  }
  const now = deps.clock.now();
  const row: store.ClientRow = {
    id: randomUUID(),
    name: input.client_name ?? null,
    redirectUris: JSON.stringify(input.redirect_uris),
    grantTypes: JSON.stringify(input.grant_types),
    responseTypes: JSON.stringify(input.response_types),
    scope: input.scope ?? null,
    createdAt: now,
  };
  store.insertClient(deps.db.orm, row);
  return describeClient(row);
}

function describeClient(row: store.ClientRow): RegisteredClient {
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.createdAt / 1000),
    ...(row.name === null ? {} : { client_name: row.name }),
    redirect_uris: JSON.parse(row.redirectUris) as string[],
    token_endpoint_auth_method: 'none',
    grant_types: JSON.parse(row.grantTypes) as string[],
    response_types: JSON.parse(row.responseTypes) as string[],
    ...(row.scope === null ? {} : { scope: row.scope }),
  };
}

/** Exact match, except that a loopback http redirect may use any port (RFC 8252 7.3). */
export function redirectUriRegistered(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let url: URL;
  try {
    url = new URL(presented);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return false;
  return registered.some((candidate) => {
    const r = new URL(candidate);
    return r.protocol === 'http:' && r.hostname === url.hostname && r.pathname === url.pathname && r.search === url.search;
  });
}
