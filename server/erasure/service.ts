import type { ClientErasure } from '../../shared/crm.js';
import { parseEventData } from '../../shared/erasure.js';
import { eraseJobsOfQuotes } from '../automation/erasure.js';
import { eraseComparisonRisks } from '../comparaisons/service.js';
import { clientErased, clientToErase, eraseClientRecord } from '../crm/clients.js';
import { eraseNotesOf } from '../crm/notes.js';
import { eraseOpportunityContacts, opportunityIdsTiedToClient } from '../crm/service.js';
import type { Deps } from '../deps.js';
import { eraseQuotesOfClient } from '../devis/service.js';
import { eraseEventsAbout } from '../events/service.js';
import { forgetSetAsideAbout } from '../sync/conflicts.js';

/**
 * The right to erasure across modules. A client's personal data is in its own row (crm), and
 * copied into the records that name it: its quotes and their jobs, the opportunities for it, that
 * they name or whose contact has its email or SIRET, those opportunities' notes, and the events
 * about all of these. Each module takes the
 * personal data out of its own records (shared/erasure.ts says which fields), through its service.
 */

type ErasureDeps = Pick<Deps, 'db' | 'clock' | 'syncChanges'>;

/**
 * Takes the client's personal data out of the records that name it, and queues each change for
 * the other installs: an ordinary edit, whose clock wins over every earlier value. Runs before the
 * client's own erasure (its email and SIRET find opportunities), in its transaction: a local
 * erasure, or one pulled from another install (server/sync/records.ts). Does nothing for a client
 * the cabinet does not have, or has erased already.
 */
export function eraseRecordsNaming(deps: ErasureDeps, cabinetId: string, clientId: string): void {
  const client = clientToErase(deps, cabinetId, clientId);
  if (!client) return;
  const quotes = eraseQuotesOfClient(deps, cabinetId, clientId);
  const opportunities = eraseOpportunityContacts(deps, cabinetId, [
    ...quotes.opportunityIds,
    ...opportunityIdsTiedToClient(deps, cabinetId, client),
  ]);
  const notes = eraseNotesOf(deps, cabinetId, opportunities);
  const jobs = eraseJobsOfQuotes(deps, cabinetId, quotes.devisIds);
  eraseComparisonRisks(deps, cabinetId, clientId, jobs);
  eraseEventsAbout(deps, cabinetId, { client: [clientId], opportunity: opportunities, devis: quotes.devisIds, job: jobs });
  // Changes set aside here (from other installs, or this one's own that the hub refused) may carry the same data.
  for (const id of [...opportunities, ...notes, ...quotes.devisIds, ...jobs]) forgetSetAsideAbout(deps, cabinetId, id);
}

/** Erases a client and the personal data that the records naming it hold, in one transaction (the API, the console, MCP). */
export function eraseClient(deps: Deps, cabinetId: string, id: string): ClientErasure {
  return deps.db.immediateTransaction(() => {
    eraseRecordsNaming(deps, cabinetId, id);
    return eraseClientRecord(deps, cabinetId, id);
  });
}

/**
 * Whether a pulled event is a client.updated of a client erased here: made on an install that had
 * not heard of the erasure yet, it carries the data the erasure removed. Dropped, never stored or
 * delivered to a webhook.
 */
export function updateOfErasedClient(deps: Pick<Deps, 'db'>, cabinetId: string, fields: Record<string, unknown>): boolean {
  if (fields.type !== 'client.updated') return false;
  const clientId = parseEventData(fields.data)?.client_id;
  return typeof clientId === 'string' && clientErased(deps, cabinetId, clientId);
}
