import { createHash, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_TTL_SECONDS,
  AUTHORIZATION_CODE_TTL_SECONDS,
  CONSENT_REQUEST_TTL_SECONDS,
  MCP_PATH,
  MCP_SCOPE_WORDING,
  authorizationCodeTokenRequest,
  refreshTokenRequest,
  revocationRequest,
  MCP_SCOPES,
  MCP_WRITE_SCOPES,
  OAUTH_PREFIX,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_TTL_SECONDS,
  clientRegistrationSchema,
  mcpScopeSchema,
  type ConsentRequest,
  type McpScope,
  type RegisteredClient,
  type TokenResponse,
} from '../../shared/oauth.js';
import { randomBase62 } from '../api-keys/service.js';
import { csrfToken, csrfTokenMatches, type SignedInUser } from '../console/service.js';
import { toIso, toIsoOrNull, type Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { AccessTokenAuthenticator, McpAccess } from './access.js';
import * as store from './store.js';

const TOKEN_RANDOM_LENGTH = 43;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

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

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

function parseScopes(json: string): McpScope[] {
  return (JSON.parse(json) as string[]).filter((s): s is McpScope => (MCP_SCOPES as readonly string[]).includes(s));
}

/** Where clients find everything, derived from the base URL the client reached us at. */
export function oauthUrls(base: string) {
  return {
    issuer: base,
    resource: `${base}${MCP_PATH}`,
    protectedResourceMetadata: `${base}/.well-known/oauth-protected-resource${MCP_PATH}`,
    authorization: `${base}${OAUTH_PREFIX}/authorize`,
    token: `${base}${OAUTH_PREFIX}/token`,
    registration: `${base}${OAUTH_PREFIX}/register`,
    revocation: `${base}${OAUTH_PREFIX}/revoke`,
  };
}

/** RFC 9728. */
export function protectedResourceMetadata(base: string) {
  const urls = oauthUrls(base);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Courtier',
  };
}

/** RFC 8414. */
export function authorizationServerMetadata(base: string) {
  const urls = oauthUrls(base);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorization,
    token_endpoint: urls.token,
    registration_endpoint: urls.registration,
    revocation_endpoint: urls.revocation,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...MCP_SCOPES],
    authorization_response_iss_parameter_supported: true,
  };
}

// ---- Registration (RFC 7591) ----

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
    if (unknown.length > 0) throw new OAuthError('invalid_client_metadata', `Unknown scope: ${unknown.join(', ')}. Known: ${MCP_SCOPES.join(' ')}.`);
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

// ---- Authorization ----

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
  | { kind: 'error_page'; title: string; message: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'ok'; params: AuthorizeParams };

