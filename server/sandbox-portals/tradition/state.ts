import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie } from '../../platform/http/cookies.js';
import { sameText } from '../sandbox/portal.js';
import { captchaText } from './captcha.js';
import type { Priced, ProductCode } from './products.js';

/** Idle time after which the portal forgets who is logged in, mid-wizard too. */
const SESSION_IDLE_MS = 3 * 60_000;
const COOKIE = 'trd_sid';
/** How much the portal keeps at most; the oldest go first (a long-running demo server). */
export interface TraditionLimits {
  sessions: number;
  drafts: number;
  loginForms: number;
  captchasShown: number;
}
const DEFAULT_LIMITS: TraditionLimits = { sessions: 1_000, drafts: 2_000, loginForms: 1_000, captchasShown: 50 };
export const CAPTCHA_TRIES = 3;

export interface TraditionAccount {
  password: string;
  /** A captcha at every login. */
  captcha: boolean;
  displayName: string;
}

export interface Session {
  id: string;
  user: string;
  displayName: string;
  stage: 'captcha' | 'ok';
  lastSeenAt: number;
  captcha: { id: string; text: string; triesLeft: number; viewState: string | null } | null;
}

/** A broker's quote, kept under its number from the first step to its PDF, across logins. */
export interface Draft {
  no: string;
  owner: string;
  product: ProductCode;
  /** Started on the redesigned portal: its steps are the redesign's. */
  redesign: boolean;
  stepIndex: number;
  values: Record<string, string>;
  /** The view state the last page of this draft carries; consumed by the next POST. */
  viewState: string | null;
  counter: number;
  priced: (Priced & { pricedAtMs: number; views: number }) | null;
}

/** Evicts a capped map's oldest entries (insertion order). */
function cap<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done) return;
    map.delete(oldest.value);
  }
}

/**
 * What one Mutuelle Tradition portal keeps: its sessions (3 minutes idle), the brokers' drafts,
 * the login forms it handed out, the captchas it showed (for the tester's phone), and the one-use
 * view states that every form carries (an HMAC over what the form is for and a counter).
 */
export function createState(options: {
  base: string;
  clock: { now(): number };
  randomBytes: (size: number) => Buffer;
  limits?: Partial<TraditionLimits>;
}) {
  const { clock, randomBytes } = options;
  const limits: TraditionLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const cookiePath = options.base === '' ? '/' : options.base;
  const secret = randomBytes(32);
  const sessions = new Map<string, Session>();
  const drafts = new Map<string, Draft>();
  const loginForms = new Map<string, number>();
  const captchasShown: { text: string; shownAtMs: number }[] = [];
  let counter = 0;

  const sign = (purpose: string) => {
    counter += 1;
    return createHmac('sha256', secret).update(`${purpose}:${counter}`).digest('base64url').slice(0, 32);
  };

  /** A one-use token matches its expected value; missing or other is refused. */
  const consume = (expected: string | null, given: unknown): boolean =>
    expected !== null && typeof given === 'string' && sameText(expected, given);

  function currentSession(request: FastifyRequest): { session?: Session; expired: boolean } {
    const id = readCookie(request, COOKIE);
    const session = id === undefined ? undefined : sessions.get(id);
    if (!session) return { expired: false };
    if (clock.now() - session.lastSeenAt > SESSION_IDLE_MS) {
      sessions.delete(session.id);
      return { expired: true };
    }
    session.lastSeenAt = clock.now();
    return { session, expired: false };
  }

  return {
    currentSession,
    /** A login form's view state. */
    loginViewState(): string {
      const token = sign('login');
      loginForms.set(token, clock.now());
      cap(loginForms, limits.loginForms);
      return token;
    },
    consumeLoginViewState(given: unknown): boolean {
      if (typeof given !== 'string' || !loginForms.has(given)) return false;
      loginForms.delete(given);
      return true;
    },
    openSession(reply: FastifyReply, user: string, account: TraditionAccount): Session {
      const session: Session = {
        id: randomBytes(24).toString('base64url'),
        user,
        displayName: account.displayName,
        stage: account.captcha ? 'captcha' : 'ok',
        lastSeenAt: clock.now(),
        captcha: null,
      };
      sessions.set(session.id, session);
      cap(sessions, limits.sessions);
      reply.header('Set-Cookie', `${COOKIE}=${session.id}; Path=${cookiePath}; HttpOnly; SameSite=Lax`);
      return session;
    },
    endSession(reply: FastifyReply, session: Session | undefined): void {
      if (session) sessions.delete(session.id);
      reply.header('Set-Cookie', `${COOKIE}=; Path=${cookiePath}; HttpOnly; SameSite=Lax; Max-Age=0`);
    },
    /** Draws a new captcha for the session (a wrong answer gets a new one). */
    newCaptcha(session: Session, triesLeft: number): void {
      const text = captchaText(randomBytes);
      session.captcha = { id: randomBytes(8).toString('hex'), text, triesLeft, viewState: null };
      captchasShown.unshift({ text, shownAtMs: clock.now() });
      captchasShown.length = Math.min(captchasShown.length, limits.captchasShown);
    },
    captchaViewState(session: Session): string {
      const token = sign(`captcha:${session.captcha?.id ?? ''}`);
      if (session.captcha) session.captcha.viewState = token;
      return token;
    },
    consumeCaptchaViewState(session: Session, given: unknown): boolean {
      const ok = consume(session.captcha?.viewState ?? null, given);
      if (session.captcha) session.captcha.viewState = null;
      return ok;
    },
    captchasShown: (): readonly { text: string; shownAtMs: number }[] => captchasShown,
    newDraft(owner: string, product: ProductCode, redesign: boolean): Draft {
      const no = `T${String(randomBytes(4).readUInt32BE(0) % 100_000_000).padStart(8, '0')}`;
      const draft: Draft = { no, owner, product, redesign, stepIndex: 0, values: {}, viewState: null, counter: 0, priced: null };
      drafts.set(no, draft);
      cap(drafts, limits.drafts);
      return draft;
    },
    ownDraft(owner: string, no: string): Draft | undefined {
      const draft = drafts.get(no);
      return draft?.owner === owner ? draft : undefined;
    },
    /** The broker's latest quote not yet priced: the home page offers to resume it. */
    latestOpenDraft(owner: string): Draft | undefined {
      let found: Draft | undefined;
      for (const draft of drafts.values()) if (draft.owner === owner && !draft.priced) found = draft;
      return found;
    },
    draftViewState(draft: Draft): string {
      draft.counter += 1;
      draft.viewState = sign(`devis:${draft.no}:${draft.stepIndex}:${draft.counter}`);
      return draft.viewState;
    },
    consumeDraftViewState(draft: Draft, given: unknown): boolean {
      const ok = consume(draft.viewState, given);
      draft.viewState = null;
      return ok;
    },
  };
}

export type PortalState = ReturnType<typeof createState>;
