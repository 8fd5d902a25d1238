import { syncedTable, type SyncedRecords } from '../sync/synced-table.js';
import { clearClientEvents } from './erasure.js';
import { clients, opportunities } from './schema.js';

const clientTable = syncedTable('client', clients);

/**
 * Clients sync whole; an erasure pulled from another install also clears the client's data from
 * the events this install holds, as the erasing install did with its own.
 */
export const clientRecords = {
  ...clientTable,
  afterErase: (context, cabinetId, recordId) => void clearClientEvents(context.deps, cabinetId, recordId),
} satisfies SyncedRecords & Pick<typeof clientTable, 'capture'>;

export const opportunityRecords = syncedTable('opportunity', opportunities);
