import type { SyncedKind } from '../../shared/sync-protocol.js';
import { jobRecords } from '../automation/sync.js';
import { clientRecords, opportunityRecords } from '../crm/sync.js';
import { contractRecords, devisRecords } from '../devis/sync.js';
import { eventRecords } from '../events/sync.js';
import type { RecordsByKind } from './apply.js';
import type { SyncedRecords } from './synced-table.js';

/**
 * Every synced kind, in the order a first upload sends them (a quote after its client, a contract
 * after its quote, events last), each as its module reads and writes it.
 */
export function syncedRecords(): RecordsByKind {
  const all: SyncedRecords[] = [clientRecords, opportunityRecords, devisRecords, contractRecords, jobRecords, eventRecords];
  return new Map<SyncedKind, SyncedRecords>(all.map((records) => [records.kind, records]));
}
