import type { Deps } from '../deps.js';
import type { RecordsByKind } from './apply.js';
import type { HubFetch } from './hub-client.js';
import { pullEverything } from './catch-up.js';
import { pushQueued } from './push.js';
import { hubClientFor } from './service.js';
import * as store from './store.js';

/** Sends the whole queue now (connect), telling how far it got. Returns how many changes went. */
export async function uploadQueue(deps: Deps, records: RecordsByKind, cabinetId: string, fetch: HubFetch, progress: (sent: number, total: number) => void): Promise<number> {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) return 0;
  const context = { deps, records, client: hubClientFor(deps, connection, fetch) };
  const total = store.countOutbox(deps.db.orm, cabinetId);
  return pushQueued(context, cabinetId, (sent) => progress(Math.min(sent, total), total));
}

/** Applies every change the hub holds for the cabinet (join, restore), telling how far it got. */
export async function downloadAll(deps: Deps, records: RecordsByKind, cabinetId: string, fetch: HubFetch, progress: (received: number) => void): Promise<number> {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) return 0;
  return pullEverything({ deps, records, client: hubClientFor(deps, connection, fetch) }, cabinetId, progress);
}
