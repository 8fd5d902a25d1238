import { withFewerCheckpoints } from '../platform/db/checkpoints.js';
import type { Deps } from '../deps.js';
import { shareAccount } from '../tenancy/users.js';
import type { RecordsByKind } from './apply.js';
import type { HubFetch } from './hub-client.js';
import { pullEverything } from './catch-up.js';
import { pushQueued } from './push.js';
import { hubClientFor } from './service.js';
import * as store from './store.js';
import * as conflictsStore from './conflicts-store.js';
import { exchangeWallet } from './wallet-exchange.js';

/** Sends the whole queue now (connect), telling how far it got. Returns how many changes went. */
export async function uploadQueue(
  deps: Deps,
  records: RecordsByKind,
  cabinetId: string,
  fetch: HubFetch,
  progress: (sent: number, total: number) => void,
): Promise<number> {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) return 0;
  const context = { deps, records, client: hubClientFor(deps, connection, fetch) };
  const total = store.countOutbox(deps.db.orm, cabinetId);
  return pushQueued(context, cabinetId, (sent) => progress(Math.min(sent, total), total));
}

/** Applies every change the hub holds for the cabinet (join, restore), telling how far it got. */
export async function downloadAll(
  deps: Deps,
  records: RecordsByKind,
  cabinetId: string,
  fetch: HubFetch,
  progress: (received: number) => void,
): Promise<number> {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) return 0;
  return withFewerCheckpoints(deps.db.sqlite, () =>
    pullEverything({ deps, records, client: hubClientFor(deps, connection, fetch) }, cabinetId, progress),
  );
}

/**
 * After a join's first download: the administrator the join created here goes to the cabinet's
 * staff list, unless the list had this email already (a change of it was pulled, applied or set
 * aside): the account then took that record, its role and state the cabinet's, its password this
 * install's. Two people with one email never become two accounts.
 */
export function shareJoinedAdmin(deps: Deps, cabinetId: string, userId: string): boolean {
  const orm = deps.db.orm;
  return shareAccount(
    deps,
    cabinetId,
    userId,
    (email) =>
      store.findFieldClocks(orm, cabinetId, 'user', email) !== undefined || conflictsStore.hasConflictOf(orm, cabinetId, 'user', email),
  );
}

/** Exchanges the cabinet's wallet with the hub now (connect, join): the install leaves with the cabinet's balance. */
export async function exchangeWalletNow(deps: Deps, cabinetId: string, fetch: HubFetch): Promise<void> {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) return;
  await exchangeWallet({ deps, client: hubClientFor(deps, connection, fetch) }, cabinetId);
}
