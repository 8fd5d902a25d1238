import type { JobStatus } from '../../../../shared/automation.js';
import type { OpportunityStage } from '../../../../shared/crm.js';
import type { DevisStatus } from '../../../../shared/devis.js';
import type { Lang } from '../../i18n.js';

/** The records slice's words (clients, opportunities, quotes), in both languages. */
export interface RecordsStrings {
  navClients: string;
  navOpportunities: string;
  navQuotes: string;
  // Clients
  clientsTitle: string;
  clientsIntro: string;
  search: string;
  searchHint: string;
  noClients: string;
  noClientsFound: (q: string) => string;
  loadMore: string;
  newClient: string;
  closeForm: string;
  person: string;
  company: string;
  clientType: string;
  lastName: string;
  firstName: string;
  companyName: string;
  siret: string;
  email: string;
  phone: string;
  birthDate: string;
  addressLine1: string;
  addressLine2: string;
  postcode: string;
  city: string;
  country: string;
  optional: string;
  create: string;
  creating: string;
  save: string;
  saving: string;
  cancel: string;
  created: (when: string) => string;
  // A client
  allClients: string;
  contact: string;
  address: string;
  edit: string;
  saved: string;
  noChange: string;
  erase: string;
  eraseTitle: (name: string) => string;
  eraseText: string;
  eraseConfirm: string;
  unnamed: string;
  clientQuotes: string;
  noClientQuotes: string;
  /** The link to Pricing with this client chosen. */
  priceForClient: string;
  clientJobs: string;
  clientJobsIntro: string;
  noClientJobs: string;
  clientOpportunities: string;
  clientOpportunitiesIntro: string;
  noClientOpportunities: string;
  // Opportunities
  opportunitiesTitle: string;
  opportunitiesIntro: string;
  newOpportunity: string;
  title: string;
  product: string;
  contactLastName: string;
  expectedValue: string;
  stage: string;
  stageOf: (title: string) => string;
  noOpportunities: string;
  moved: (title: string, stage: string) => string;
  reopenTitle: (title: string) => string;
  reopenText: (from: string, to: string) => string;
  reopenConfirm: string;
  stages: Record<OpportunityStage, string>;
  // Quotes
  quotesTitle: string;
  quotesIntro: string;
  filterStatus: string;
  allStatuses: string;
  filterType: string;
  allTypes: string;
  sortBy: string;
  sortNewest: string;
  sortName: string;
  sortPremium: string;
  noQuotes: string;
  noClient: string;
  erasedClient: string;
  premium: string;
  notPriced: string;
  signedOn: (when: string) => string;
  notSigned: string;
  downloadPdf: string;
  noPdf: string;
  pricedBy: string;
  job: (id: string) => string;
  sign: string;
  signTitle: (name: string) => string;
  signText: string;
  signConfirm: string;
  signedNotice: string;
  attachClient: string;
  attachedNotice: (name: string) => string;
  quoteStatuses: Record<DevisStatus, string>;
  /** A quote whose pricing was cancelled on request: failed to the API, not a failure to a person. */
  quoteCancelled: string;
  jobStatuses: Record<JobStatus, string>;
}

