import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Checks a delivery as a receiver should (part 6.3): the Service-Signature header's t= timestamp
 * is within the tolerance of now, and at least one v1= entry is the HMAC-SHA256, keyed with one of
 * the secrets (whsec_… as UTF-8), of "<t>.<raw body>". Compares in constant time. Pass the raw
 * bytes exactly as received, before any JSON parsing.
 */
export type WebhookVerification =
  | { valid: true; timestamp: number }
  | { valid: false; reason: 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'no_matching_signature' };

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value.join(',') : value;
}

export function signWebhookPayload(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(rawBody).digest('hex');
}

export function verifyWebhook(
  rawBody: string | Buffer,
  headers: HeaderBag,
  secrets: readonly string[],
  options: { toleranceSeconds?: number; now?: number } = {},
): WebhookVerification {
  const signature = header(headers, 'service-signature');
  if (!signature) return { valid: false, reason: 'missing_signature' };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of signature.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return { valid: false, reason: 'malformed_signature' };
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return { valid: false, reason: 'timestamp_out_of_tolerance' };
  for (const secret of secrets) {
    const expected = Buffer.from(signWebhookPayload(secret, timestamp, rawBody), 'hex');
    for (const candidate of candidates) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) return { valid: true, timestamp };
    }
  }
  return { valid: false, reason: 'no_matching_signature' };
}
