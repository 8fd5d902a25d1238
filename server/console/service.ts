import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { ConsoleSession } from '../../shared/oauth.js';
import type { Clock, Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { throttleBucket } from '../platform/http/client-address.js';
import { describeUser, verifyUserPassword, type UserIdentity } from '../tenancy/service.js';
import * as store from './store.js';

export const SESSION_COOKIE = 'courtier_session';
export const SESSION_TTL_MS = 12 * 3600_000;

/** A live console session and who it belongs to. */
export interface SignedInUser extends UserIdentity {
  sessionId: string;
  expiresAt: number;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Where an attempt comes from: its address, and whether it is this machine (loopback, no forwarding). */
export interface AttemptOrigin {
  address: string;
  local: boolean;
}

/**
 * Failed sign-ins counted per account and per client address in fixed windows: past the limit,
 * further attempts are refused before the password is even checked. An account's failures are
 * counted apart for this machine and for the network, so that a LAN neighbour typing wrong
 * passwords never locks the person at the machine out of their own account. Addresses are counted
 * one by one, and an IPv6 address's /64 as a whole too, with a higher limit: a machine may take any
 * address of its network, yet an office's machines share one /64.
 */
export interface LoginThrottle {
  /** Seconds to wait, or 0 when an attempt may go ahead. */
  retryAfter(email: string, origin: AttemptOrigin): number;
  recordFailure(email: string, origin: AttemptOrigin): void;
  recordSuccess(email: string, origin: AttemptOrigin): void;
  /** What an address reached the limit as (itself, or its /64) and how many failures, or null. */
  limitedAddress(address: string): { key: string; count: number } | null;
}

export function createLoginThrottle(
  clock: Clock,
  limits = { perAccount: 5, perIp: 20, perNetwork: 100, windowMs: 15 * 60_000 },
): LoginThrottle {
  const accountKey = (email: string, origin: AttemptOrigin) => `account:${origin.local ? 'here' : 'network'}:${email.toLowerCase()}`;
  /** The address, and its network when that is another key (an IPv6 /64). */
  const addressKeys = (address: string) => {
    const network = throttleBucket(address);
    return network === address
      ? [{ key: address, limit: limits.perIp }]
      : [
          { key: address, limit: limits.perIp },
          { key: network, limit: limits.perNetwork },
        ];
  };
  const failures = new Map<string, { start: number; count: number }>();
  const windowStart = (now: number) => now - (now % limits.windowMs);
  const count = (key: string, now: number) => {
    const entry = failures.get(key);
    return entry && entry.start === windowStart(now) ? entry.count : 0;
  };
  const bump = (key: string, now: number) => {
    const start = windowStart(now);
    if (failures.size > 10_000) for (const [k, e] of failures) if (e.start !== start) failures.delete(k);
    failures.set(key, { start, count: count(key, now) + 1 });
  };
  return {
    retryAfter(email, origin) {
      const now = clock.now();
      const blocked =
        count(accountKey(email, origin), now) >= limits.perAccount ||
        addressKeys(origin.address).some(({ key, limit }) => count(`ip:${key}`, now) >= limit);
      return blocked ? Math.ceil((windowStart(now) + limits.windowMs - now) / 1000) : 0;
    },
    recordFailure(email, origin) {
      const now = clock.now();
      bump(accountKey(email, origin), now);
      for (const { key } of addressKeys(origin.address)) bump(`ip:${key}`, now);
    },
    recordSuccess(email, origin) {
      failures.delete(accountKey(email, origin));
    },
    limitedAddress(address) {
      const now = clock.now();
      for (const { key, limit } of addressKeys(address)) {
        const failed = count(`ip:${key}`, now);
        if (failed >= limit) return { key, count: failed };
      }
      return null;
    },
  };
}

/**
 * Signs in with an email and password. An email may have accounts in several cabinets: when the
 * password opens more than one, the person chooses (409 cabinet_choice_required lists only the
 * cabinets this password opens) and signs in again with `cabinetId`.
 */
export async function signIn(
  deps: Deps,
  throttle: LoginThrottle,
  input: { email: string; password: string; cabinetId?: string; origin: AttemptOrigin },
): Promise<{ token: string; user: SignedInUser }> {
  const wait = throttle.retryAfter(input.email, input.origin);
  if (wait > 0) {
    throw new ApiError('too_many_login_attempts', `Too many failed sign-ins; try again in ${Math.ceil(wait / 60)} min.`, undefined, {
      'Retry-After': String(wait),
    });
  }
  const check = await verifyUserPassword(deps, input.email, input.password, input.cabinetId);
  if (check.kind === 'none') {
    throttle.recordFailure(input.email, input.origin);
    throw new ApiError('invalid_credentials', 'The email or the password is wrong.');
  }
  if (check.kind === 'disabled') {
    throw new ApiError('account_disabled', 'This account is disabled: ask an administrator of your cabinet to enable it again.');
  }
  if (check.kind === 'several') {
    throw new ApiError(
      'cabinet_choice_required',
      'This email and password open accounts in several cabinets: choose the cabinet to sign in to.',
      check.cabinets,
    );
  }
  // Failures are counted per email: a success clears them only when the email has no other
  // account, else a person with an account in one cabinet could keep clearing the count of
  // someone guessing at the same email's account in another.
  if (!check.shared) throttle.recordSuccess(input.email, input.origin);
  return openSession(deps, check.identity);
}

/** A new console session for someone already proven to be this user (a password, the desktop's one-time token). */
export function openSession(deps: Deps, identity: UserIdentity): { token: string; user: SignedInUser } {
  const token = deps.randomBytes(32).toString('base64url');
  const now = deps.clock.now();
  const row: store.SessionRow = {
    id: randomUUID(),
    tokenHash: hashToken(token),
    userId: identity.userId,
    cabinetId: identity.cabinetId,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
    revokedAt: null,
  };
  store.insertSession(deps.db.orm, row);
  return { token, user: { ...identity, sessionId: row.id, expiresAt: row.expiresAt } };
}

/** The user behind a session cookie's value, or null when it is unknown, expired or signed out. */
export function findSignedInUser(deps: Deps, token: string | undefined): SignedInUser | null {
  if (!token) return null;
  const session = store.findSessionByHash(deps.db.orm, hashToken(token));
  if (!session || session.revokedAt !== null || session.expiresAt <= deps.clock.now()) return null;
  const identity = describeUser(deps, session.userId);
  return identity ? { ...identity, sessionId: session.id, expiresAt: session.expiresAt } : null;
}

export function signOut(deps: Deps, token: string | undefined): void {
  if (!token) return;
  const session = store.findSessionByHash(deps.db.orm, hashToken(token));
  if (session) store.revokeSession(deps.db.orm, session.id, deps.clock.now());
}

/** Ends a user's sessions at once (a reset password, a disabled account), or all but the caller's own. */
export function endSessionsOfUser(deps: Pick<Deps, 'db' | 'clock'>, userId: string, exceptSessionId?: string): number {
  return store.revokeSessionsOfUser(deps.db.orm, userId, deps.clock.now(), exceptSessionId);
}

/** Deletes a user's sessions, before the user is deleted. */
export function forgetSessionsOfUser(deps: Pick<Deps, 'db'>, userId: string): void {
  store.deleteSessionsOfUser(deps.db.orm, userId);
}

export function describeSession(user: SignedInUser): ConsoleSession {
  return {
    user: { id: user.userId, email: user.email, role: user.role, must_change_password: user.mustChangePassword },
    cabinet: { id: user.cabinetId, name: user.cabinetName },
    expires_at: toIso(user.expiresAt),
  };
}

/** A CSRF token bound to one session and one form (here: one consent request). */
export function csrfToken(deps: Deps, sessionId: string, purpose: string): string {
  return createHmac('sha256', deps.keys.csrf).update(`${sessionId}|${purpose}`).digest('base64url');
}

export function csrfTokenMatches(deps: Deps, sessionId: string, purpose: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  const expected = Buffer.from(csrfToken(deps, sessionId, purpose));
  const actual = Buffer.from(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
