import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { RequestCheck } from '../plugins/auth.js';
import { parseDeviceCredential, secretMatches } from './credentials.js';
import type { HubDeps } from './deps.js';

/** Who called a hub route: set by the device check before the handler runs. */
export interface AuthenticatedDevice {
  deviceId: string;
  cabinetId: string;
  /** The cabinet's newest protocol when the request came in. */
  highestProtocol: number;
  /** The cabinet's epoch, sent with the answer (HUB_EPOCH_HEADER). */
  epoch: string;
  /** The highest change number of this device stored when the request came in. */
  lastNumber: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    device: AuthenticatedDevice | null;
  }
}

/** A device's last_seen_at is written at most this often: one write a minute, not one per request. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

/**
 * The check of auth kind `device`: `Authorization: Bearer <device id>.<secret>`. The device row is
 * read from PostgreSQL on every request (no cache), so a revocation by `courtier hub devices
 * revoke` takes effect at once on every hub process.
 */
export function deviceCheck(deps: HubDeps): RequestCheck {
  return async (request) => {
    request.device = await authenticateDevice(deps, request.headers.authorization);
  };
}

async function authenticateDevice(deps: HubDeps, authorization: string | undefined): Promise<AuthenticatedDevice> {
  if (authorization === undefined || authorization === '') {
    throw new ApiError(
      'missing_credentials',
      'Send the device credential as Authorization: Bearer <device id>.<secret> (received at pairing).',
    );
  }
  const presented = parseDeviceCredential(authorization);
  if (!presented) throw unknownDevice();
  const [device] = await deps.sql<
    {
      cabinet_id: string;
      credential_hash: string;
      revoked_at: string | null;
      last_seen_at: string | null;
      highest_protocol: number;
      epoch: string;
      last_number: string;
    }[]
  >`
    SELECT d.cabinet_id, d.credential_hash, d.revoked_at, d.last_seen_at, c.highest_protocol, c.epoch, d.last_number
    FROM hub_devices d JOIN hub_cabinets c ON c.id = d.cabinet_id
    WHERE d.id = ${presented.deviceId}`;
  // The secret is compared before revocation is told: a revoked device's id alone learns nothing.
  if (!device || !secretMatches(presented.secret, device.credential_hash)) throw unknownDevice();
  if (device.revoked_at !== null)
    throw new ApiError(
      'device_revoked',
      'This device was revoked on the hub: nothing syncs from or to it any more. Pair it again with a new code if that was a mistake.',
    );
  const now = deps.clock.now();
  if (device.last_seen_at === null || now - new Date(device.last_seen_at).getTime() >= LAST_SEEN_RESOLUTION_MS) {
    await markSeen(deps, presented.deviceId, now);
  }
  return {
    deviceId: presented.deviceId,
    cabinetId: device.cabinet_id,
    highestProtocol: device.highest_protocol,
    epoch: device.epoch,
    lastNumber: Number(device.last_number),
  };
}

async function markSeen(deps: HubDeps, deviceId: string, now: number): Promise<void> {
  // Conditional, so that two processes seeing the same device in the same minute write once.
  await deps.sql`
    UPDATE hub_devices SET last_seen_at = ${new Date(now).toISOString()}::timestamptz
    WHERE id = ${deviceId} AND (last_seen_at IS NULL OR last_seen_at <= ${new Date(now - LAST_SEEN_RESOLUTION_MS).toISOString()}::timestamptz)`;
}

function unknownDevice(): ApiError {
  return new ApiError(
    'invalid_device_credential',
    'This device credential is not known to this hub; pair the install again with a new code.',
  );
}

/** The authenticated device of a device route (the auth plugin ran its check). */
export function callerOf(request: FastifyRequest): AuthenticatedDevice {
  if (!request.device) throw new Error(`${request.routeOptions.config.endpoint?.operationId ?? request.url} is not a device route`);
  return request.device;
}
