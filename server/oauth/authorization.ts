import { MCP_SCOPES, mcpScopeSchema, type McpScope } from '../../shared/oauth.js';
import type { SignedInUser } from '../console/service.js';
import type { Deps } from '../deps.js';
import { canonicalResource, PKCE_VALUE } from './common.js';
import { oauthUrls } from './metadata.js';
import { redirectUriRegistered } from './registration.js';
import * as store from './store.js';

export interface AuthorizeParams {
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: McpScope[];
  state: string | null;
  codeChallenge: string;
  resource: string | null;
}

export type AuthorizeOutcome =
  /** Shown to the person in the browser: the client, its redirect or the request cannot be trusted with a redirect. */
  { kind: 'error_page'; title: string; message: string } | { kind: 'redirect'; location: string } | { kind: 'ok'; params: AuthorizeParams };

/** An authorization response URL (RFC 6749 4.1.2), always with iss (RFC 9207). */
export function authorizationResponse(redirectUri: string, params: Record<string, string | null>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

function single(query: Record<string, unknown>, name: string): string | undefined | null {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : null;
}

/**
 * Checks an authorization request before anything is shown or stored. An unknown client or an
 * unregistered redirect URI is an error page. Any other defect is an error page too, unless the
 * signed-in user already consented to this very client (a grant that still stands): only then does
 * the error go back to the client (RFC 6749 4.1.2.1), since anyone can register a client with any
 * https redirect URI, and an error redirect for a stranger would make Courtier an open redirector
 * (RFC 9700 4.11.2).
 */
export function checkAuthorizeRequest(
  deps: Deps,
  query: Record<string, unknown>,
  base: string,
  user: SignedInUser | null,
): AuthorizeOutcome {
  const urls = oauthUrls(base);
  const clientId = single(query, 'client_id');
  const client = typeof clientId === 'string' ? store.findClient(deps.db.orm, clientId) : undefined;
  if (!client) {
    return {
      kind: 'error_page',
      title: 'Unknown application',
      message:
        'The application that sent you here is not registered with this Courtier service. Start the connection again from the assistant.',
    };
  }
  const registered = JSON.parse(client.redirectUris) as string[];
  const presentedRedirect = single(query, 'redirect_uri');
  const redirectUri = presentedRedirect === undefined && registered.length === 1 ? registered[0] : presentedRedirect;
  if (typeof redirectUri !== 'string' || !redirectUriRegistered(registered, redirectUri)) {
    return {
      kind: 'error_page',
      title: 'Unregistered redirect address',
      message: 'The application asked to send you back to an address it did not register. For your safety Courtier does not follow it.',
    };
  }
  const state = single(query, 'state');
  const consented = () =>
    user !== null &&
    store.hasLiveGrant(deps.db.orm, { cabinetId: user.cabinetId, userId: user.userId, clientId: client.id }, deps.clock.now());
  const fail = (error: string, description: string): AuthorizeOutcome =>
    consented()
      ? {
          kind: 'redirect',
          location: authorizationResponse(
            redirectUri,
            { error, error_description: description, state: typeof state === 'string' ? state : null },
            urls.issuer,
          ),
        }
      : {
          kind: 'error_page',
          title: 'Invalid connection request',
          message: `The application that sent you here asked for something Courtier cannot accept: ${description} Nothing was shared with it. Start the connection again from the assistant; if this happens again, its developer has to fix the request.`,
        };

  for (const name of ['response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'resource']) {
    if (single(query, name) === null) return fail('invalid_request', `${name} must be given once.`);
  }
  if (single(query, 'response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
  const challenge = single(query, 'code_challenge');
  if (typeof challenge !== 'string')
    return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  const method = single(query, 'code_challenge_method');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; the plain method is not accepted.');
  if (!PKCE_VALUE.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier.');

  const requested = (single(query, 'scope') as string | undefined)?.split(' ').filter(Boolean);
  const unknown = requested?.filter((s) => !mcpScopeSchema.safeParse(s).success) ?? [];
  if (unknown.length > 0) return fail('invalid_scope', `Unknown scope: ${unknown.join(', ')}. Known: ${MCP_SCOPES.join(' ')}.`);
  const fallback = client.scope?.split(' ').filter(Boolean) ?? [...MCP_SCOPES];
  const scopes = MCP_SCOPES.filter((s) => (requested && requested.length > 0 ? requested : fallback).includes(s));

  const resource = single(query, 'resource') as string | undefined;
  if (resource !== undefined && canonicalResource(resource) !== urls.resource) {
    return fail('invalid_target', `This server issues tokens for ${urls.resource} only.`);
  }
  return {
    kind: 'ok',
    params: {
      clientId: client.id,
      clientName: client.name ?? 'An unnamed application',
      redirectUri,
      scopes,
      state: typeof state === 'string' ? state : null,
      codeChallenge: challenge,
      resource: resource === undefined ? null : urls.resource,
    },
  };
}
