import type { Devis } from '../../shared/devis.js';
import { clientErased, clientExists } from '../crm/clients.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { notFound, toDevis } from './service.js';
import * as store from './store.js';
import { devisRecords } from './sync.js';

/**
 * A quote priced without a client given its client, so that it can be signed: once, for a quote
 * that has none (a quote's client never changes), and only a client of the cabinet that was not
 * erased. The quote's jobs follow (a job's client is its quote's).
 */
export function attachClient(deps: Deps, cabinetId: string, devisId: string, clientId: string): Devis {
  return deps.db.immediateTransaction(() => {
    const row = store.findDevis(deps.db.orm, cabinetId, devisId);
    if (!row) throw notFound(devisId);
    if (row.clientId !== null)
      throw new ApiError('invalid_devis_transition', 'This quote already belongs to a client; a quote’s client never changes.', {
        status: row.status,
      });
    if (!clientExists(deps, cabinetId, clientId) || clientErased(deps, cabinetId, clientId))
      throw validationError([{ path: 'body.client_id', message: `no client with id ${clientId} in this cabinet` }]);
    const changes: Partial<store.DevisRow> = { clientId, updatedAt: deps.clock.now() };
    devisRecords.update(deps, cabinetId, devisId, changes);
    return toDevis({ ...row, ...changes });
  });
}
