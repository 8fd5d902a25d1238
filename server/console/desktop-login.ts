import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { CONSOLE_HOME, desktopSignIn } from '../../shared/console-pages.js';
import { isSafeReturnTo } from '../../shared/oauth.js';
import type { Deps } from '../deps.js';
import { recordAudit, requestActor } from '../audit/service.js';
import { isFromThisMachine } from '../platform/http/client-address.js';
import { listCabinets, describeUser, setupNeeded, type UserIdentity } from '../tenancy/service.js';
import { listCabinetUsers } from '../tenancy/users.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { startConsoleSession } from './routes.js';
import { openSession } from './service.js';

/** The path the desktop shell opens with its one-time token. */
/** A token handed over by the desktop shell is good for this long, once. */
export const DESKTOP_LOGIN_TTL_MS = 2 * 60_000;
/** Tokens waiting at once; the oldest is dropped beyond this (the shell only ever needs one or two). */
const MAX_PENDING = 8;
const LOGIN_PAGE = '/console/login';
const SETUP_PAGE = '/console/setup';

/**
 * One-time sign-in tokens of the desktop shell, known by their SHA-256 only. The Electron main
 * process draws a random token, gives its hash to this process (COURTIER_DESKTOP_LOGIN_TOKEN_SHA256
 * at start, or `allow()` over the utility process's message port afterwards) and opens
 * `/console/desktop-login?token=…` in its window. No password is ever kept by the shell.
 */
export interface DesktopLoginTokens {
  /** Accepts the token whose SHA-256 (hex) this is, once, for DESKTOP_LOGIN_TTL_MS from now. */
  allow(sha256Hex: string): void;
  /** Consumes the token if it is pending and fresh; true when it was. Constant time in the token. */
  consume(token: string): boolean;
}

function createDesktopLoginTokens(clock: { now(): number }): DesktopLoginTokens {
  let pending: { hash: Buffer; expiresAt: number }[] = [];
  return {
    allow(sha256Hex) {
      if (!/^[0-9a-fA-F]{64}$/.test(sha256Hex)) throw new Error('a desktop login token is given as its SHA-256 in hex');
      pending.push({ hash: Buffer.from(sha256Hex.toLowerCase(), 'hex'), expiresAt: clock.now() + DESKTOP_LOGIN_TTL_MS });
      if (pending.length > MAX_PENDING) pending = pending.slice(-MAX_PENDING);
    },
    consume(token) {
      const now = clock.now();
      pending = pending.filter((p) => p.expiresAt > now);
      const presented = createHash('sha256').update(token).digest();
      let found = -1;
      // Every pending hash is compared, whatever matches, so timing tells nothing about which.
      pending.forEach((p, i) => {
        if (timingSafeEqual(p.hash, presented) && found === -1) found = i;
      });
      if (found === -1) return false;
      pending.splice(found, 1);
      return true;
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The desktop shell's one-time sign-in tokens (the utility-process entry feeds it). */
    desktopLogin: DesktopLoginTokens;
  }
}

/**
 * The cabinet's first admin: the oldest cabinet, then its oldest admin who is not disabled, one with
 * a password on this computer first (the others were added on another computer of the cabinet).
 */
function desktopAdmin(deps: Deps): UserIdentity | null {
  for (const cabinet of listCabinets(deps)) {
    const admins = listCabinetUsers(deps, cabinet.cabinet_id).filter((u) => u.role === 'admin' && u.disabled_at === null);
    const admin = admins.find((u) => u.has_password) ?? admins[0];
    if (!admin) continue;
    const identity = describeUser(deps, admin.user_id);
    if (identity) return identity;
  }
  return null;
}

/**
 * `GET /console/desktop-login?token=…[&return_to=/console/…]`: the desktop shell's one-time sign-in
 * as the first cabinet's first admin, then 302 to the console (or to `return_to`, a console path). With no cabinet yet, 302 to first-run setup. Any failure
 * (no token, unknown, used, expired, not from this machine) is a plain 302 to the sign-in page.
 */
export const desktopLoginRoutes = fp(
  async function desktopLoginRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
    const tokens = createDesktopLoginTokens(deps.clock);
    if (deps.config.desktopLoginTokenSha256) tokens.allow(deps.config.desktopLoginTokenSha256);
    app.decorate('desktopLogin', tokens);

    registerEndpoint(app, desktopSignIn, (request, reply) => {
      // The token is in the URL: keep it out of caches and of any Referer.
      reply.header('Cache-Control', 'no-store');
      reply.header('Referrer-Policy', 'no-referrer');
      const query = (request.query ?? {}) as Record<string, unknown>;
      const token = query.token;
      // Where to land after the sign-in (a notification opens a job): a console path on this origin only.
      const returnTo = query.return_to;
      const landing =
        typeof returnTo === 'string' && returnTo.startsWith('/console/') && isSafeReturnTo(returnTo) ? returnTo : CONSOLE_HOME;
      const valid =
        typeof token === 'string' &&
        token.length >= 16 &&
        token.length <= 256 &&
        // The shell and the server share the machine; a LAN client never signs in this way,
        // whatever X-Forwarded-For says (the TCP peer decides).
        isFromThisMachine(request) &&
        tokens.consume(token);
      if (!valid) return reply.redirect(LOGIN_PAGE, 302);
      if (setupNeeded(deps)) return reply.redirect(SETUP_PAGE, 302);
      const admin = desktopAdmin(deps);
      if (!admin) return reply.redirect(LOGIN_PAGE, 302);
      const session = openSession(deps, admin);
      request.log.info({ user_id: admin.userId, cabinet_id: admin.cabinetId }, 'desktop sign-in');
      recordAudit(deps, {
        cabinetId: admin.cabinetId,
        action: 'console.desktop_signed_in',
        actor: { ...requestActor(request), kind: 'user', id: admin.userId, label: admin.email },
      });
      startConsoleSession(deps, request, reply, session.token, session.user);
      return reply.redirect(landing, 302);
    });
  },
  { name: 'courtier-desktop-login', fastify: '5.x' },
);
