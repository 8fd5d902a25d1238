import { and, eq, lt, sql } from 'drizzle-orm';
import type { PairBody, PairResponse } from '../../shared/sync-protocol.js';
import { ApiError } from '../errors.js';
import { validationError } from '../http/validation.js';
import { newDeviceId, newDeviceSecret, newPairingCode, pairingCodeHash, sha256Hex } from './credentials.js';
import { hubTime, type HubDeps } from './deps.js';
import type { HubDb } from './database.js';
import { protocolRefusal } from './protocol.js';
import { assertStorable } from './storable.js';
import { hubCabinets, hubDevices, hubInvites, hubPairingFailures } from './schema.js';

/** A pairing code lives this long, and is used once. */
export const INVITE_TTL_MS = 15 * 60_000;
/** Wrong codes per address and window before 429: with 80-bit codes, guessing is hopeless anyway. */
export const PAIRING_ATTEMPTS_PER_WINDOW = 10;
export const PAIRING_WINDOW_MS = 15 * 60_000;

export interface Invite {
  code: string;
  cabinet_id: string | null;
  expires_at: string;
}

/** A new single-use code: to register an install's cabinet (cabinetId null) or to join one. */
export async function createInvite(deps: HubDeps, cabinetId: string | null): Promise<Invite> {
  const now = deps.clock.now();
  if (cabinetId !== null) {
    const [cabinet] = await deps.db.select({ id: hubCabinets.id }).from(hubCabinets).where(eq(hubCabinets.id, cabinetId));
    if (!cabinet) throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them); without --cabinet the code registers an install's cabinet.`);
  }
  const code = newPairingCode(deps.randomBytes);
  const expiresAt = new Date(now + INVITE_TTL_MS);
  // Codes long dead are of no use to anyone: cleared as new ones are made.
  await deps.db.delete(hubInvites).where(lt(hubInvites.expiresAt, new Date(now - 24 * 3600_000)));
  await deps.db.insert(hubInvites).values({ codeHash: pairingCodeHash(code), cabinetId, expiresAt, createdAt: new Date(now) });
  return { code, cabinet_id: cabinetId, expires_at: expiresAt.toISOString() };
}

interface Attempt {
  body: PairBody;
  protocol: number;
  /** The client's address, as the configured proxies tell it. */
  address: string;
}

/**
 * Trades a code for a device credential. Every attempt is counted against the address first (one
 * atomic upsert, so concurrent guesses from one address cannot slip past the limit on any hub
 * process), and taken back when the code turns out valid: what stays counted are wrong codes.
 */
export async function pair(deps: HubDeps, attempt: Attempt): Promise<PairResponse> {
  assertStorable({ device_name: attempt.body.device_name, cabinet: attempt.body.cabinet }, 'body');
  const now = deps.clock.now();
  const windowStart = new Date(Math.floor(now / PAIRING_WINDOW_MS) * PAIRING_WINDOW_MS);
  await countAttempt(deps.db, attempt.address, windowStart, now);
  const outcome = await deps.db.transaction(async (tx) => {
    const [invite] = await tx.select().from(hubInvites).where(eq(hubInvites.codeHash, pairingCodeHash(attempt.body.code))).for('update');
    if (!invite || invite.usedAt !== null || invite.expiresAt.getTime() <= now) return { error: invalidCode() };
    await tx
      .update(hubPairingFailures)
      .set({ count: sql`${hubPairingFailures.count} - 1` })
      .where(and(eq(hubPairingFailures.address, attempt.address), eq(hubPairingFailures.windowStart, windowStart)));
    const joined = invite.cabinetId === null ? await register(tx, attempt, now) : await join(tx, invite.cabinetId, attempt);
    if ('error' in joined) return joined;
    const secret = newDeviceSecret(deps.randomBytes);
    const deviceId = newDeviceId(deps.randomBytes);
    await tx.insert(hubDevices).values({ id: deviceId, cabinetId: joined.id, name: attempt.body.device_name, credentialHash: sha256Hex(secret), createdAt: new Date(now) });
    await tx.update(hubInvites).set({ usedAt: new Date(now) }).where(eq(hubInvites.codeHash, invite.codeHash));
    return { paired: { device_id: deviceId, device_secret: `${deviceId}.${secret}`, cabinet_id: joined.id, cabinet_name: joined.name, hub_time: hubTime(deps) } };
  });
  // Refusals after a valid code commit the uncounting, not the code's use: the code still works for the right request.
  if ('error' in outcome) throw outcome.error;
  return outcome.paired;
}

