import { syncedTable } from '../sync/synced-table.js';
import { clients, opportunities } from './schema.js';

/** Clients and opportunities sync whole: every column is the cabinet's. */
export const clientRecords = syncedTable('client', clients);
export const opportunityRecords = syncedTable('opportunity', opportunities);
