import { syncedTable } from '../sync/synced-table.js';
import { events } from './schema.js';

/**
 * Events sync with their original id, so that every install delivers the cabinet's events to its
 * own subscriptions under the same envelope id. The outbox position (seq) is each install's own.
 */
export const eventRecords = syncedTable('event', events, { local: ['seq'] });
