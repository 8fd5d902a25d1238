import { ClientsPage } from '../pages/records/ClientsPage.js';
import { OpportunitiesPage } from '../pages/records/OpportunitiesPage.js';
import { QuotesPage } from '../pages/records/QuotesPage.js';
import { RECORDS_STRINGS } from '../pages/records/strings.js';
import './records.css';
import type { ConsoleSlice } from './types.js';

const { en, fr } = RECORDS_STRINGS;

/** The cabinet's records: clients (and one client's page), opportunities by stage, quotes. */
export const recordsSlice: ConsoleSlice = {
  pages: [
    { path: '/console/clients', label: { en: en.navClients, fr: fr.navClients }, daily: true, component: ClientsPage },
    {
      path: '/console/opportunities',
      label: { en: en.navOpportunities, fr: fr.navOpportunities },
      daily: true,
      component: OpportunitiesPage,
    },
    { path: '/console/quotes', label: { en: en.navQuotes, fr: fr.navQuotes }, daily: true, component: QuotesPage },
  ],
};
