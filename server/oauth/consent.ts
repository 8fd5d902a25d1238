import { randomUUID } from 'node:crypto';
import {
  AUTHORIZATION_CODE_TTL_SECONDS,
  CONSENT_REQUEST_TTL_SECONDS,
  MCP_SCOPE_WORDING,
  MCP_WRITE_SCOPES,
  OAUTH_PREFIX,
  type ConsentRequest,
} from '../../shared/oauth.js';
import { csrfToken, csrfTokenMatches, type SignedInUser } from '../console/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { authorizationResponse, type AuthorizeParams } from './authorization.js';
import { parseScopes, sha256 } from './common.js';
import * as store from './store.js';
import { recordAudit, type AuditActor } from '../audit/service.js';

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
    throw new ApiError(
      'consent_request_not_found',
      'This authorization request is unknown, already answered or expired. Start the connection again from the assistant.',
    );
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
  input: { requestId: unknown; csrfToken: unknown; decision: unknown; user: SignedInUser; issuer: string; actor: AuditActor },
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
  const { orm } = deps.db;
  return deps.db.immediateTransaction(() => {
    if (!store.answerConsentRequest(orm, request.id, now)) {
      throw new ApiError('consent_request_not_found', 'This authorization request was already answered.');
    }
    if (input.decision === 'deny') {
      return authorizationResponse(
        request.redirectUri,
        { error: 'access_denied', error_description: 'The user refused access.', state: request.state },
        input.issuer,
      );
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
    recordAudit(deps, {
      cabinetId: request.cabinetId,
      action: 'oauth.grant_given',
      actor: input.actor,
      target: request.clientId,
      details: { grant_id: grantId, scopes: JSON.parse(request.scopes) as unknown },
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
  });
}
