import { scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 64;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** scrypt from node:crypto; the result carries its parameters so that they can be raised later. */
export async function hashPassword(password: string, salt: Buffer): Promise<string> {
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algo, n, r, p, salt, key] = stored.split('$');
  if (algo !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash in the current format that no password matches (its key is all zeros, not derived):
 * checking a password against it costs what checking a real account does.
 */
export const UNMATCHABLE_HASH = [
  'scrypt',
  PARAMS.N,
  PARAMS.r,
  PARAMS.p,
  Buffer.alloc(16).toString('base64'),
  Buffer.alloc(KEY_LENGTH).toString('base64'),
].join('$');

/** No 0/O, 1/I/L: a temporary password is read aloud or copied from a screen by hand. */
const TEMPORARY_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/**
 * A temporary password an administrator hands over: 4 groups of 4 characters (about 79 bits).
 * Bytes past the largest multiple of the alphabet's size are skipped, so that every character is
 * equally likely; `random` gives more bytes when those run out.
 */
export function temporaryPassword(random: (size: number) => Buffer): string {
  const limit = 256 - (256 % TEMPORARY_ALPHABET.length);
  const chars: string[] = [];
  while (chars.length < 16) {
    for (const byte of random(32)) {
      if (byte < limit && chars.length < 16) chars.push(TEMPORARY_ALPHABET.charAt(byte % TEMPORARY_ALPHABET.length));
    }
  }
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}
