import type { ClientContactField } from '../../shared/crm.js';
import type { Deps } from '../deps.js';
import { rewriteEvents } from '../events/service.js';
import { forgetSetAsideAbout } from '../sync/conflicts.js';

/** Every contact field cleared: what an erased client's earlier events keep of it. */
export const NO_CONTACT: { [K in ClientContactField]: null } = {
  last_name: null,
  first_name: null,
  company_name: null,
  siret: null,
  email: null,
  phone: null,
  address: null,
  birth_date: null,
};

/**
 * Clears the copies of the client's personal data this install keeps besides the client: its
 * earlier client.updated events, each queued as an erasure for the hub (which then wipes its
 * earlier copies), and the changes from other installs that were set aside and name the client.
 * Runs in the transaction of the erasure: a local one, or one pulled from another install.
 */
export function clearClientCopies(deps: Pick<Deps, 'db' | 'clock' | 'syncChanges'>, cabinetId: string, clientId: string): number {
  forgetSetAsideAbout(deps, cabinetId, clientId);
  return rewriteEvents(deps, cabinetId, 'client.updated', { field: 'client_id', id: clientId }, (data) => ({ ...data, ...NO_CONTACT }));
}
