import { recordAudit } from '../audit/service.js';
import { endSessionsOfUser, forgetSessionsOfUser } from '../console/service.js';
import { forgetGrantsOfUser, revokeGrantsOfUser } from '../oauth/connected-apps.js';
import { SYNC_ACTOR } from '../sync/pull.js';
import type { SyncedRecords } from '../sync/synced-table.js';
import { userRecords, type PulledUserChange } from '../tenancy/sync.js';

/**
 * What another install's change of the staff list does here, as the same change made here does: an
 * account disabled or removed loses its sessions and connected apps at once (API keys are the
 * cabinet's, not a person's). Every change is in the audit log, with the device that sent it.
 */
function applied(change: PulledUserChange): void {
  const { deps } = change.context;
  let ended = {};
  if (change.accessEnds === 'removed') {
    forgetSessionsOfUser(deps, change.userId);
    forgetGrantsOfUser(deps, change.userId);
  } else if (change.accessEnds === 'disabled') {
    ended = { sessions_ended: endSessionsOfUser(deps, change.userId), grants_revoked: revokeGrantsOfUser(deps, change.userId) };
  }
  if (Object.keys(change.changes).length === 0) return;
  recordAudit(deps, {
    cabinetId: change.cabinetId,
    action: 'sync.user_changed',
    actor: SYNC_ACTOR,
    target: change.email,
    details: {
      user_id: change.userId,
      ...change.changes,
      ...ended,
      device_id: change.context.origin?.deviceId ?? null,
      seq: change.context.origin?.seq ?? null,
    },
  });
}

/** The staff list's synced kind, with what its changes end here. */
export const staffRecords: SyncedRecords = userRecords({ changed: applied });
