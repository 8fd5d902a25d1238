import type { Sql, TransactionSql } from 'postgres';
import type { PairBody, PairResponse } from '../../shared/sync-pairing.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { newDeviceId, newDeviceSecret, newPairingCode, pairingCodeHash, sha256Hex } from './credentials.js';
import { recordHubAudit } from './audit.js';
import { hubTime, type HubDeps } from './deps.js';
import { throttleBucket } from '../platform/http/client-address.js';
import { protocolRefusal } from './protocol.js';
import { assertStorable } from './storable.js';

/** A pairing code lives this long, and is used once. */
export const INVITE_TTL_MS = 15 * 60_000;
/** Wrong codes per address and window before 429: with 80-bit codes, guessing is hopeless anyway. */
export const PAIRING_ATTEMPTS_PER_WINDOW = 10;
export const PAIRING_WINDOW_MS = 15 * 60_000;

export interface Invite {
  code: string;
  /** What the code does: join a cabinet the hub has, or register a new cabinet under the id the operator named. */
  purpose: 'join' | 'register';
  cabinet_id: string;
  expires_at: string;
}

/** What a new code is for: joining a cabinet the hub has, or registering the named cabinet of an install. */
export type InviteTarget = { join: string } | { register: string };

const CABINET_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * A new single-use code, always for one named cabinet: to join it, or to register it. A register
 * code is bound to the id the operator names (the broker reads it in the console or with courtier
 * sync status), so whoever holds the code can register that cabinet and no other: cabinet ids are
 * not secret (they are in signed PDF links), and a code that let the install choose would let
 * anyone holding one take a victim's id first.
 */
