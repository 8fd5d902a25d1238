import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import type { ErrorCode } from './errors.js';
import { deviceIdSchema, isoTime, PROTOCOL_HEADERS } from './sync-protocol.js';

/** An install joins a hub (a pairing code traded for a device credential) and leaves it. */
/**
 * A name the hub's operator reads in a terminal: no control character (an escape sequence could
 * rewrite the screen, hide the device's own id) and no bidirectional override (it reorders what follows).
 */
const shownName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]*$/u, 'no control characters or direction marks');

const pairBodySchema = z
  .object({
    code: z.string().trim().min(1).max(64).describe('The single-use code `courtier hub invite` printed.'),
    device_name: shownName,
    cabinet: z
      .object({ id: z.string().min(1).max(64), name: shownName })
      .optional()
      .describe(
        'To register this install’s cabinet (a code made with --new-cabinet for this very cabinet id); absent to join the code’s cabinet.',
      ),
  })
  .meta({ id: 'SyncPair' });
export type PairBody = z.infer<typeof pairBodySchema>;

export const pairResponseSchema = z
  .object({
    device_id: deviceIdSchema,
    device_secret: z.string().describe('Shown once: the device’s credential (Authorization: Bearer). The hub keeps only its hash.'),
    cabinet_id: z.string(),
    cabinet_name: z.string(),
    reconnected: z
      .boolean()
      .optional()
      .describe(
        'true: the install brought a cabinet the hub already has, with a code that joins it (a reconnect); it sends only what changed meanwhile.',
      ),
    hub_time: isoTime,
  })
  .meta({ id: 'SyncPaired' });
export type PairResponse = z.infer<typeof pairResponseSchema>;

export const leaveResponseSchema = z.object({ device_id: deviceIdSchema, revoked_at: isoTime, hub_time: isoTime }).meta({ id: 'SyncLeft' });
export type LeaveResponse = z.infer<typeof leaveResponseSchema>;

/** Why the hub refuses a pairing, besides a malformed request: what an install tells the person who typed the code. */
export const PAIRING_REFUSALS = [
  'invalid_pairing_code',
  'too_many_pairing_attempts',
  'cabinet_already_on_hub',
  'pairing_code_joins',
  'sync_protocol_too_old',
  'sync_protocol_unsupported',
] as const satisfies readonly ErrorCode[];

export const pairDevice = defineEndpoint({
  method: 'POST',
  surface: 'hub',
  path: '/pair',
  operationId: 'pairDevice',
  summary: 'Trade a pairing code for a device credential',
  description:
    'Registers the install’s cabinet (a code made with --new-cabinet for that cabinet id) or joins the code’s cabinet (a code made with --cabinet, used without `cabinet`). The code is single use; every refused attempt counts against the address’s throttle. The body is at most 4 KiB.',
  tag: 'Sync',
  auth: 'none',
  headers: PROTOCOL_HEADERS,
  body: pairBodySchema,
  responses: { 201: { description: 'Paired.', schema: pairResponseSchema } },
  errors: ['validation_error', ...PAIRING_REFUSALS, 'payload_too_large', 'hub_database_unavailable'],
});

export const leaveHub = defineEndpoint({
  method: 'DELETE',
  surface: 'hub',
  path: '/device',
  operationId: 'leaveHub',
  summary: 'This device leaves its cabinet',
  description:
    'What an install does when it disconnects: the calling device is revoked, at once and on every hub process, so its credential opens nothing any more. Leaving twice answers the first revocation.',
  tag: 'Sync',
  auth: 'device',
  headers: PROTOCOL_HEADERS,
  responses: { 200: { description: 'Revoked.', schema: leaveResponseSchema } },
  errors: ['hub_database_unavailable'],
});
