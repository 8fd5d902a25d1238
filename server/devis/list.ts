import type { DevisSort, DevisStatus, Devis } from '../../shared/devis.js';
import type { Page } from '../../shared/pagination.js';
import type { Deps } from '../deps.js';
import { cursorCodec, sortCursorCodec, sortedPage, toPage } from '../platform/http/cursor.js';
import { toDevis } from './service.js';
import * as store from './store.js';

interface DevisListQuery {
  limit: number;
  cursor?: string;
  status?: DevisStatus;
  client_id?: string;
  opportunity_id?: string;
  created_after?: string;
  sort?: DevisSort;
}

/** A quote without a premium (a draft, one being priced, a failed one) comes after every priced one. */
const NO_PREMIUM = Number.MAX_SAFE_INTEGER;

/** The cabinet's quotes, newest first, or the lowest premium first. */
export function listDevis(deps: Deps, cabinetId: string, query: DevisListQuery): Page<Devis> {
  const byPremium = query.sort === 'tarif_eur';
  const scope = {
    cabinetId,
    resource: 'devis',
    filters: {
      status: query.status,
      client_id: query.client_id,
      opportunity_id: query.opportunity_id,
      created_after: query.created_after,
      sort: byPremium ? query.sort : undefined,
    },
  };
  const filters = {
    status: query.status,
    clientId: query.client_id,
    opportunityId: query.opportunity_id,
    createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
  };
  if (byPremium) {
    const entries = store
      .devisPremiumsMatching(deps.db.orm, cabinetId, filters)
      .map((row) => ({ key: row.tarifCents ?? NO_PREMIUM, id: row.id }));
    return sortedPage(
      entries,
      (a, b) => Number(a) - Number(b),
      sortCursorCodec(deps.keys.cursor, scope),
      query,
      (ids) => new Map(store.devisByIds(deps.db.orm, cabinetId, ids).map((row) => [row.id, toDevis(row)])),
    );
  }
  const codec = cursorCodec(deps.keys.cursor, scope);
  const rows = store.listDevis(deps.db.orm, cabinetId, { ...filters, after: codec.after(query.cursor) }, query.limit + 1);
  return toPage(rows, query.limit, toDevis, codec.next);
}