const en: RecordsStrings = {
  navClients: 'Clients',
  navOpportunities: 'Opportunities',
  navQuotes: 'Quotes',
  clientsTitle: 'Clients',
  clientsIntro: 'Every client of the cabinet, whoever created it: you, the API, an AI assistant, or another office’s install.',
  search: 'Search',
  searchHint: 'A name, a company or an email.',
  noClients: 'No clients yet.',
  noClientsFound: (q) => `No client matches “${q}”.`,
  loadMore: 'Load more',
  newClient: 'New client',
  closeForm: 'Close the form',
  person: 'Person',
  company: 'Company',
  clientType: 'Type of client',
  lastName: 'Last name',
  firstName: 'First name',
  companyName: 'Company name',
  siret: 'SIRET',
  email: 'Email',
  phone: 'Phone',
  birthDate: 'Date of birth',
  addressLine1: 'Address',
  addressLine2: 'Address (continued)',
  postcode: 'Postcode',
  city: 'City',
  country: 'Country (2 letters)',
  optional: 'optional',
  create: 'Create the client',
  creating: 'Creating…',
  save: 'Save',
  saving: 'Saving…',
  cancel: 'Cancel',
  created: (when) => `Created ${when}`,
  allClients: 'All clients',
  contact: 'Contact details',
  address: 'Address',
  edit: 'Edit',
  saved: 'Saved.',
  noChange: 'Nothing changed.',
  erase: 'Erase…',
  eraseTitle: (name) => `Erase ${name}?`,
  eraseText:
    'This cannot be undone. The client’s personal data (names, SIRET, email, phone, address, date of birth) is wiped for good, on every computer of the cabinet, and so is what their quotes, pricings and opportunities hold of it, with the PDFs of the quotes they did not sign. Contracts and the PDFs of signed quotes stay: a cabinet must keep its contracts.',
  eraseConfirm: 'Erase for good',
  unnamed: '(no name)',
  clientQuotes: 'Quotes',
  noClientQuotes: 'No quotes for this client yet.',
  priceForClient: 'Price a quote for this client',
  clientJobs: 'Jobs',
  clientJobsIntro: 'The pricing jobs behind these quotes.',
  noClientJobs: 'No pricing job for this client yet.',
  clientOpportunities: 'Opportunities',
  clientOpportunitiesIntro:
    'Opportunities made for the client, those one of the client’s quotes is for, and those whose contact has the client’s email or SIRET.',
  noClientOpportunities: 'No opportunity is linked to this client.',
  opportunitiesTitle: 'Opportunities',
  opportunitiesIntro: 'The cabinet’s opportunities by stage. Won and lost are final: moving one back reopens it.',
  newOpportunity: 'New opportunity',
  title: 'Title',
  product: 'Product',
  contactLastName: 'Contact’s last name',
  expectedValue: 'Expected value (€)',
  stage: 'Stage',
  stageOf: (title) => `Stage of ${title}`,
  noOpportunities: 'None.',
  moved: (title, stage) => `${title} moved to ${stage}.`,
  reopenTitle: (title) => `Reopen ${title}?`,
  reopenText: (from, to) => `This opportunity is ${from}, which is final. Reopen it and move it to ${to}?`,
  reopenConfirm: 'Reopen',
  stages: { new: 'New', qualified: 'Qualified', quoted: 'Quoted', negotiation: 'Negotiation', won: 'Won', lost: 'Lost' },
  quotesTitle: 'Quotes',
  quotesIntro: 'The cabinet’s quotes, newest first, with their PDF once priced.',
  filterStatus: 'Status',
  allStatuses: 'All statuses',
  filterType: 'Type',
  allTypes: 'People and companies',
  sortBy: 'Order',
  sortNewest: 'Newest first',
  sortName: 'By name, A to Z',
  sortPremium: 'Lowest premium first',
  noQuotes: 'No quotes match.',
  noClient: 'No client',
  erasedClient: 'Erased client',
  premium: 'Premium:',
  notPriced: 'Not priced',
  signedOn: (when) => `Signed ${when}`,
  notSigned: 'Not signed',
  downloadPdf: 'Download PDF',
  noPdf: 'No PDF',
  pricedBy: 'Priced by',
  job: (id) => `job ${id}`,
  sign: 'Mark as signed…',
  signTitle: (name) => `Mark the quote of ${name} as signed?`,
  signText: 'The quote becomes a contract, and its opportunity, if any is still open, is won. This cannot be undone.',
  signConfirm: 'Mark as signed',
  signedNotice: 'The quote is signed.',
  attachClient: 'Attach to a client…',
  attachedNotice: (name) => `The quote is now ${name}’s: it can be signed.`,
  quoteStatuses: { draft: 'Draft', pricing: 'Pricing', priced: 'Priced', failed: 'Failed', signed: 'Signed' },
  quoteCancelled: 'Cancelled',
  jobStatuses: {
    pending: 'Waiting',
    running: 'Running',
    mfa_required: 'Code needed',
    awaiting_mfa: 'Waiting for the code',
    completed: 'Completed',
    partial: 'Partial',
    failed: 'Failed',
    cancelled: 'Cancelled',
  },
};

