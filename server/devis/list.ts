import type { DevisSort, DevisStatus, Devis } from '../../shared/devis.js';
import type { Page } from '../../shared/pagination.js';
import type { Deps } from '../deps.js';
import { listPage, type OwnOrder } from '../platform/http/cursor.js';
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
  const filters = {
    status: query.status,
    clientId: query.client_id,
    opportunityId: query.opportunity_id,
    createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
  };
  const orm = deps.db.orm;
  const byPremium: OwnOrder<Devis> = {
    name: 'tarif_eur',
    keys: () => store.devisPremiumsMatching(orm, cabinetId, filters).map((row) => ({ key: row.tarifCents ?? NO_PREMIUM, id: row.id })),
    compare: (a, b) => Number(a) - Number(b),
    read: (ids) => new Map(store.devisByIds(orm, cabinetId, ids).map((row) => [row.id, toDevis(row)])),
  };
  const { status, client_id, opportunity_id, created_after } = query;
  return listPage(
    deps.keys.cursor,
    { cabinetId, resource: 'devis', filters: { status, client_id, opportunity_id, created_after } },
    query,
    { read: (after, limit) => store.listDevis(orm, cabinetId, { ...filters, after }, limit), toItem: toDevis },
    query.sort === 'tarif_eur' ? byPremium : undefined,
  );
}