export async function createInvite(deps: HubDeps, target: InviteTarget): Promise<Invite> {
  const now = deps.clock.now();
  const cabinetId = 'join' in target ? target.join : target.register;
  const [cabinet] = await deps.sql`SELECT id FROM hub_cabinets WHERE id = ${cabinetId}`;
  if ('join' in target && !cabinet) {
    throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub: a code that registers it is needed first.`);
  }
  if ('register' in target) {
    if (!CABINET_ID.test(cabinetId)) throw validationError([{ path: 'new-cabinet', message: 'a cabinet id, as the install shows it' }]);
    if (cabinet)
      throw new ApiError(
        'cabinet_already_on_hub',
        `The cabinet ${cabinetId} is already on this hub: a new install of it needs a code that adds an install to it.`,
      );
  }
  const code = newPairingCode(deps.randomBytes);
  const expiresAt = new Date(now + INVITE_TTL_MS);
  // Codes long dead are of no use to anyone: cleared as new ones are made.
  await deps.sql`DELETE FROM hub_invites WHERE expires_at < ${new Date(now - 24 * 3600_000).toISOString()}::timestamptz`;
  await deps.sql`
    INSERT INTO hub_invites (code_hash, cabinet_id, registers_cabinet_id, expires_at, created_at)
    VALUES (${pairingCodeHash(code)}, ${'join' in target ? cabinetId : null}, ${'register' in target ? cabinetId : null},
            ${expiresAt.toISOString()}::timestamptz, ${new Date(now).toISOString()}::timestamptz)`;
  return { code, purpose: 'join' in target ? 'join' : 'register', cabinet_id: cabinetId, expires_at: expiresAt.toISOString() };
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
 * process), and taken back only when it pairs: a wrong code, and a valid code used for something
 * it is not for, stay counted.
 */
export async function pair(deps: HubDeps, attempt: Attempt): Promise<PairResponse> {
  assertStorable({ device_name: attempt.body.device_name, cabinet: attempt.body.cabinet }, 'body');
  const now = deps.clock.now();
  const windowStart = currentWindow(now);
  // Counted per address, an IPv6 one per /64: a client may take any address of its network.
  const counted = throttleBucket(attempt.address);
  await countAttempt(deps.sql, counted, windowStart, now);
  const outcome = await deps.sql.begin(async (tx): Promise<{ error: ApiError } | { paired: PairResponse }> => {
    const [invite] = await tx<
      { code_hash: string; cabinet_id: string | null; registers_cabinet_id: string | null; expires_at: string; used_at: string | null }[]
    >`
      SELECT code_hash, cabinet_id, registers_cabinet_id, expires_at, used_at FROM hub_invites
      WHERE code_hash = ${pairingCodeHash(attempt.body.code)} FOR UPDATE`;
    if (!invite || invite.used_at !== null || new Date(invite.expires_at).getTime() <= now) return { error: invalidCode() };
    const joined =
      invite.registers_cabinet_id !== null
        ? await register(tx, invite.registers_cabinet_id, attempt, now)
        : invite.cabinet_id !== null
          ? await join(tx, invite.cabinet_id, attempt)
          : { error: invalidCode() };
    if ('error' in joined) return { error: joined.error };
    await tx`
      UPDATE hub_pairing_failures SET count = count - 1
      WHERE address = ${counted} AND window_start = ${windowStart.toISOString()}::timestamptz`;
    const secret = newDeviceSecret(deps.randomBytes);
    const deviceId = newDeviceId(deps.randomBytes);
    await tx`
      INSERT INTO hub_devices (id, cabinet_id, name, credential_hash, created_at)
      VALUES (${deviceId}, ${joined.id}, ${attempt.body.device_name}, ${sha256Hex(secret)}, ${new Date(now).toISOString()}::timestamptz)`;
    // The registering install alone may bring its balance to the cabinet's wallet (hub/wallet.ts).
    if (invite.registers_cabinet_id !== null) await tx`UPDATE hub_cabinets SET registered_by = ${deviceId} WHERE id = ${joined.id}`;
    await tx`UPDATE hub_invites SET used_at = ${new Date(now).toISOString()}::timestamptz WHERE code_hash = ${invite.code_hash}`;
    const reconnected = invite.cabinet_id !== null && attempt.body.cabinet !== undefined;
    return {
      paired: {
        device_id: deviceId,
        device_secret: `${deviceId}.${secret}`,
        cabinet_id: joined.id,
        cabinet_name: joined.name,
        reconnected,
        hub_time: hubTime(deps),
      },
    };
  });
  const actor = { kind: 'anonymous' as const, id: null, label: null, address: attempt.address };
  const named = { device_name: attempt.body.device_name, ...(attempt.body.cabinet ? { cabinet_brought: attempt.body.cabinet.id } : {}) };
  // A refusal after a valid code leaves the code unused: it still works for what it was made for.
  if ('error' in outcome) {
    await recordHubAudit(deps, {
      action: 'hub.pairing_refused',
      result: 'failure',
      actor,
      details: { code: outcome.error.code, ...named },
    });
    throw outcome.error;
  }
  await recordHubAudit(deps, {
    action: 'hub.device_paired',
    actor,
    cabinetId: outcome.paired.cabinet_id,
    target: outcome.paired.device_id,
    details: named,
  });
  return outcome.paired;
}

function currentWindow(now: number): Date {
  return new Date(Math.floor(now / PAIRING_WINDOW_MS) * PAIRING_WINDOW_MS);
}

/**
 * Whether an address is over the limit already: checked before a pairing body is even read, so
 * that a client that keeps guessing costs the hub no parsing. The attempt itself is counted by pair().
 */
export async function pairingRefusedFrom(deps: HubDeps, address: string): Promise<ApiError | null> {
  const now = deps.clock.now();
  const windowStart = currentWindow(now);
  const [row] = await deps.sql<{ count: number }[]>`
    SELECT count FROM hub_pairing_failures WHERE address = ${throttleBucket(address)} AND window_start = ${windowStart.toISOString()}::timestamptz`;
  return (row?.count ?? 0) >= PAIRING_ATTEMPTS_PER_WINDOW ? tooManyAttempts(windowStart, now) : null;
}

function tooManyAttempts(windowStart: Date, now: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + PAIRING_WINDOW_MS - now) / 1000));
  return new ApiError(
    'too_many_pairing_attempts',
    `Too many wrong pairing codes from this address; try again in ${retryAfter} s.`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}

function invalidCode(): ApiError {
  return new ApiError(
    'invalid_pairing_code',
    'This pairing code is unknown, already used or expired (codes live 15 minutes); ask the hub’s operator for a new one.',
  );
}

async function countAttempt(sql: Sql, address: string, windowStart: Date, now: number): Promise<void> {
  const start = windowStart.toISOString();
  // Windows that have ended count for nothing: the table holds the current window only.
  await sql`DELETE FROM hub_pairing_failures WHERE window_start < ${start}::timestamptz`;
  const [row] = await sql<{ count: number }[]>`
    INSERT INTO hub_pairing_failures (address, window_start, count) VALUES (${address}, ${start}::timestamptz, 1)
    ON CONFLICT (address, window_start) DO UPDATE SET count = hub_pairing_failures.count + 1
    RETURNING count`;
  if ((row?.count ?? 0) <= PAIRING_ATTEMPTS_PER_WINDOW) return;
  throw tooManyAttempts(windowStart, now);
}

type Joined = { id: string; name: string } | { error: ApiError };

/** A code made with --new-cabinet: the install brings that very cabinet, new to the hub. */
async function register(tx: TransactionSql, cabinetId: string, attempt: Attempt, now: number): Promise<Joined> {
  const cabinet = attempt.body.cabinet;
  if (!cabinet)
    return {
      error: validationError([
        { path: 'body.cabinet', message: 'this code registers a cabinet: send the install’s cabinet {id, name} (courtier sync connect)' },
      ]),
    };
  if (cabinet.id !== cabinetId)
    return {
      error: new ApiError(
        'invalid_pairing_code',
        'This pairing code was made for another cabinet; ask the hub’s operator for a code made for yours.',
      ),
    };
  const tooOld = protocolRefusal(attempt.protocol, 1);
  if (tooOld) return { error: tooOld };
  const created = await tx`
    INSERT INTO hub_cabinets (id, name, highest_protocol, created_at)
    VALUES (${cabinet.id}, ${cabinet.name}, ${attempt.protocol}, ${new Date(now).toISOString()}::timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING id`;
  if (created.length === 0) {
    return {
      error: new ApiError(
        'cabinet_already_on_hub',
        `A cabinet with the id ${cabinet.id} is already on this hub; nothing was paired. Ask the hub’s operator, who alone can tell whether it is yours.`,
      ),
    };
  }
  return { id: cabinet.id, name: cabinet.name };
}

/**
 * A code made with --cabinet: a new install joins that cabinet (courtier sync join, which sends no
 * cabinet), or an install that holds that very cabinet connects again (sync connect, bringing it).
 */
async function join(tx: TransactionSql, cabinetId: string, attempt: Attempt): Promise<Joined> {
  // An install that brings another cabinet of its own would upload it into the code's cabinet.
  if (attempt.body.cabinet && attempt.body.cabinet.id !== cabinetId) {
    return {
      error: new ApiError(
        'pairing_code_joins',
        'This code joins another cabinet the hub has: it is for a new install joining that cabinet. Connecting this install’s own cabinet needs a code the hub’s operator makes for it (one that registers it, or that reconnects it).',
      ),
    };
  }
  const [cabinet] = await tx<{ id: string; name: string; highest_protocol: number }[]>`
    UPDATE hub_cabinets SET highest_protocol = GREATEST(highest_protocol, ${attempt.protocol}::int) WHERE id = ${cabinetId}
    RETURNING id, name, highest_protocol`;
  if (!cabinet) return { error: invalidCode() };
  const tooOld = protocolRefusal(attempt.protocol, cabinet.highest_protocol);
  return tooOld ? { error: tooOld } : { id: cabinet.id, name: cabinet.name };
}
