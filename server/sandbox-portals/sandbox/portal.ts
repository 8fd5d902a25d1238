import type { FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { readCookie } from '../../platform/http/cookies.js';
import type { SmsView } from './pages.js';
import type { DriverStep, DwellingStep, VehicleStep } from './validation.js';

const SANDBOX_PHONE_NUMBER = '+33 6 12 34 56 42';
const SESSION_IDLE_MS = 15 * 60_000;
export const MFA_CODE_VALIDITY_MS = 5 * 60_000;
const MFA_MAX_TRIES = 3;
const SESSION_COOKIE = 'sbx_session';
/** Sessions idle this long are forgotten (until then, a request on them says "expired"). */
const SESSION_PURGE_MS = 24 * 60 * 60_000;
const MAX_MESSAGES = 50;

export interface SandboxAccount {
  password: string;
  /** An SMS code at every login. */
  mfa: boolean;
  displayName: string;
}

export interface Session {
  id: string;
  user: string;
  displayName: string;
  stage: 'mfa' | 'ok';
  lastSeenAt: number;
  mfa: { code: string; sentAt: number; triesLeft: number } | null;
  auto: { driver?: DriverStep; driverRaw?: Record<string, string>; vehicle?: VehicleStep; vehicleRaw?: Record<string, string> };
  home: { dwelling?: DwellingStep; dwellingRaw?: Record<string, string> };
}

/**
 * One portal's state and what every page shares: its sessions (cookie, idle expiry, the MFA step),
 * the SMS it sent, and its answers (an HTML page, a redirect within the portal).
 */
export interface Portal {
  /** The prefix the portal is mounted at ('' at the root). */
  base: string;
  clock: { now(): number };
  randomBytes: (size: number) => Buffer;
  accounts: ReadonlyMap<string, SandboxAccount>;
  /** The portal shows its redesign (mode 'changed'). */
  redesigned(): boolean;
  /** The SMS codes sent, newest first (the sandbox phone shows them). */
  messages: SmsView[];
  html(reply: FastifyReply, status: number, html: string): FastifyReply;
  redirect(reply: FastifyReply, path: string): FastifyReply;
  /** The request's session; an idle one is dropped and reported as expired. */
  currentSession(request: FastifyRequest): { session?: Session; expired: boolean };
  openSession(reply: FastifyReply, account: SandboxAccount, user: string): Session;
  /** Forgets a session, keeping the browser's cookie (a new one is about to replace it). */
  forgetSession(session: Session): void;
  /** Forgets a session and clears the browser's cookie (logout, too many tries). */
  endSession(reply: FastifyReply, session: Session | undefined): void;
  sendSmsCode(session: Session): void;
  /**
   * The preHandler hook of the plugins whose pages need a logged-in broker, added once per plugin:
   * anyone else is redirected (to the login, or to the code).
   */
  requireSession(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** The session requireSession let through for this request (a page under that hook only). */
  sessionOf(request: FastifyRequest): Session;
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function createPortal(options: {
  base: string;
  clock: Portal['clock'];
  randomBytes: Portal['randomBytes'];
  accounts: Portal['accounts'];
  redesigned: Portal['redesigned'];
}): Portal {
  const { base, clock, randomBytes } = options;
  const cookiePath = base === '' ? '/' : base;
  const sessions = new Map<string, Session>();
  const messages: SmsView[] = [];
  // The signed-in pages' sessions, by request: found once by the hook, read by the handler.
  const signedIn = new WeakMap<FastifyRequest, Session>();

  const redirect = (reply: FastifyReply, path: string) => reply.redirect(`${base}/${path}`, 303);
  const clearSessionCookie = (reply: FastifyReply) =>
    reply.header('Set-Cookie', `${SESSION_COOKIE}=; Path=${cookiePath}; HttpOnly; SameSite=Lax; Max-Age=0`);

  function currentSession(request: FastifyRequest): { session?: Session; expired: boolean } {
    const id = readCookie(request, SESSION_COOKIE);
    const session = id === undefined ? undefined : sessions.get(id);
    if (!session) return { expired: false };
    if (clock.now() - session.lastSeenAt > SESSION_IDLE_MS) {
      sessions.delete(session.id);
      return { expired: true };
    }
    return { session, expired: false };
  }

  return {
    base,
    clock,
    randomBytes,
    accounts: options.accounts,
    redesigned: options.redesigned,
    messages,
    html: (reply, status, html) => reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(html),
    redirect,
    currentSession,
    openSession(reply, account, user) {
      const now = clock.now();
      for (const [id, s] of sessions) if (now - s.lastSeenAt > SESSION_PURGE_MS) sessions.delete(id);
      const session: Session = {
        id: randomBytes(24).toString('base64url'),
        user,
        displayName: account.displayName,
        stage: account.mfa ? 'mfa' : 'ok',
        lastSeenAt: now,
        mfa: null,
        auto: {},
        home: {},
      };
      sessions.set(session.id, session);
      reply.header('Set-Cookie', `${SESSION_COOKIE}=${session.id}; Path=${cookiePath}; HttpOnly; SameSite=Lax`);
      return session;
    },
    forgetSession(session) {
      sessions.delete(session.id);
    },
    endSession(reply, session) {
      if (session) sessions.delete(session.id);
      clearSessionCookie(reply);
    },
    sendSmsCode(session) {
      const code = String(randomBytes(4).readUInt32BE(0) % 1_000_000).padStart(6, '0');
      const sentAt = clock.now();
      session.mfa = { code, sentAt, triesLeft: MFA_MAX_TRIES };
      messages.unshift({ to: SANDBOX_PHONE_NUMBER, code, sentAtMs: sentAt });
      messages.length = Math.min(messages.length, MAX_MESSAGES);
    },
    async requireSession(request, reply) {
      const { session, expired } = currentSession(request);
      if (!session) {
        if (expired) clearSessionCookie(reply);
        return redirect(reply, expired ? 'login?raison=expiree' : 'login');
      }
      if (session.stage === 'mfa') return redirect(reply, 'mfa');
      session.lastSeenAt = clock.now();
      signedIn.set(request, session);
      return undefined;
    },
    sessionOf(request) {
      const session = signedIn.get(request);
      // A programming error (a signed-in page registered outside a plugin with the hook): a 500.
      if (!session) throw new Error('sessionOf() called on a page without the requireSession hook');
      return session;
    },
  };
}
