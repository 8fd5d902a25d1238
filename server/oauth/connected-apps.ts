import type { ConnectedApp } from '../../shared/console-admin.js';
import type { Deps } from '../deps.js';
import { toIso, toIsoOrNull } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { parseScopes } from './common.js';
import * as store from './store.js';

export function listConnectedApps(deps: Deps, user: { cabinetId: string; userId: string }): ConnectedApp[] {
  return store.listLiveGrantsOfUser(deps.db.orm, user.cabinetId, user.userId, deps.clock.now()).map((row) => ({
    grant_id: row.grantId,
    client_id: row.clientId,
    client_name: row.clientName ?? 'An unnamed application',
    scopes: parseScopes(row.scopes),
    created_at: toIso(row.createdAt),
    last_used_at: toIsoOrNull(row.lastUsedAt),
  }));
}

/**
 * Revokes one of the user's own grants and every token it issued. Another user's grant, an unknown
 * one or one already revoked is not found: nobody learns which grant ids exist.
 */
export function revokeConnectedApp(deps: Deps, user: { cabinetId: string; userId: string }, grantId: string): void {
  const { orm } = deps.db;
  const now = deps.clock.now();
  const revoked = deps.db.immediateTransaction(() => {
    const grant = store.findGrant(orm, grantId);
    if (!grant || grant.cabinetId !== user.cabinetId || grant.userId !== user.userId || grant.revokedAt !== null) return false;
    store.revokeGrant(orm, grant.id, now);
    return true;
  });
  if (!revoked) throw new ApiError('not_found', 'No such connected application for this user.');
}

/** Ends at once every assistant a user connected (a reset password, a disabled account): their tokens stop working. */
export function revokeGrantsOfUser(deps: Pick<Deps, 'db' | 'clock'>, userId: string): number {
  return store.revokeGrantsOfUser(deps.db.orm, userId, deps.clock.now());
}

/** Deletes what OAuth holds for a user, before the user is deleted. */
export function forgetGrantsOfUser(deps: Pick<Deps, 'db'>, userId: string): void {
  store.deleteGrantsOfUser(deps.db.orm, userId);
}
