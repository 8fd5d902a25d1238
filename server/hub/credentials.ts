import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Pairing codes and device credentials: how they are made, written and compared. The hub keeps
 * only SHA-256 hashes of both.
 */

/** Crockford's base32: no I, L, O or U, so that a code read aloud or copied by hand survives. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 16 characters of 5 bits: 80 bits, against 10 guesses per address per 15 minutes. */
const CODE_LENGTH = 16;

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A new pairing code, in groups of four: `K7QM-2XPA-9RTD-HB3W`. */
export function newPairingCode(randomBytes: (size: number) => Buffer): string {
  const bytes = randomBytes((CODE_LENGTH * 5) / 8);
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return text.match(/.{4}/g)?.join('-') ?? text;
}

/** What a person may have typed for a code: any case, spaces or dashes, O for 0 and I or L for 1. */
function normalisePairingCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

export function pairingCodeHash(typed: string): string {
  return sha256Hex(normalisePairingCode(typed));
}

/** A device's secret: 32 random bytes, base64url. The credential is `<device id>.<secret>`. */
export function newDeviceSecret(randomBytes: (size: number) => Buffer): string {
  return randomBytes(32).toString('base64url');
}

/** A version 4 UUID from the injected randomness. */
export function newDeviceId(randomBytes: (size: number) => Buffer): string {
  const bytes = randomBytes(16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const CREDENTIAL = /^Bearer\s+([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})\s*$/i;

/** `Authorization: Bearer <device id>.<secret>` → its parts; null when it is not of that shape. */
export function parseDeviceCredential(authorization: string): { deviceId: string; secret: string } | null {
  const match = CREDENTIAL.exec(authorization);
  if (!match?.[1] || !match[2]) return null;
  return { deviceId: match[1].toLowerCase(), secret: match[2] };
}

/** Compares the secret's SHA-256 with the stored one in constant time. */
export function secretMatches(secret: string, storedHashHex: string): boolean {
  const stored = Buffer.from(storedHashHex, 'hex');
  const presented = createHash('sha256').update(secret).digest();
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}
