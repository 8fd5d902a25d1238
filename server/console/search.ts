import { SEARCH_GROUP_SIZE, type SearchResults } from '../../shared/console-search.js';
import { listConsoleJobs } from '../automation/console-jobs.js';
import { listClients } from '../crm/clients.js';
import { searchOpportunities } from '../crm/service.js';
import type { Deps } from '../deps.js';
import { listDevis } from '../devis/list.js';
import { describeDevis } from './records.js';

/** The first `SEARCH_GROUP_SIZE` of a list, and whether it had more. */
function firstOf<T>(items: readonly T[]): { data: T[]; has_more: boolean } {
  return { data: items.slice(0, SEARCH_GROUP_SIZE), has_more: items.length > SEARCH_GROUP_SIZE };
}

/**
 * What the header's search finds, each kind through its module's service: clients by name or
 * email, opportunities by title or contact, the quotes of the clients found, and pricings by the
 * insured's or client's name or a reference.
 */
export function searchRecords(deps: Deps, cabinetId: string, q: string): SearchResults {
  const found = listClients(deps, cabinetId, { limit: SEARCH_GROUP_SIZE, q });
  const quotes = found.data
    .flatMap((client) => listDevis(deps, cabinetId, { limit: SEARCH_GROUP_SIZE + 1, client_id: client.client_id }).data)
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
  const jobs = listConsoleJobs(deps, cabinetId, { limit: SEARCH_GROUP_SIZE, q });
  return {
    q,
    clients: { data: found.data, has_more: found.has_more },
    opportunities: firstOf(searchOpportunities(deps, cabinetId, q, SEARCH_GROUP_SIZE + 1)),
    devis: (({ data, has_more }) => ({ data: describeDevis(deps, cabinetId, data), has_more }))(firstOf(quotes)),
    jobs: { data: jobs.data, has_more: jobs.has_more },
  };
}
