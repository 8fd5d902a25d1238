import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MCP_PATH, OAUTH_PREFIX } from '../../shared/oauth.js';
import { findSignedInUser, SESSION_COOKIE } from '../console/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../http/base-url.js';
import { readCookie } from '../http/cookies.js';
import { createRateLimiter } from '../plugins/rate-limit.js';
import { sendBrowserPage } from './pages.js';
import { checkAuthorizeRequest } from './authorization.js';
import { OAuthError } from './common.js';
import { createConsentRequest, decideConsent, describeConsentRequest } from './consent.js';
import { authorizationServerMetadata, oauthUrls, protectedResourceMetadata } from './metadata.js';
import { registerClient } from './registration.js';
import { revokeToken } from './revocation.js';
import { exchangeToken } from './token.js';

/** Paths a browser-based MCP client on any origin may call (CORS open, no credentials). */
export const OPEN_CORS_PATHS = [
  '/.well-known/oauth-protected-resource',
  `/.well-known/oauth-protected-resource${MCP_PATH}`,
  '/.well-known/oauth-authorization-server',
  `${OAUTH_PREFIX}/token`,
  `${OAUTH_PREFIX}/register`,
  `${OAUTH_PREFIX}/revoke`,
] as const;

const FORM_LIMIT_BYTES = 64 * 1024;

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

function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  return reply.code(error.status).headers({ 'Cache-Control': 'no-store', ...error.headers }).send(error.body());
}

/** The authorization server of part 4.3 (RFC 8414, 7591, 7636, 7009, 9207), on Fastify. */
export async function oauthRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  // Scoped to this plugin: the rest of the API takes JSON only.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) =>
    done(null, parseForm(body.toString())),
  );
  const base = (request: FastifyRequest) => publicBaseUrl(deps.config, request);
  const registrations = createRateLimiter({ limit: deps.config.oauthRegistrationsPerHour, windowMs: 3600_000, clock: deps.clock });
  const signedIn = (request: FastifyRequest) => findSignedInUser(deps, readCookie(request, SESSION_COOKIE));

  const resourceMetadata = (request: FastifyRequest) => protectedResourceMetadata(base(request));
  app.get('/.well-known/oauth-protected-resource', async (request) => resourceMetadata(request));
  app.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, async (request) => resourceMetadata(request));
  app.get('/.well-known/oauth-authorization-server', async (request) => authorizationServerMetadata(base(request)));

  app.post(`${OAUTH_PREFIX}/register`, async (request, reply) => {
    const rate = registrations.hit(request.ip);
    if (!rate.allowed) {
      return sendOAuthError(
        reply,
        new OAuthError('rate_limited', `Too many client registrations from this address; try again in ${rate.resetInSeconds} s.`, 429, {
          'Retry-After': String(rate.resetInSeconds),
        }),
      );
    }
    try {
      return reply.code(201).header('Cache-Control', 'no-store').send(registerClient(deps, request.body));
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      throw err;
    }
  });

  app.get(`${OAUTH_PREFIX}/authorize`, async (request, reply) => {
    const user = signedIn(request);
    const outcome = checkAuthorizeRequest(deps, asRecord(request.query), base(request), user);
    if (outcome.kind === 'error_page') return sendBrowserPage(reply, 400, outcome.title, outcome.message);
    if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302);
    if (!user) return reply.redirect(`/console/login?return_to=${encodeURIComponent(request.url)}`, 302);
    const requestId = createConsentRequest(deps, outcome.params, user);
    return reply.header('Cache-Control', 'no-store').redirect(`/console/consent?request_id=${encodeURIComponent(requestId)}`, 302);
  });

  app.get<{ Params: { request_id: string } }>(`${OAUTH_PREFIX}/consent/:request_id`, async (request, reply) => {
    const user = signedIn(request);
    if (!user) throw new ApiError('not_signed_in', 'Sign in to the console to answer this request.');
    reply.header('Cache-Control', 'no-store');
    return describeConsentRequest(deps, request.params.request_id, user);
  });

  app.post(`${OAUTH_PREFIX}/consent`, async (request, reply) => {
    const user = signedIn(request);
    if (!user) return sendBrowserPage(reply, 401, 'Signed out', 'Your console session ended. Start the connection again from the assistant.');
    const form = asRecord(request.body);
    try {
      const location = decideConsent(deps, {
        requestId: form.request_id,
        csrfToken: form.csrf_token,
        decision: form.decision,
        user,
        issuer: oauthUrls(base(request)).issuer,
      });
      return reply.header('Cache-Control', 'no-store').redirect(location, 303);
    } catch (err) {
      if (err instanceof ApiError) return sendBrowserPage(reply, err.statusCode, 'Authorization not given', err.message);
      throw err;
    }
  });

  app.post(`${OAUTH_PREFIX}/token`, async (request, reply) => {
    try {
      const tokens = exchangeToken(deps, asRecord(request.body), base(request));
      return reply.headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).send(tokens);
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      throw err;
    }
  });

  app.post(`${OAUTH_PREFIX}/revoke`, async (request, reply) => {
    try {
      revokeToken(deps, asRecord(request.body));
      return reply.code(200).header('Cache-Control', 'no-store').send();
    } catch (err) {
      if (err instanceof OAuthError) return sendOAuthError(reply, err);
      throw err;
    }
  });
}
