import type { SyncedKind } from '../../shared/sync-protocol.js';
import { staffRecords } from '../account/sync.js';
import { jobRecords } from '../automation/sync.js';
import { clientRecords, opportunityRecords } from '../crm/sync.js';
import { contractRecords, devisRecords } from '../devis/sync.js';
import { eraseRecordsNaming, updateOfErasedClient } from '../erasure/service.js';
import { eventRecords } from '../events/sync.js';
import type { RecordsByKind } from './apply.js';
import type { SyncedRecords } from './synced-table.js';

/**
 * Every synced kind, in the order a first upload sends them (the staff list first, a quote after its
 * client, a contract after its quote, events last), each as its module reads and writes it.
 */
export function syncedRecords(): RecordsByKind {
  // A client's erasure pulled from another install reaches the records that name the client, as
  // a local one does (server/erasure/service.ts); and a client.updated event made on an install
  // that had not heard of the erasure yet is dropped, never stored nor delivered to a webhook.
  const clients: SyncedRecords = {
    ...clientRecords,
    beforeErase: (context, cabinetId, id) => eraseRecordsNaming(context.deps, cabinetId, id),
  };
  const events: SyncedRecords = {
    ...eventRecords,
    skips: (context, cabinetId, change) =>
      eventRecords.skips(context, cabinetId, change) ||
      (change.op === 'upsert' && updateOfErasedClient(context.deps, cabinetId, change.fields)),
  };
  const all: SyncedRecords[] = [staffRecords, clients, opportunityRecords, devisRecords, contractRecords, jobRecords, events];
  return new Map<SyncedKind, SyncedRecords>(all.map((records) => [records.kind, records]));
}