const fr: RecordsStrings = {
  navClients: 'Clients',
  navOpportunities: 'Opportunités',
  navQuotes: 'Devis',
  clientsTitle: 'Clients',
  clientsIntro: 'Tous les clients du cabinet, quel que soit leur créateur : vous, l’API, un assistant IA ou le poste d’un autre bureau.',
  search: 'Rechercher',
  searchHint: 'Un nom, une société ou un courriel.',
  noClients: 'Aucun client pour l’instant.',
  noClientsFound: (q) => `Aucun client ne correspond à « ${q} ».`,
  loadMore: 'Voir plus',
  newClient: 'Nouveau client',
  closeForm: 'Fermer le formulaire',
  person: 'Particulier',
  company: 'Société',
  clientType: 'Type de client',
  lastName: 'Nom',
  firstName: 'Prénom',
  companyName: 'Raison sociale',
  siret: 'SIRET',
  email: 'Courriel',
  phone: 'Téléphone',
  birthDate: 'Date de naissance',
  addressLine1: 'Adresse',
  addressLine2: 'Complément d’adresse',
  postcode: 'Code postal',
  city: 'Ville',
  country: 'Pays (2 lettres)',
  optional: 'facultatif',
  create: 'Créer le client',
  creating: 'Création…',
  save: 'Enregistrer',
  saving: 'Enregistrement…',
  cancel: 'Annuler',
  created: (when) => `Créé le ${when}`,
  allClients: 'Tous les clients',
  contact: 'Coordonnées',
  address: 'Adresse',
  edit: 'Modifier',
  saved: 'Enregistré.',
  noChange: 'Rien n’a changé.',
  erase: 'Effacer…',
  eraseTitle: (name) => `Effacer ${name} ?`,
  eraseText:
    'C’est définitif. Les données personnelles du client (noms, SIRET, courriel, téléphone, adresse, date de naissance) sont effacées pour de bon, sur tous les postes du cabinet, ainsi que ce qu’en gardent ses devis, tarifications et opportunités, avec les PDF des devis non signés. Les contrats et les PDF des devis signés restent : un cabinet doit conserver ses contrats.',
  eraseConfirm: 'Effacer définitivement',
  unnamed: '(sans nom)',
  clientQuotes: 'Devis',
  noClientQuotes: 'Aucun devis pour ce client.',
  priceForClient: 'Tarifer un devis pour ce client',
  clientJobs: 'Tâches',
  clientJobsIntro: 'Les tâches de tarification derrière ces devis.',
  noClientJobs: 'Aucune tâche de tarification pour ce client.',
  clientOpportunities: 'Opportunités',
  clientOpportunitiesIntro:
    'Les opportunités ouvertes pour le client, celles visées par un de ses devis, et celles dont le contact a son courriel ou son SIRET.',
  noClientOpportunities: 'Aucune opportunité liée à ce client.',
  opportunitiesTitle: 'Opportunités',
  opportunitiesIntro: 'Les opportunités du cabinet par étape. Gagnée et perdue sont définitives : en sortir rouvre l’opportunité.',
  newOpportunity: 'Nouvelle opportunité',
  title: 'Intitulé',
  product: 'Produit',
  contactLastName: 'Nom du contact',
  expectedValue: 'Valeur attendue (€)',
  stage: 'Étape',
  stageOf: (title) => `Étape de ${title}`,
  noOpportunities: 'Aucune.',
  moved: (title, stage) => `${title} : étape ${stage}.`,
  reopenTitle: (title) => `Rouvrir ${title} ?`,
  reopenText: (from, to) => `Cette opportunité est ${from}, une étape définitive. La rouvrir et la passer à l’étape ${to} ?`,
  reopenConfirm: 'Rouvrir',
  stages: { new: 'Nouvelle', qualified: 'Qualifiée', quoted: 'Devis envoyé', negotiation: 'Négociation', won: 'Gagnée', lost: 'Perdue' },
  quotesTitle: 'Devis',
  quotesIntro: 'Les devis du cabinet, du plus récent au plus ancien, avec leur PDF une fois tarifés.',
  filterStatus: 'Statut',
  allStatuses: 'Tous les statuts',
  filterType: 'Type',
  allTypes: 'Personnes et sociétés',
  sortBy: 'Ordre',
  sortNewest: 'Les plus récents d’abord',
  sortName: 'Par nom, de A à Z',
  sortPremium: 'Prime la plus basse d’abord',
  noQuotes: 'Aucun devis ne correspond.',
  noClient: 'Sans client',
  erasedClient: 'Client effacé',
  premium: 'Prime :',
  notPriced: 'Non tarifé',
  signedOn: (when) => `Signé le ${when}`,
  notSigned: 'Non signé',
  downloadPdf: 'Télécharger le PDF',
  noPdf: 'Pas de PDF',
  pricedBy: 'Tarifé par',
  job: (id) => `la tâche ${id}`,
  sign: 'Marquer comme signé…',
  signTitle: (name) => `Marquer le devis de ${name} comme signé ?`,
  signText: 'Le devis devient un contrat, et son opportunité, si elle est encore ouverte, est gagnée. C’est définitif.',
  signConfirm: 'Marquer comme signé',
  signedNotice: 'Le devis est signé.',
  attachClient: 'Rattacher à un client…',
  attachedNotice: (name) => `Le devis est maintenant celui de ${name} : il peut être signé.`,
  quoteStatuses: { draft: 'Brouillon', pricing: 'En tarification', priced: 'Tarifé', failed: 'Échec', signed: 'Signé' },
  quoteCancelled: 'Annulé',
  jobStatuses: {
    pending: 'En attente',
    running: 'En cours',
    mfa_required: 'Code demandé',
    awaiting_mfa: 'En attente du code',
    completed: 'Terminée',
    partial: 'Partielle',
    failed: 'Échec',
    cancelled: 'Annulée',
  },
};

export const RECORDS_STRINGS: Record<Lang, RecordsStrings> = { en, fr };

export { formatDate, formatEuros } from '../../format.js';
