import type { FastifyInstance } from 'fastify';
import { isSafeReturnTo, loginBodySchema } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { clearCookie, readCookie, setCookie } from '../http/cookies.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_CSRF_PURPOSE, CSRF_COOKIE } from './guard.js';
import { toValidationIssues, validationError } from '../http/validation.js';
import { csrfToken, describeSession, findSignedInUser, SESSION_COOKIE, SESSION_TTL_MS, signIn, signOut, type LoginThrottle, type SignedInUser } from './service.js';

export const CONSOLE_HOME = '/console/';

/** The session cookie (HttpOnly) and the CSRF cookie the console's script copies into X-CSRF-Token. */
export function startConsoleSession(deps: Deps, request: FastifyRequest, reply: FastifyReply, token: string, user: SignedInUser): void {
  setCookie(request, reply, SESSION_COOKIE, token, { maxAgeSeconds: SESSION_TTL_MS / 1000, httpOnly: true });
  setCookie(request, reply, CSRF_COOKIE, csrfToken(deps, user.sessionId, CONSOLE_CSRF_PURPOSE), { maxAgeSeconds: SESSION_TTL_MS / 1000, httpOnly: false });
}

/** Sign-in, the current session and sign-out for the console (a cookie session, not an API key). */
export async function consoleSessionRoutes(app: FastifyInstance, { deps, throttle }: { deps: Deps; throttle: LoginThrottle }): Promise<void> {
  app.post('/api/v1/console/session', async (request, reply) => {
    const parsed = loginBodySchema.safeParse(request.body ?? {});
    if (!parsed.success) throw validationError(toValidationIssues(parsed.error, 'body'));
    const { email, password, cabinet_id, return_to } = parsed.data;
    const { token, user } = await signIn(deps, throttle, { email, password, ip: request.ip, ...(cabinet_id === undefined ? {} : { cabinetId: cabinet_id }) });
    startConsoleSession(deps, request, reply, token, user);
    reply.header('Cache-Control', 'no-store');
    // return_to comes from a URL anyone can craft: only a path on this origin is followed.
    return { session: describeSession(user), redirect_to: return_to !== undefined && isSafeReturnTo(return_to) ? return_to : CONSOLE_HOME };
  });

  app.get('/api/v1/console/session', async (request, reply) => {
    const user = findSignedInUser(deps, readCookie(request, SESSION_COOKIE));
    if (!user) throw new ApiError('not_signed_in', 'Sign in to the console first.');
    reply.header('Cache-Control', 'no-store');
    return describeSession(user);
  });

  app.delete('/api/v1/console/session', async (request, reply) => {
    signOut(deps, readCookie(request, SESSION_COOKIE));
    clearCookie(request, reply, SESSION_COOKIE);
    clearCookie(request, reply, CSRF_COOKIE);
    return reply.code(204).send();
  });
}
