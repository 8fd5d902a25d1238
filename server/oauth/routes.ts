import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authorize,
  decideConsent,
  exchangeToken,
  getAuthorizationServerMetadata,
  getConsentRequest,
  getMcpResourceMetadata,
  getProtectedResourceMetadata,
  registerOAuthClient,
  revokeToken,
} from '../../shared/oauth-endpoints.js';
import { endpointPath } from '../../shared/endpoint.js';
import { findSignedInUser, SESSION_COOKIE } from '../console/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../platform/http/base-url.js';
import { readCookie } from '../platform/http/cookies.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { createRateLimiter } from '../plugins/rate-limit.js';
import { sendBrowserPage } from './pages.js';
import { checkAuthorizeRequest } from './authorization.js';
import { OAuthError } from './common.js';
import { createConsentRequest, decideConsent as answerConsent, describeConsentRequest } from './consent.js';
import { authorizationServerMetadata, oauthUrls, protectedResourceMetadata } from './metadata.js';
import { registerClient } from './registration.js';
import { revokeToken as revoke } from './revocation.js';
import { exchangeToken as exchange } from './token.js';
import { requestActor } from '../audit/service.js';

/** Paths a browser-based MCP client on any origin may call (CORS open, no credentials). */
export const OPEN_CORS_PATHS = [
  getProtectedResourceMetadata,
  getMcpResourceMetadata,
  getAuthorizationServerMetadata,
  exchangeToken,
  registerOAuthClient,
  revokeToken,
].map(endpointPath);

const FORM_LIMIT_BYTES = 64 * 1024;

/** Routes a person's browser opens: their errors are pages, never JSON. */
const BROWSER_ROUTES: ReadonlySet<string> = new Set([authorize.operationId, decideConsent.operationId]);

/** application/x-www-form-urlencoded, keeping repeated names as arrays so that they can be refused. */
function parseForm(text: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = form[name];
    form[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return form;
}

function asRecord(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/**
 * The one error handler of the authorization server: RFC 6749 errors as their JSON, a browser
 * route's errors as a page; anything else goes on to the service's error handler.
 */
function oauthErrorHandler(error: Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof OAuthError)
    return reply
      .code(error.status)
      .headers({ 'Cache-Control': 'no-store', ...error.headers })
      .send(error.body());
  const operation = request.routeOptions.config.endpoint?.operationId;
  if (error instanceof ApiError && operation !== undefined && BROWSER_ROUTES.has(operation)) {
    const message =
      error.code === 'validation_error'
        ? 'The form was not filled in by the consent page Courtier showed you. Open the page again.'
        : error.message;
    return sendBrowserPage(reply, error.statusCode, 'Authorization not given', message);
  }
  throw error;
}

const MUST_CHANGE_FIRST =
  'Your password was reset by an administrator: choose a new one on the console’s My account page, then start the connection again from the assistant.';

/** The authorization server of part 4.3 (RFC 8414, 7591, 7636, 7009, 9207), on Fastify. */
export async function oauthRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  // Scoped to this plugin: the rest of the API takes JSON only.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => done(null, parseForm(body.toString())),
  );
  app.setErrorHandler(oauthErrorHandler);
  const base = (request: FastifyRequest) => publicBaseUrl(deps.config, request);
  const registrations = createRateLimiter({ limit: deps.config.oauthRegistrationsPerHour, windowMs: 3600_000, clock: deps.clock });
  const signedIn = (request: FastifyRequest) => findSignedInUser(deps, readCookie(request, SESSION_COOKIE));

  registerEndpoint(app, getProtectedResourceMetadata, (request) => protectedResourceMetadata(base(request)));
  registerEndpoint(app, getMcpResourceMetadata, (request) => protectedResourceMetadata(base(request)));
  registerEndpoint(app, getAuthorizationServerMetadata, (request) => authorizationServerMetadata(base(request)));

  registerEndpoint(app, registerOAuthClient, (request, reply) => {
    const rate = registrations.hit(request.ip);
    if (!rate.allowed) {
      throw new OAuthError('rate_limited', `Too many client registrations from this address; try again in ${rate.resetInSeconds} s.`, 429, {
        'Retry-After': String(rate.resetInSeconds),
      });
    }
    reply.header('Cache-Control', 'no-store');
    return respond(201, registerClient(deps, request.body));
  });

  registerEndpoint(app, authorize, (request, reply) => {
    const user = signedIn(request);
    const outcome = checkAuthorizeRequest(deps, asRecord(request.query), base(request), user);
    if (outcome.kind === 'error_page') return sendBrowserPage(reply, 400, outcome.title, outcome.message);
    if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302);
    if (!user) return reply.redirect(`/console/login?return_to=${encodeURIComponent(request.url)}`, 302);
    const requestId = createConsentRequest(deps, outcome.params, user);
    return reply.header('Cache-Control', 'no-store').redirect(`/console/consent?request_id=${encodeURIComponent(requestId)}`, 302);
  });

  registerEndpoint(app, getConsentRequest, (request, reply) => {
    const user = signedIn(request);
    if (!user) throw new ApiError('not_signed_in', 'Sign in to the console to answer this request.');
    // A temporary password has been seen by two people: it lets no assistant in.
    if (user.mustChangePassword) throw new ApiError('password_change_required', MUST_CHANGE_FIRST);
    reply.header('Cache-Control', 'no-store');
    return describeConsentRequest(deps, request.params.request_id, user);
  });

  registerEndpoint(app, decideConsent, (request, reply) => {
    const user = signedIn(request);
    if (!user)
      return sendBrowserPage(reply, 401, 'Signed out', 'Your console session ended. Start the connection again from the assistant.');
    if (user.mustChangePassword) return sendBrowserPage(reply, 403, 'Authorization not given', MUST_CHANGE_FIRST);
    const { request_id, csrf_token, decision } = request.body;
    const actor = { ...requestActor(request), kind: 'user' as const, id: user.userId, label: user.email };
    const location = answerConsent(deps, {
      requestId: request_id,
      csrfToken: csrf_token,
      decision,
      user,
      issuer: oauthUrls(base(request)).issuer,
      actor,
    });
    return reply.header('Cache-Control', 'no-store').redirect(location, 303);
  });

  registerEndpoint(app, exchangeToken, (request, reply) =>
    reply.headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).send(exchange(deps, asRecord(request.body), base(request))),
  );

  registerEndpoint(app, revokeToken, (request, reply) => {
    revoke(deps, asRecord(request.body));
    return reply.code(200).header('Cache-Control', 'no-store').send();
  });
}
