import { createHash, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_TTL_SECONDS,
  authorizationCodeTokenRequest,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_TTL_SECONDS,
  refreshTokenRequest,
  type McpScope,
  type TokenResponse,
} from '../../shared/oauth.js';
import { randomBase62 } from '../api-keys/service.js';
import type { Deps } from '../deps.js';
import { canonicalResource, OAuthError, parseScopes, PKCE_VALUE, readForm, sha256 } from './common.js';
import { oauthUrls } from './metadata.js';
import { registerClient } from './registration.js';
import * as store from './store.js';

const TOKEN_RANDOM_LENGTH = 43;

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
  return {
    access_token: access,
    refresh_token: refresh,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    scope: accessScopes.join(' '),
  };
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
  const { orm } = deps.db;
  const outcome = deps.db.immediateTransaction((): TokenResponse | OAuthError => {
    const row = store.findCode(orm, sha256(code));
    const grant = row && store.findGrant(orm, row.grantId);
    if (!row || !grant || grant.clientId !== client.id)
      return new OAuthError('invalid_grant', 'The authorization code is not valid for this client.');
    if (row.usedAt !== null) {
      // A replayed code means it leaked: everything issued from it is revoked (RFC 9700 4.5.3.1 / part 4.3 rule 4).
      store.revokeGrant(orm, grant.id, now);
      return new OAuthError('invalid_grant', 'The authorization code was already used; every token issued from it is now revoked.');
    }
    if (row.expiresAt <= now)
      return new OAuthError('invalid_grant', 'The authorization code has expired (codes live 5 minutes); authorize again.');
    if (grant.revokedAt !== null) return new OAuthError('invalid_grant', 'This authorization was revoked.');
    if (redirectUri !== row.redirectUri)
      return new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request.');
    if (!PKCE_VALUE.test(verifier) || createHash('sha256').update(verifier).digest('base64url') !== row.codeChallenge) {
      return new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
    }
    if (resource !== undefined && canonicalResource(resource) !== oauthUrls(base).resource) {
      return new OAuthError('invalid_target', `This server issues tokens for ${oauthUrls(base).resource} only.`);
    }
    store.useCode(orm, row.codeHash, now);
    return issueTokenPair(deps, grant, parseScopes(grant.scopes), now);
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

function refreshTokens(deps: Deps, form: z.infer<typeof refreshTokenRequest>): TokenResponse {
  const client = requireClient(deps, form.client_id);
  const { refresh_token: presented, scope: scopeParam } = form;
  const now = deps.clock.now();
  const { orm } = deps.db;
  const outcome = deps.db.immediateTransaction((): TokenResponse | OAuthError => {
    const token = store.findToken(orm, sha256(presented));
    const grant = token && token.kind === 'refresh' ? store.findGrant(orm, token.grantId) : undefined;
    if (!token || !grant || grant.clientId !== client.id)
      return new OAuthError('invalid_grant', 'The refresh token is not valid for this client.');
    if (grant.revokedAt !== null) return new OAuthError('invalid_grant', 'This authorization was revoked; authorize again.');
    if (token.revokedAt !== null) {
      // A rotated refresh token presented again: someone holds a copy. Kill the family.
      store.revokeGrant(orm, grant.id, now);
      return new OAuthError(
        'invalid_grant',
        'The refresh token was already used; every token of this authorization is now revoked. Authorize again.',
      );
    }
    if (token.expiresAt <= now) return new OAuthError('invalid_grant', 'The refresh token has expired; authorize again.');
    const granted = parseScopes(grant.scopes);
    let scopes = granted;
    if (scopeParam !== undefined) {
      const requested = scopeParam.split(' ').filter(Boolean);
      const beyond = requested.filter((s) => !(granted as string[]).includes(s));
      if (beyond.length > 0)
        return new OAuthError('invalid_scope', `Not granted: ${beyond.join(', ')}. A refresh can only keep or narrow the granted scopes.`);
      scopes = granted.filter((s) => requested.includes(s));
    }
    store.revokeToken(orm, token.id, now);
    return issueTokenPair(deps, grant, scopes, now);
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
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
  return deps.db.immediateTransaction(() => {
    store.insertGrant(deps.db.orm, grant);
    return issueTokenPair(deps, grant, [...input.scopes], now);
  });
}
