import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie } from '../../platform/http/cookies.js';
import type { Offer } from './pricing.js';
import type { Answers } from './validation.js';
import type { ProductCode, StepSpec } from './wizard.js';

/**
 * Horizon Direct's state, all of it in one plugin instance: sessions (a token in an HttpOnly,
 * SameSite=Strict cookie), the approvals pushed to the phone, and the quotes. Every collection is
 * capped: the oldest entries go first, so a long-running demo server does not grow.
 */

const TOKEN_COOKIE = 'hz_token';
const SESSION_IDLE_MS = 30 * 60_000;
export const APPROVAL_VALIDITY_MS = 2 * 60_000;
const MAX_SESSIONS = 500;
const MAX_APPROVALS = 50;
const MAX_QUOTES = 2_000;

export interface HorizonAccount {
  password: string;
  /** Every login waits for an approval in the Horizon app. */
  appApproval: boolean;
  displayName: string;
}

export interface Session {
  token: string;
  login: string;
  displayName: string;
  stage: 'approval' | 'ok';
  lastSeenAt: number;
}

export interface Approval {
  id: string;
  token: string;
  login: string;
  requestedAt: number;
  approved: boolean;
}

export type ApprovalStatus = 'pending' | 'approved' | 'expired';

export interface Quote {
  id: string;
  reference: string;
  owner: string;
  product: ProductCode;
  steps: readonly StepSpec[];
  answers: Answers;
  /** How many steps are answered. */
  answered: number;
  /** Every formula, once the last step is answered. */
  offers: Offer[] | null;
  /** The formula the broker chose: the quote's documents exist from then on. */
  chosen: string | null;
  createdAtMs: number;
}

/** Adds to a capped map, forgetting the oldest entries beyond `max`. */
function capped<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}

export function createHorizonState(options: { base: string; clock: { now(): number }; randomBytes: (size: number) => Buffer }) {
  const { clock, randomBytes } = options;
  const cookiePath = options.base === '' ? '/' : options.base;
  const sessions = new Map<string, Session>();
  const approvals = new Map<string, Approval>();
  const quotes = new Map<string, Quote>();

  const approvalStatus = (approval: Approval): ApprovalStatus =>
    approval.approved ? 'approved' : clock.now() - approval.requestedAt > APPROVAL_VALIDITY_MS ? 'expired' : 'pending';

  return {
    clock,
    sessionOf(request: FastifyRequest): Session | undefined {
      const token = readCookie(request, TOKEN_COOKIE);
      const session = token === undefined ? undefined : sessions.get(token);
      if (!session) return undefined;
      if (clock.now() - session.lastSeenAt > SESSION_IDLE_MS) {
        sessions.delete(session.token);
        return undefined;
      }
      session.lastSeenAt = clock.now();
      return session;
    },
    openSession(reply: FastifyReply, login: string, account: HorizonAccount): Session {
      const session: Session = {
        token: randomBytes(24).toString('base64url'),
        login,
        displayName: account.displayName,
        stage: account.appApproval ? 'approval' : 'ok',
        lastSeenAt: clock.now(),
      };
      capped(sessions, session.token, session, MAX_SESSIONS);
      reply.header('Set-Cookie', `${TOKEN_COOKIE}=${session.token}; Path=${cookiePath}; HttpOnly; SameSite=Strict`);
      return session;
    },
    /** Forgets a session, keeping the browser's cookie (a new one is about to replace it). */
    forgetSession(session: Session | undefined): void {
      if (session) sessions.delete(session.token);
    },
    endSession(reply: FastifyReply, session: Session | undefined): void {
      if (session) sessions.delete(session.token);
      reply.header('Set-Cookie', `${TOKEN_COOKIE}=; Path=${cookiePath}; HttpOnly; SameSite=Strict; Max-Age=0`);
    },
    /** Pushes an approval request to the phone; an earlier one of the session is replaced. */
    requestApproval(session: Session): Approval {
      for (const [id, a] of approvals) if (a.token === session.token) approvals.delete(id);
      const approval = {
        id: randomBytes(9).toString('base64url'),
        token: session.token,
        login: session.login,
        requestedAt: clock.now(),
        approved: false,
      };
      capped(approvals, approval.id, approval, MAX_APPROVALS);
      return approval;
    },
    approvalOf(session: Session): { approval: Approval; status: ApprovalStatus } | undefined {
      const approval = [...approvals.values()].find((a) => a.token === session.token);
      return approval ? { approval, status: approvalStatus(approval) } : undefined;
    },
    /** The phone's "Approuver": false when the request is unknown or expired. */
    approve(id: string): boolean {
      const approval = approvals.get(id);
      if (!approval || approvalStatus(approval) !== 'pending') return false;
      approval.approved = true;
      const session = sessions.get(approval.token);
      if (session) session.stage = 'ok';
      return true;
    },
    /** The phone's list, newest first. */
    phoneApprovals(): { approval: Approval; status: ApprovalStatus }[] {
      return [...approvals.values()].reverse().map((approval) => ({ approval, status: approvalStatus(approval) }));
    },
    newQuote(session: Session, product: ProductCode, steps: readonly StepSpec[]): Quote {
      const id = randomBytes(8).toString('hex');
      const quote: Quote = {
        id,
        reference: `HZ-${id.slice(0, 8).toUpperCase()}`,
        owner: session.login,
        product,
        steps,
        answers: {},
        answered: 0,
        offers: null,
        chosen: null,
        createdAtMs: clock.now(),
      };
      capped(quotes, id, quote, MAX_QUOTES);
      return quote;
    },
    /** The session's broker's quote; another broker's is unknown. */
    quoteOf(session: Session, id: string): Quote | undefined {
      const quote = quotes.get(id);
      return quote?.owner === session.login ? quote : undefined;
    },
  };
}

export type HorizonState = ReturnType<typeof createHorizonState>;
