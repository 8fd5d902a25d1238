import { ApiError } from '../errors.js';
import type { HubDeps } from './deps.js';
import { notifyRevoked } from './store.js';

/** What the hub's operator asks from the command line (`courtier hub cabinets|devices …`). */

export interface HubCabinetSummary {
  cabinet_id: string;
  name: string;
  devices: number;
  /** Distinct records (kind, record id) the cabinet synced. */
  records: number;
  /** When a device of the cabinet last called the hub (to the minute), null if none ever did. */
  last_sync_at: string | null;
}

/** A timestamptz as the hub's client reads it (text), in the bodies' ISO form. */
const isoOrNull = (at: string | null) => (at === null ? null : new Date(at).toISOString());

export async function listHubCabinets(deps: HubDeps): Promise<HubCabinetSummary[]> {
  const rows = await deps.sql<{ id: string; name: string; devices: number; records: number; last_sync_at: string | null }[]>`
    SELECT c.id, c.name,
           (SELECT count(*)::int FROM hub_devices d WHERE d.cabinet_id = c.id AND d.revoked_at IS NULL) AS devices,
           (SELECT count(*)::int FROM hub_records r WHERE r.cabinet_id = c.id) AS records,
           (SELECT max(d.last_seen_at) FROM hub_devices d WHERE d.cabinet_id = c.id) AS last_sync_at
    FROM hub_cabinets c ORDER BY c.name, c.id`;
  return rows.map((r) => ({
    cabinet_id: r.id,
    name: r.name,
    devices: r.devices,
    records: r.records,
    last_sync_at: isoOrNull(r.last_sync_at),
  }));
}

export interface HubDeviceSummary {
  device_id: string;
  name: string;
  last_seen_at: string | null;
  revoked: boolean;
}

export async function listHubDevices(deps: HubDeps, cabinetId: string): Promise<HubDeviceSummary[]> {
  const [cabinet] = await deps.sql`SELECT id FROM hub_cabinets WHERE id = ${cabinetId}`;
  if (!cabinet) throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them).`);
  const devices = await deps.sql<{ id: string; name: string; last_seen_at: string | null; revoked_at: string | null }[]>`
    SELECT id, name, last_seen_at, revoked_at FROM hub_devices WHERE cabinet_id = ${cabinetId} ORDER BY created_at, id`;
  return devices.map((d) => ({
    device_id: d.id,
    name: d.name,
    last_seen_at: isoOrNull(d.last_seen_at),
    revoked: d.revoked_at !== null,
  }));
}

/**
 * Revokes a device: its next request, on any hub process, is refused (the device check reads the
 * row every time). Revoking a revoked device keeps its first revocation time.
 */
export async function revokeHubDevice(
  deps: HubDeps,
  deviceId: string,
  cabinetId?: string,
): Promise<HubDeviceSummary & { cabinet_id: string; revoked_at: string }> {
  // With a cabinet (a device leaving by itself), only that cabinet's device.
  const ofCabinet = cabinetId === undefined ? deps.sql`` : deps.sql`AND cabinet_id = ${cabinetId}`;
  const revoked = await deps.sql`
    UPDATE hub_devices SET revoked_at = ${new Date(deps.clock.now()).toISOString()}::timestamptz
    WHERE id = ${deviceId} ${ofCabinet} AND revoked_at IS NULL
    RETURNING id`;
  // Its long polls, on every hub process, end now rather than at their wait's end.
  if (revoked.length > 0) await notifyRevoked(deps.sql, deviceId);
  const [device] = await deps.sql<
    { id: string; cabinet_id: string; name: string; last_seen_at: string | null; revoked_at: string | null }[]
  >`
    SELECT id, cabinet_id, name, last_seen_at, revoked_at FROM hub_devices WHERE id = ${deviceId} ${ofCabinet}`;
  if (!device?.revoked_at) throw new ApiError('not_found', `No device ${deviceId} on this hub.`);
  return {
    device_id: device.id,
    cabinet_id: device.cabinet_id,
    name: device.name,
    last_seen_at: isoOrNull(device.last_seen_at),
    revoked: true,
    revoked_at: new Date(device.revoked_at).toISOString(),
  };
}

/**
 * Sets the newest protocol a cabinet's devices spoke, which the hub otherwise only raises: after a
 * rollback of the cabinet's installs, so that the older version is served again.
 */
export async function resetCabinetProtocol(
  deps: HubDeps,
  cabinetId: string,
  protocol: number,
): Promise<{ cabinet_id: string; highest_protocol: number }> {
  const [cabinet] = await deps.sql<{ id: string }[]>`
    UPDATE hub_cabinets SET highest_protocol = ${protocol}::int WHERE id = ${cabinetId} RETURNING id`;
  if (!cabinet) throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them).`);
  return { cabinet_id: cabinet.id, highest_protocol: protocol };
}

/**
 * After the hub's database was restored from a backup: every cabinet gets a new epoch, and each
 * install, at its next answer, pulls its cabinet again from the start and sends again what it made
 * that the backup may lack. Returns how many cabinets.
 */
export async function markRestored(deps: HubDeps): Promise<number> {
  const rows = await deps.sql`UPDATE hub_cabinets SET epoch = gen_random_uuid()::text RETURNING id`;
  return rows.length;
}
