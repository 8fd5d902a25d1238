import type { FastifyRequest } from 'fastify';
import { changeOwnPassword } from '../../shared/console-account.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { readCookie } from '../platform/http/cookies.js';
import type { RequestCheck } from '../plugins/auth.js';
import { csrfTokenMatches, findSignedInUser, SESSION_COOKIE, type SignedInUser } from './service.js';

/** The header every state-changing console request carries, with the value of the CSRF cookie. */
const CSRF_HEADER = 'x-csrf-token';
/** Readable by the console's script (not HttpOnly): it copies it into CSRF_HEADER. */
export const CSRF_COOKIE = 'courtier_csrf';
export const CONSOLE_CSRF_PURPOSE = 'console';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is signed in, on console API routes guarded by consoleGuard. */
    consoleUser: SignedInUser | null;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The check of every console endpoint (auth console or console_admin): a live session cookie
 * (never an API key), the admin role when asked, and on anything but a read the X-CSRF-Token
 * header bound to the session (on top of the Origin check and SameSite=Lax). Answers are never
 * cached.
 */
export function consoleCheck(deps: Deps, options: { role?: 'admin' } = {}): RequestCheck {
  return (request, reply) => {
    // Every console answer is about one user, and some carry a secret (a key, a webhook secret).
    reply.header('Cache-Control', 'no-store');
    const user = findSignedInUser(deps, readCookie(request, SESSION_COOKIE));
    if (!user) throw new ApiError('not_signed_in', 'Sign in to the console first.');
    if (!SAFE_METHODS.has(request.method) && !csrfTokenMatches(deps, user.sessionId, CONSOLE_CSRF_PURPOSE, request.headers[CSRF_HEADER])) {
      throw new ApiError(
        'invalid_csrf_token',
        'This request did not come from a console page (missing or wrong X-CSRF-Token); reload the page.',
      );
    }
    // After an administrator's reset the temporary password has been seen by two people: nothing
    // else until the person chose their own.
    if (user.mustChangePassword && request.routeOptions.config.endpoint?.operationId !== changeOwnPassword.operationId) {
      throw new ApiError(
        'password_change_required',
        'Your password was reset by an administrator: choose a new one on the My account page first.',
      );
    }
    if (options.role === 'admin' && user.role !== 'admin')
      throw new ApiError('admin_only', 'Only an administrator of the cabinet can do this.');
    request.consoleUser = user;
  };
}

/** The signed-in user of a guarded route. */
export function consoleUser(request: FastifyRequest): SignedInUser {
  if (!request.consoleUser) throw new ApiError('not_signed_in', 'Sign in to the console first.');
  return request.consoleUser;
}