/** An authorization response URL (RFC 6749 4.1.2), always with iss (RFC 9207). */
export function authorizationResponse(redirectUri: string, params: Record<string, string | null>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

function single(query: Record<string, unknown>, name: string): string | undefined | null {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : null;
}

/** Canonical form of a resource indicator: no trailing slash. */
function canonicalResource(value: string): string {
  return value.replace(/\/+$/, '');
}

/**
 * Checks an authorization request before anything is shown or stored. An unknown client or an
 * unregistered redirect URI is an error page. Any other defect is an error page too, unless the
 * signed-in user already consented to this very client (a grant that still stands): only then does
 * the error go back to the client (RFC 6749 4.1.2.1), since anyone can register a client with any
 * https redirect URI, and an error redirect for a stranger would make Courtier an open redirector
 * (RFC 9700 4.11.2).
 */
export function checkAuthorizeRequest(deps: Deps, query: Record<string, unknown>, base: string, user: SignedInUser | null): AuthorizeOutcome {
  const urls = oauthUrls(base);
  const clientId = single(query, 'client_id');
  const client = typeof clientId === 'string' ? store.findClient(deps.db.orm, clientId) : undefined;
  if (!client) {
    return {
      kind: 'error_page',
      title: 'Unknown application',
      message: 'The application that sent you here is not registered with this Courtier service. Start the connection again from the assistant.',
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
  const consented = () => user !== null && store.hasLiveGrant(deps.db.orm, { cabinetId: user.cabinetId, userId: user.userId, clientId: client.id }, deps.clock.now());
  const fail = (error: string, description: string): AuthorizeOutcome =>
    consented()
      ? {
          kind: 'redirect',
          location: authorizationResponse(redirectUri, { error, error_description: description, state: typeof state === 'string' ? state : null }, urls.issuer),
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
  if (typeof challenge !== 'string') return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
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

/** Holds a valid authorize request until the signed-in user answers it on the consent page. */
export function createConsentRequest(deps: Deps, params: AuthorizeParams, user: SignedInUser): string {
  const now = deps.clock.now();
  const id = randomUUID();
  store.insertConsentRequest(deps.db.orm, {
    id,
    clientId: params.clientId,
    userId: user.userId,
    cabinetId: user.cabinetId,
    redirectUri: params.redirectUri,
    scopes: JSON.stringify(params.scopes),
    state: params.state,
    codeChallenge: params.codeChallenge,
    resource: params.resource,
    createdAt: now,
    expiresAt: now + CONSENT_REQUEST_TTL_SECONDS * 1000,
    answeredAt: null,
  });
  return id;
}

function openConsentRequest(deps: Deps, requestId: string, user: SignedInUser): store.ConsentRequestRow {
  const request = store.findConsentRequest(deps.db.orm, requestId);
  if (!request || request.answeredAt !== null || request.expiresAt <= deps.clock.now()) {
    throw new ApiError('consent_request_not_found', 'This authorization request is unknown, already answered or expired. Start the connection again from the assistant.');
  }
  if (request.userId !== user.userId) {
    throw new ApiError('consent_forbidden', 'This authorization request was opened by another user. Sign in as that user, or start again.');
  }
  return request;
}

export function describeConsentRequest(deps: Deps, requestId: string, user: SignedInUser): ConsentRequest {
  const request = openConsentRequest(deps, requestId, user);
  const client = store.findClient(deps.db.orm, request.clientId);
  return {
    request_id: request.id,
    client_id: request.clientId,
    client_name: client?.name ?? 'An unnamed application',
    redirect_host: new URL(request.redirectUri).host,
    scopes: parseScopes(request.scopes).map((scope) => ({ scope, ...MCP_SCOPE_WORDING[scope], writes: MCP_WRITE_SCOPES.includes(scope) })),
    user: { email: user.email },
    csrf_token: csrfToken(deps, user.sessionId, `consent:${request.id}`),
    // A path: the page posts it to the origin it was loaded from, where its session cookie lives.
    decision_url: `${OAUTH_PREFIX}/consent`,
  };
}

/** The user's answer on the consent page; returns where the browser goes next (the client's redirect). */
export function decideConsent(
  deps: Deps,
  input: { requestId: unknown; csrfToken: unknown; decision: unknown; user: SignedInUser; issuer: string },
): string {
  if (typeof input.requestId !== 'string' || input.requestId === '') {
    throw new ApiError('consent_request_not_found', 'The form did not say which authorization request it answers.');
  }
  const request = openConsentRequest(deps, input.requestId, input.user);
  if (!csrfTokenMatches(deps, input.user.sessionId, `consent:${request.id}`, input.csrfToken)) {
    throw new ApiError('invalid_csrf_token', 'This answer did not come from the consent page Courtier showed you. Open the page again.');
  }
  if (input.decision !== 'allow' && input.decision !== 'deny') throw new ApiError('bad_request', 'The decision must be allow or deny.');
  const now = deps.clock.now();
  const { orm, sqlite } = deps.db;
  return sqlite
    .transaction(() => {
      if (!store.answerConsentRequest(orm, request.id, now)) {
        throw new ApiError('consent_request_not_found', 'This authorization request was already answered.');
      }
      if (input.decision === 'deny') {
        return authorizationResponse(request.redirectUri, { error: 'access_denied', error_description: 'The user refused access.', state: request.state }, input.issuer);
      }
      const grantId = randomUUID();
      store.insertGrant(orm, {
        id: grantId,
        clientId: request.clientId,
        userId: request.userId,
        cabinetId: request.cabinetId,
        scopes: request.scopes,
        resource: request.resource,
        createdAt: now,
        revokedAt: null,
        lastUsedAt: null,
      });
      const code = deps.randomBytes(32).toString('base64url');
      store.insertCode(orm, {
        codeHash: sha256(code),
        grantId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        expiresAt: now + AUTHORIZATION_CODE_TTL_SECONDS * 1000,
        usedAt: null,
      });
      return authorizationResponse(request.redirectUri, { code, state: request.state }, input.issuer);
    })
    .immediate();
}

// ---- Token endpoint ----

function issueTokenPair(deps: Deps, grant: store.GrantRow, accessScopes: McpScope[], now: number): TokenResponse {
  const access = ACCESS_TOKEN_PREFIX + randomBase62(TOKEN_RANDOM_LENGTH, deps.randomBytes);
  const refresh = REFRESH_TOKEN_PREFIX + randomBase62(TOKEN_RANDOM_LENGTH, deps.randomBytes);
  const common = { grantId: grant.id, createdAt: now, revokedAt: null };
  store.insertToken(deps.db.orm, {
    ...common,
    id: randomUUID(),
    tokenHash: sha256(access),
    kind: 'access',
    scopes: JSON.stringify(accessScopes),
    expiresAt: now + ACCESS_TOKEN_TTL_SECONDS * 1000,
  });
  // The refresh token keeps the grant's scopes: a narrower access token does not narrow the grant (RFC 6749 6).
  store.insertToken(deps.db.orm, {
    ...common,
    id: randomUUID(),
    tokenHash: sha256(refresh),
    kind: 'refresh',
    scopes: grant.scopes,
    expiresAt: now + REFRESH_TOKEN_TTL_SECONDS * 1000,
  });
  return { access_token: access, refresh_token: refresh, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, scope: accessScopes.join(' ') };
}

/**
 * Reads a form against its contract schema. Parameters without a value count as omitted, and a
 * repeated parameter is refused (RFC 6749 3.1, 3.2).
 */
function readForm<T extends z.ZodType>(schema: T, form: Record<string, unknown>): z.infer<T> {
  const present: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `${name} must be given once.`);
    if (value !== '') present[name] = value;
  }
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'request';
  throw new OAuthError('invalid_request', present[field] === undefined && field !== 'request' ? `${field} is required.` : `${field}: ${issue?.message ?? 'invalid'}`);
}

function requireClient(deps: Deps, clientId: string): store.ClientRow {
  const client = store.findClient(deps.db.orm, clientId);
  if (!client) throw new OAuthError('invalid_client', 'Unknown client_id; register the client again.', 401);
  return client;
}

export function exchangeToken(deps: Deps, form: Record<string, unknown>, base: string): TokenResponse {
  const grantType = form.grant_type;
  if (grantType === 'authorization_code') return exchangeCode(deps, readForm(authorizationCodeTokenRequest, form), base);
  if (grantType === 'refresh_token') return refreshTokens(deps, readForm(refreshTokenRequest, form));
  if (grantType === undefined || grantType === '') throw new OAuthError('invalid_request', 'grant_type is required.');
  throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
}

function exchangeCode(deps: Deps, form: z.infer<typeof authorizationCodeTokenRequest>, base: string): TokenResponse {
  const client = requireClient(deps, form.client_id);
  const { code, code_verifier: verifier, redirect_uri: redirectUri, resource } = form;
  const now = deps.clock.now();
  const { orm, sqlite } = deps.db;
  const outcome = sqlite
    .transaction((): TokenResponse | OAuthError => {
      const row = store.findCode(orm, sha256(code));
      const grant = row && store.findGrant(orm, row.grantId);
      if (!row || !grant || grant.clientId !== client.id) return new OAuthError('invalid_grant', 'The authorization code is not valid for this client.');
      if (row.usedAt !== null) {
        // A replayed code means it leaked: everything issued from it is revoked (RFC 9700 4.5.3.1 / part 4.3 rule 4).
        store.revokeGrant(orm, grant.id, now);
        return new OAuthError('invalid_grant', 'The authorization code was already used; every token issued from it is now revoked.');
      }
      if (row.expiresAt <= now) return new OAuthError('invalid_grant', 'The authorization code has expired (codes live 5 minutes); authorize again.');
      if (grant.revokedAt !== null) return new OAuthError('invalid_grant', 'This authorization was revoked.');
      if (redirectUri !== row.redirectUri) return new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request.');
      if (!PKCE_VALUE.test(verifier) || createHash('sha256').update(verifier).digest('base64url') !== row.codeChallenge) {
        return new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
      }
      if (resource !== undefined && canonicalResource(resource) !== oauthUrls(base).resource) {
        return new OAuthError('invalid_target', `This server issues tokens for ${oauthUrls(base).resource} only.`);
      }
      store.useCode(orm, row.codeHash, now);
      return issueTokenPair(deps, grant, parseScopes(grant.scopes), now);
    })
    .immediate();
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

function refreshTokens(deps: Deps, form: z.infer<typeof refreshTokenRequest>): TokenResponse {
  const client = requireClient(deps, form.client_id);
  const { refresh_token: presented, scope: scopeParam } = form;
  const now = deps.clock.now();
  const { orm, sqlite } = deps.db;
  const outcome = sqlite
    .transaction((): TokenResponse | OAuthError => {
      const token = store.findToken(orm, sha256(presented));
      const grant = token && token.kind === 'refresh' ? store.findGrant(orm, token.grantId) : undefined;
      if (!token || !grant || grant.clientId !== client.id) return new OAuthError('invalid_grant', 'The refresh token is not valid for this client.');
      if (grant.revokedAt !== null) return new OAuthError('invalid_grant', 'This authorization was revoked; authorize again.');
      if (token.revokedAt !== null) {
        // A rotated refresh token presented again: someone holds a copy. Kill the family.
        store.revokeGrant(orm, grant.id, now);
        return new OAuthError('invalid_grant', 'The refresh token was already used; every token of this authorization is now revoked. Authorize again.');
      }
      if (token.expiresAt <= now) return new OAuthError('invalid_grant', 'The refresh token has expired; authorize again.');
      const granted = parseScopes(grant.scopes);
      let scopes = granted;
      if (scopeParam !== undefined) {
        const requested = scopeParam.split(' ').filter(Boolean);
        const beyond = requested.filter((s) => !(granted as string[]).includes(s));
        if (beyond.length > 0) return new OAuthError('invalid_scope', `Not granted: ${beyond.join(', ')}. A refresh can only keep or narrow the granted scopes.`);
        scopes = granted.filter((s) => requested.includes(s));
      }
      store.revokeToken(orm, token.id, now);
      return issueTokenPair(deps, grant, scopes, now);
    })
    .immediate();
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

/**
 * RFC 7009: the answer is the same whether the token was known or not. A refresh token stands for
 * its grant, so revoking it revokes the grant and the access tokens issued under it.
 */
export function revokeToken(deps: Deps, form: Record<string, unknown>): void {
  const { token: presented, client_id: clientId } = readForm(revocationRequest, form);
  const token = store.findToken(deps.db.orm, sha256(presented));
  if (!token) return;
  const grant = store.findGrant(deps.db.orm, token.grantId);
  if (!grant || (clientId !== undefined && grant.clientId !== clientId)) return;
  const now = deps.clock.now();
  deps.db.sqlite
    .transaction(() => {
      if (token.kind === 'refresh') store.revokeGrant(deps.db.orm, grant.id, now);
      else store.revokeToken(deps.db.orm, token.id, now);
    })
    .immediate();
}

/** How often a grant's last_used_at is written at most: once a minute is enough for the console. */
const GRANT_LAST_USED_RESOLUTION_MS = 60_000;

export function createAccessTokenAuthenticator(deps: Deps): AccessTokenAuthenticator {
  const find = store.prepareFindLiveAccessToken(deps.db.sqlite);
  const touchGrant = store.prepareTouchGrant(deps.db.sqlite);
  // The last write per grant in this process, so that most requests write nothing (bounded).
  const lastUsedWrites = new Map<string, number>();
  return (token: string): McpAccess | null => {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    const record = find(sha256(token));
    const now = deps.clock.now();
    if (!record || record.expiresAt <= now) return null;
    const lastWrite = lastUsedWrites.get(record.grantId) ?? record.grantLastUsedAt ?? 0;
    if (now - lastWrite >= GRANT_LAST_USED_RESOLUTION_MS) {
      if (lastUsedWrites.size >= 10_000) lastUsedWrites.clear();
      lastUsedWrites.set(record.grantId, now);
      touchGrant(record.grantId, now);
    }
    return {
      grantId: record.grantId,
      clientId: record.clientId,
      clientName: record.clientName ?? 'An unnamed application',
      userId: record.userId,
      userEmail: record.userEmail,
      cabinetId: record.cabinetId,
      cabinetName: record.cabinetName,
      scopes: parseScopes(record.scopes),
      expiresAt: record.expiresAt,
    };
  };
}

/**
 * Registers a client and grants it tokens for a user without the browser steps: for benchmarks
 * and for tests of the tools. Every other path goes through authorize and consent.
 */
export function createAccessTokenForUser(
  deps: Deps,
  input: { cabinetId: string; userId: string; clientName: string; scopes: readonly McpScope[] },
): TokenResponse {
  const client = registerClient(deps, { client_name: input.clientName, redirect_uris: ['http://127.0.0.1/callback'] });
  const now = deps.clock.now();
  const grant: store.GrantRow = {
    id: randomUUID(),
    clientId: client.client_id,
    userId: input.userId,
    cabinetId: input.cabinetId,
    scopes: JSON.stringify(input.scopes),
    resource: null,
    createdAt: now,
    revokedAt: null,
    lastUsedAt: null,
  };
  return deps.db.sqlite
    .transaction(() => {
      store.insertGrant(deps.db.orm, grant);
      return issueTokenPair(deps, grant, [...input.scopes], now);
    })
    .immediate();
}

// ---- Connected apps (the console) ----

export interface ConnectedApp {
  grant_id: string;
  client_id: string;
  client_name: string;
  scopes: McpScope[];
  created_at: string;
  last_used_at: string | null;
}

/** The applications a user authorized and has not revoked (console: Connected apps). */
export function listConnectedApps(deps: Deps, user: { cabinetId: string; userId: string }): ConnectedApp[] {
  return store.listLiveGrantsOfUser(deps.db.orm, user.cabinetId, user.userId, deps.clock.now()).map((row) => ({
    grant_id: row.grantId,
    client_id: row.clientId,
    client_name: row.clientName ?? 'An unnamed application',
    scopes: parseScopes(row.scopes),
    created_at: toIso(row.createdAt),
    last_used_at: toIsoOrNull(row.lastUsedAt),
  }));
}

/**
 * Revokes one of the user's own grants and every token it issued. Another user's grant, an unknown
 * one or one already revoked is not found: nobody learns which grant ids exist.
 */
export function revokeConnectedApp(deps: Deps, user: { cabinetId: string; userId: string }, grantId: string): void {
  const { orm, sqlite } = deps.db;
  const now = deps.clock.now();
  const revoked = sqlite
    .transaction(() => {
      const grant = store.findGrant(orm, grantId);
      if (!grant || grant.cabinetId !== user.cabinetId || grant.userId !== user.userId || grant.revokedAt !== null) return false;
      store.revokeGrant(orm, grant.id, now);
      return true;
    })
    .immediate();
  if (!revoked) throw new ApiError('not_found', 'No such connected application for this user.');
}
