import type { FastifyInstance } from 'fastify';
import { isSafeReturnTo, loginBodySchema } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { clearCookie, readCookie, setSessionCookie } from '../http/cookies.js';
import { toValidationIssues, validationError } from '../http/validation.js';
import { describeSession, findSignedInUser, SESSION_COOKIE, SESSION_TTL_MS, signIn, signOut, type LoginThrottle } from './service.js';

export const CONSOLE_HOME = '/console/';

/** Sign-in, the current session and sign-out for the console (a cookie session, not an API key). */
export async function consoleSessionRoutes(app: FastifyInstance, { deps, throttle }: { deps: Deps; throttle: LoginThrottle }): Promise<void> {
  app.post('/api/v1/console/session', async (request, reply) => {
    const parsed = loginBodySchema.safeParse(request.body ?? {});
    if (!parsed.success) throw validationError(toValidationIssues(parsed.error, 'body'));
    const { email, password, return_to } = parsed.data;
    const { token, user } = await signIn(deps, throttle, { email, password, ip: request.ip });
    setSessionCookie(request, reply, SESSION_COOKIE, token, SESSION_TTL_MS / 1000);
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
    return reply.code(204).send();
  });
}
