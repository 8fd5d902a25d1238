import { throttleBucket } from '../platform/http/client-address.js';
import type { LanAddressBlock } from '../../shared/lan.js';
import { recordAudit, SYSTEM_ACTOR, type AuditActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import * as store from './store.js';

/** How long an address that kept failing to sign in is shut out of the LAN listener. */
const LAN_BLOCK_MS = 60 * 60_000;

/**
 * Blocks an address on the office LAN listener (it reached the sign-in throttle's per-address
 * limit there): Home Assistant's ip_ban, but timed, and never applied to loopback, so that the
 * person at the machine can always get in and lift it.
 */
export function blockLanAddress(deps: Pick<Deps, 'db' | 'clock' | 'keys'>, address: string, failures: number): void {
  const now = deps.clock.now();
  const current = store.findAddressBlock(deps.db.orm, address);
  if (current && current.blockedUntil > now) return;
  store.saveAddressBlock(deps.db.orm, { address, blockedAt: now, blockedUntil: now + LAN_BLOCK_MS, failures });
  recordAudit(deps, {
    cabinetId: null,
    action: 'lan.address_blocked',
    actor: { ...SYSTEM_ACTOR, listener: 'lan' },
    target: address,
    details: { failures, until: toIso(now + LAN_BLOCK_MS) },
  });
}

/** Throws 403 address_blocked while the address is blocked. */
export function checkLanAddress(deps: Pick<Deps, 'db' | 'clock'>, address: string): void {
  // A block names an address or, when its /64 as a whole kept failing, that network.
  const network = throttleBucket(address);
  const blockedUntil = Math.max(
    store.addressBlockedUntil(deps.db.orm, address) ?? 0,
    network === address ? 0 : (store.addressBlockedUntil(deps.db.orm, network) ?? 0),
  );
  const left = blockedUntil - deps.clock.now();
  if (left <= 0) return;
  const minutes = Math.ceil(left / 60_000);
  throw new ApiError(
    'address_blocked',
    `Too many failed sign-ins from ${address}: this address is blocked on the office network for ${minutes} more min. An administrator can lift the block in the console (Settings → Office network).`,
    undefined,
    { 'Retry-After': String(Math.ceil(left / 1000)) },
  );
}

export function listLanBlocks(deps: Pick<Deps, 'db' | 'clock'>): LanAddressBlock[] {
  return store.listAddressBlocks(deps.db.orm, deps.clock.now()).map((row) => ({
    address: row.address,
    blocked_at: toIso(row.blockedAt),
    blocked_until: toIso(row.blockedUntil),
    failures: row.failures,
  }));
}

export function liftLanBlock(deps: Pick<Deps, 'db' | 'clock' | 'keys'>, address: string, actor: AuditActor, cabinetId: string): void {
  if (!store.deleteAddressBlock(deps.db.orm, address)) throw new ApiError('not_found', `${address} is not blocked.`);
  recordAudit(deps, { cabinetId, action: 'lan.address_unblocked', actor, target: address });
}
