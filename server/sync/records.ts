import { SYNCED_KINDS, type SyncedKind } from '../../shared/sync-protocol.js';
import { staffRecords } from '../account/sync.js';
import { jobRecords } from '../automation/sync.js';
import { comparisonRecords, conseilRecords } from '../comparaisons/sync.js';
import { clientRecords, opportunityNoteRecords, opportunityRecords } from '../crm/sync.js';
import { contractRecords, devisRecords } from '../devis/sync.js';
import { eraseRecordsNaming, updateOfErasedClient } from '../erasure/service.js';
import { eventRecords } from '../events/sync.js';
import type { RecordsByKind } from './apply.js';
import type { SyncedRecords } from './synced-table.js';

/**
 * Every synced kind as its module declares it, in the protocol's order (SYNCED_KINDS: the order a
 * first upload sends them). A kind of the protocol without its declaration here does not compile.
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
  const byKind: { [K in SyncedKind]: SyncedRecords } = {
    user: staffRecords,
    client: clients,
    opportunity: opportunityRecords,
    opportunity_note: opportunityNoteRecords,
    devis: devisRecords,
    contract: contractRecords,
    job: jobRecords,
    comparaison: comparisonRecords,
    conseil: conseilRecords,
    event: events,
  };
  return new Map(
    SYNCED_KINDS.map((kind) => {
      if (byKind[kind].kind !== kind) throw new Error(`The records under ${kind} declare the kind ${byKind[kind].kind}.`);
      return [kind, byKind[kind]];
    }),
  );
}
