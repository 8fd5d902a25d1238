import type { Lang } from '../../i18n.js';

/** The header's search and its results page, in both languages. */
interface SearchStrings {
  search: string;
  searchLabel: string;
  placeholder: string;
  go: string;
  title: string;
  intro: string;
  tooShort: string;
  searching: string;
  resultsFor: (q: string) => string;
  nothing: (q: string) => string;
  clients: string;
  opportunities: string;
  quotes: string;
  jobs: string;
  more: string;
  noClient: string;
}

const en: SearchStrings = {
  search: 'Search',
  searchLabel: 'Search the cabinet',
  placeholder: 'Client, quote, reference…',
  go: 'Search',
  title: 'Search',
  intro: 'Clients, opportunities, quotes and pricings of the cabinet, by a name, a company, an email or a reference.',
  tooShort: 'Type at least two characters.',
  searching: 'Searching…',
  resultsFor: (q) => `Results for “${q}”`,
  nothing: (q) => `Nothing in the cabinet matches “${q}”.`,
  clients: 'Clients',
  opportunities: 'Opportunities',
  quotes: 'Quotes',
  jobs: 'Pricings',
  more: 'More match than shown: type more of the name to narrow it.',
  noClient: 'No client',
};

const fr: SearchStrings = {
  search: 'Rechercher',
  searchLabel: 'Rechercher dans le cabinet',
  placeholder: 'Client, devis, référence…',
  go: 'Rechercher',
  title: 'Recherche',
  intro: 'Clients, opportunités, devis et tarifications du cabinet, par un nom, une société, un e-mail ou une référence.',
  tooShort: 'Saisissez au moins deux caractères.',
  searching: 'Recherche…',
  resultsFor: (q) => `Résultats pour « ${q} »`,
  nothing: (q) => `Rien dans le cabinet ne correspond à « ${q} ».`,
  clients: 'Clients',
  opportunities: 'Opportunités',
  quotes: 'Devis',
  jobs: 'Tarifications',
  more: 'D’autres correspondent : précisez le nom pour les voir.',
  noClient: 'Sans client',
};

export const SEARCH_STRINGS: Record<Lang, SearchStrings> = { en, fr };