function invalidCode(): ApiError {
  return new ApiError('invalid_pairing_code', 'This pairing code is unknown, already used or expired (codes live 15 minutes); ask the hub’s operator for a new one.');
}

async function countAttempt(db: HubDb, address: string, windowStart: Date, now: number): Promise<void> {
  // Windows that have ended count for nothing: the table holds the current window only.
  await db.delete(hubPairingFailures).where(lt(hubPairingFailures.windowStart, windowStart));
  const [row] = await db
    .insert(hubPairingFailures)
    .values({ address, windowStart, count: 1 })
    .onConflictDoUpdate({ target: [hubPairingFailures.address, hubPairingFailures.windowStart], set: { count: sql`${hubPairingFailures.count} + 1` } })
    .returning({ count: hubPairingFailures.count });
  if ((row?.count ?? 0) <= PAIRING_ATTEMPTS_PER_WINDOW) return;
  const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + PAIRING_WINDOW_MS - now) / 1000));
  throw new ApiError('too_many_pairing_attempts', `Too many wrong pairing codes from this address; try again in ${retryAfter} s.`, undefined, { 'Retry-After': String(retryAfter) });
}

type Tx = Parameters<Parameters<HubDb['transaction']>[0]>[0];
type Joined = { id: string; name: string } | { error: ApiError };

/** A code made without --cabinet: the install brings its cabinet, which must be new to the hub. */
async function register(tx: Tx, attempt: Attempt, now: number): Promise<Joined> {
  const cabinet = attempt.body.cabinet;
  if (!cabinet) return { error: validationError([{ path: 'body.cabinet', message: 'this code registers a cabinet: send the install’s cabinet {id, name}' }]) };
  const tooOld = protocolRefusal(attempt.protocol, 1);
  if (tooOld) return { error: tooOld };
  const created = await tx
    .insert(hubCabinets)
    .values({ id: cabinet.id, name: cabinet.name, highestProtocol: attempt.protocol, createdAt: new Date(now) })
    .onConflictDoNothing()
    .returning({ id: hubCabinets.id });
  if (created.length === 0) {
    return { error: new ApiError('cabinet_already_on_hub', `The cabinet ${cabinet.id} is already on this hub: join it with a code made with --cabinet ${cabinet.id}.`) };
  }
  return { id: cabinet.id, name: cabinet.name };
}

/** A code made with --cabinet: the install joins that cabinet (or names the same one). */
async function join(tx: Tx, cabinetId: string, attempt: Attempt): Promise<Joined> {
  if (attempt.body.cabinet && attempt.body.cabinet.id !== cabinetId) {
    return { error: validationError([{ path: 'body.cabinet', message: 'this code joins another cabinet: leave cabinet out to join it' }]) };
  }
  const [cabinet] = await tx
    .update(hubCabinets)
    .set({ highestProtocol: sql`GREATEST(${hubCabinets.highestProtocol}, ${attempt.protocol})` })
    .where(eq(hubCabinets.id, cabinetId))
    .returning({ id: hubCabinets.id, name: hubCabinets.name, highestProtocol: hubCabinets.highestProtocol });
  if (!cabinet) return { error: invalidCode() };
  const tooOld = protocolRefusal(attempt.protocol, cabinet.highestProtocol);
  return tooOld ? { error: tooOld } : cabinet;
}
