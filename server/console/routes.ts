import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getSession, signIn, signOut } from '../../shared/console-session.js';
import { CONSOLE_ACCOUNT_PAGE } from '../../shared/console-account.js';
import { CONSOLE_HOME } from '../../shared/console-pages.js';
import { isSafeReturnTo } from '../../shared/oauth.js';
import { recordAudit, requestActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { cabinetIdsOfEmail } from '../tenancy/service.js';
import { isLanRequest } from '../platform/http/listener.js';
import { blockLanAddress } from '../lan/blocks.js';
import { isFromThisMachine } from '../platform/http/client-address.js';
import { clearCookie, readCookie, setCookie } from '../platform/http/cookies.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { CONSOLE_CSRF_PURPOSE, CSRF_COOKIE } from './guard.js';
import {
  csrfToken,
  describeSession,
  findSignedInUser,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  signIn as checkSignIn,
  signOut as endSession,
  type LoginThrottle,
  type SignedInUser,
} from './service.js';

/** The session cookie (HttpOnly) and the CSRF cookie the console's script copies into X-CSRF-Token. */
export function startConsoleSession(deps: Deps, request: FastifyRequest, reply: FastifyReply, token: string, user: SignedInUser): void {
  setCookie(request, reply, SESSION_COOKIE, token, { maxAgeSeconds: SESSION_TTL_MS / 1000, httpOnly: true });
  setCookie(request, reply, CSRF_COOKIE, csrfToken(deps, user.sessionId, CONSOLE_CSRF_PURPOSE), {
    maxAgeSeconds: SESSION_TTL_MS / 1000,
    httpOnly: false,
  });
}

/** Sign-in, the current session and sign-out for the console (a cookie session, not an API key). */
export async function consoleSessionRoutes(
  app: FastifyInstance,
  { deps, throttle }: { deps: Deps; throttle: LoginThrottle },
): Promise<void> {
  /** Filed under each cabinet where the email has an account; install-wide when it has none. */
  const auditFailedSignIn = (request: FastifyRequest, email: string, reason: string) => {
    const cabinets = cabinetIdsOfEmail(deps, email);
    if (cabinets.length === 0) {
      // Seen by every cabinet's admins: whatever was typed as the email (a password, by mistake) stays out.
      recordAudit(deps, {
        cabinetId: null,
        action: 'console.sign_in_failed',
        result: 'failure',
        actor: requestActor(request),
        details: { reason, account: 'unknown' },
      });
      return;
    }
    for (const cabinetId of cabinets) {
      recordAudit(deps, {
        cabinetId,
        action: 'console.sign_in_failed',
        result: 'failure',
        actor: requestActor(request),
        target: email.trim().toLowerCase(),
        details: { reason },
      });
    }
  };

  registerEndpoint(app, signIn, async (request, reply) => {
    const { email, password, cabinet_id, return_to } = request.body;
    const origin = { address: request.ip, local: isFromThisMachine(request) };
    const { token, user } = await checkSignIn(deps, throttle, {
      email,
      password,
      origin,
      ...(cabinet_id === undefined ? {} : { cabinetId: cabinet_id }),
    }).catch((err: unknown) => {
      if (err instanceof ApiError && (err.code === 'invalid_credentials' || err.code === 'too_many_login_attempts')) {
        auditFailedSignIn(request, email, err.code);
        // On the office LAN, an address that reached the limit is shut out of everything for a while.
        const limited = throttle.limitedAddress(request.ip);
        if (isLanRequest(request) && limited) blockLanAddress(deps, limited.key, limited.count);
      }
      throw err;
    });
    recordAudit(deps, {
      cabinetId: user.cabinetId,
      action: 'console.signed_in',
      actor: { ...requestActor(request), kind: 'user', id: user.userId, label: user.email },
    });
    startConsoleSession(deps, request, reply, token, user);
    reply.header('Cache-Control', 'no-store');
    // A reset password is changed before anything else. return_to comes from a URL anyone can
    // craft: only a path on this origin is followed.
    const landing = user.mustChangePassword
      ? CONSOLE_ACCOUNT_PAGE
      : return_to !== undefined && isSafeReturnTo(return_to)
        ? return_to
        : CONSOLE_HOME;
    return { session: describeSession(user), redirect_to: landing };
  });

  // A 200 either way: the console asks this on every opening, and a 401 is logged by browsers as an error.
  registerEndpoint(app, getSession, (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const user = findSignedInUser(deps, readCookie(request, SESSION_COOKIE));
    return user ? { signed_in: true as const, ...describeSession(user) } : { signed_in: false as const };
  });

  registerEndpoint(app, signOut, (request, reply) => {
    endSession(deps, readCookie(request, SESSION_COOKIE));
    clearCookie(request, reply, SESSION_COOKIE);
    clearCookie(request, reply, CSRF_COOKIE);
    return reply.code(204).send();
  });
}
