import { formatNumber } from '../../format.js';
import type { ImportField } from '../../../../shared/console-import.js';
import type { Lang } from '../../i18n.js';

/** The words of the clients import page, in both languages. */
export interface ImportStrings {
  importClients: string;
  title: string;
  intro: string;
  fileStep: string;
  fileLabel: string;
  fileHint: string;
  reading: string;
  readAs: (format: string, rows: number) => string;
  separators: Record<';' | ',' | '\t', string>;
  columnsStep: string;
  columnsIntro: string;
  columnsTable: string;
  column: string;
  examples: (values: string) => string;
  field: string;
  fieldFor: (header: string) => string;
  ignore: string;
  noHeader: (n: number) => string;
  defaultType: string;
  defaultTypes: { auto: string; person: string; company: string };
  fields: Record<ImportField, string>;
  previewStep: string;
  counts: (valid: number, already: number, refused: number) => string;
  previewTable: string;
  previewIntro: (n: number) => string;
  row: string;
  /** Before what is said of a row: "Row 12: ". */
  rowOf: (row: string) => string;
  name: string;
  contact: string;
  place: string;
  refusedTitle: string;
  refusedIntro: string;
  refusedTable: string;
  problem: string;
  listedOnly: (listed: number, total: number) => string;
  alreadyTitle: string;
  alreadyInCabinet: (match: string) => string;
  alreadyInFile: (match: string, row: string) => string;
  matches: { email: string; siret: string; identity: string };
  importButton: (n: number) => string;
  importing: string;
  nothingToImport: string;
  doneTitle: string;
  done: (created: number, already: number, refused: number) => string;
  seeClients: string;
  another: string;
}

/** A count as each language writes it (10,000 / 10 000). */
const enCount = (n: number) => formatNumber('en', n);
const frCount = (n: number) => formatNumber('fr', n);

const FIELDS_EN: Record<ImportField, string> = {
  type: 'Type of client',
  last_name: 'Last name',
  first_name: 'First name',
  company_name: 'Company name',
  siret: 'SIRET',
  email: 'Email',
  phone: 'Phone',
  address_line1: 'Address',
  address_line2: 'Address (line 2)',
  postcode: 'Postcode',
  city: 'City',
  country: 'Country',
  birth_date: 'Date of birth',
};

const FIELDS_FR: Record<ImportField, string> = {
  type: 'Type de client',
  last_name: 'Nom',
  first_name: 'Prénom',
  company_name: 'Raison sociale',
  siret: 'SIRET',
  email: 'E-mail',
  phone: 'Téléphone',
  address_line1: 'Adresse',
  address_line2: 'Adresse (ligne 2)',
  postcode: 'Code postal',
  city: 'Ville',
  country: 'Pays',
  birth_date: 'Date de naissance',
};

const en: ImportStrings = {
  importClients: 'Import clients',
  title: 'Import clients',
  intro:
    'Bring your portfolio from a CSV or Excel export of your previous software. Nothing is created until you import; a client already in the cabinet is not created twice.',
  fileStep: '1. The file',
  fileLabel: 'File (CSV or Excel .xlsx)',
  fileHint: 'At most 5 MB and 10,000 rows; the first row names the columns. CSV separated by semicolons, commas or tabs.',
  reading: 'Reading the file…',
  readAs: (format, rows) => `Read as ${format}: ${enCount(rows)} ${rows === 1 ? 'row' : 'rows'}.`,
  separators: { ';': 'semicolons', ',': 'commas', '\t': 'tabs' },
  columnsStep: '2. The columns',
  columnsIntro: 'What each column holds, guessed from its name. Change what is wrong; a column you do not need can be ignored.',
  columnsTable: 'Columns of the file',
  column: 'Column',
  examples: (values) => `Examples: ${values}`,
  field: 'Client field',
  fieldFor: (header) => `Client field for the column ${header}`,
  ignore: 'Ignore this column',
  noHeader: (n) => `Column ${n}`,
  defaultType: 'Type of client when the file does not say',
  defaultTypes: {
    auto: 'A company when a company name or SIRET is given, else a person',
    person: 'Person',
    company: 'Company',
  },
  fields: FIELDS_EN,
  previewStep: '3. Preview',
  counts: (valid, already, refused) => `${enCount(valid)} to create · ${enCount(already)} already there · ${enCount(refused)} refused`,
  previewTable: 'The first clients, as they will be created',
  previewIntro: (n) => (n === 1 ? 'The client, as it will be created:' : `The first ${enCount(n)} clients, as they will be created:`),
  row: 'Row',
  rowOf: (row) => `Row ${row}: `,
  name: 'Name',
  contact: 'Contact',
  place: 'Town',
  refusedTitle: 'Rows refused',
  refusedIntro:
    'These rows are not imported. Correct them in the file and import it again: the rows already imported are not created twice.',
  refusedTable: 'Rows refused and why',
  problem: 'Problem',
  listedOnly: (listed, total) => `The first ${enCount(listed)} of ${enCount(total)} are listed.`,
  alreadyTitle: 'Already there',
  alreadyInCabinet: (match) => `A client of the cabinet has ${match}.`,
  alreadyInFile: (match, row) => `Row ${row} has ${match}.`,
  matches: { email: 'the same email', siret: 'the same SIRET', identity: 'the same name, first name and date of birth' },
  importButton: (n) => (n === 1 ? 'Import 1 client' : `Import ${enCount(n)} clients`),
  importing: 'Importing…',
  nothingToImport: 'No row of this file can be created.',
  doneTitle: 'Import done',
  done: (created, already, refused) =>
    `${enCount(created)} ${created === 1 ? 'client' : 'clients'} created · ${enCount(already)} already there · ${enCount(refused)} refused.`,
  seeClients: 'See the clients',
  another: 'Import another file',
};

const fr: ImportStrings = {
  importClients: 'Importer des clients',
  title: 'Importer des clients',
  intro:
    'Reprenez votre portefeuille depuis un export CSV ou Excel de votre ancien logiciel. Rien n’est créé avant l’import ; un client déjà présent dans le cabinet n’est pas créé deux fois.',
  fileStep: '1. Le fichier',
  fileLabel: 'Fichier (CSV ou Excel .xlsx)',
  fileHint:
    '5 Mo et 10 000 lignes au plus ; la première ligne nomme les colonnes. CSV séparé par des points-virgules, des virgules ou des tabulations.',
  reading: 'Lecture du fichier…',
  readAs: (format, rows) => `Lu comme ${format} : ${frCount(rows)} ${rows > 1 ? 'lignes' : 'ligne'}.`,
  separators: { ';': 'points-virgules', ',': 'virgules', '\t': 'tabulations' },
  columnsStep: '2. Les colonnes',
  columnsIntro: 'Ce que contient chaque colonne, deviné d’après son nom. Corrigez ce qui est faux ; une colonne inutile peut être ignorée.',
  columnsTable: 'Colonnes du fichier',
  column: 'Colonne',
  examples: (values) => `Exemples : ${values}`,
  field: 'Champ du client',
  fieldFor: (header) => `Champ du client pour la colonne ${header}`,
  ignore: 'Ignorer cette colonne',
  noHeader: (n) => `Colonne ${n}`,
  defaultType: 'Type de client quand le fichier ne le dit pas',
  defaultTypes: {
    auto: 'Une entreprise si une raison sociale ou un SIRET est donné, sinon une personne',
    person: 'Personne',
    company: 'Entreprise',
  },
  fields: FIELDS_FR,
  previewStep: '3. Aperçu',
  counts: (valid, already, refused) =>
    `${frCount(valid)} à créer · ${frCount(already)} ${already > 1 ? 'déjà présents' : 'déjà présent'} · ${frCount(refused)} ${refused > 1 ? 'refusés' : 'refusé'}`,
  previewTable: 'Les premiers clients, tels qu’ils seront créés',
  previewIntro: (n) => (n === 1 ? 'Le client, tel qu’il sera créé :' : `Les ${frCount(n)} premiers clients, tels qu’ils seront créés :`),
  row: 'Ligne',
  rowOf: (row) => `Ligne ${row} : `,
  name: 'Nom',
  contact: 'Contact',
  place: 'Ville',
  refusedTitle: 'Lignes refusées',
  refusedIntro:
    'Ces lignes ne sont pas importées. Corrigez-les dans le fichier et importez-le de nouveau : les lignes déjà importées ne sont pas créées deux fois.',
  refusedTable: 'Lignes refusées et leurs raisons',
  problem: 'Problème',
  listedOnly: (listed, total) => `Les ${frCount(listed)} premières sur ${frCount(total)} sont listées.`,
  alreadyTitle: 'Déjà présents',
  alreadyInCabinet: (match) => `Un client du cabinet a ${match}.`,
  alreadyInFile: (match, row) => `La ligne ${row} a ${match}.`,
  matches: { email: 'le même e-mail', siret: 'le même SIRET', identity: 'les mêmes nom, prénom et date de naissance' },
  importButton: (n) => (n === 1 ? 'Importer 1 client' : `Importer ${frCount(n)} clients`),
  importing: 'Import en cours…',
  nothingToImport: 'Aucune ligne de ce fichier ne peut être créée.',
  doneTitle: 'Import terminé',
  done: (created, already, refused) =>
    `${frCount(created)} ${created > 1 ? 'clients créés' : 'client créé'} · ${frCount(already)} ${already > 1 ? 'déjà présents' : 'déjà présent'} · ${frCount(refused)} ${refused > 1 ? 'refusés' : 'refusé'}.`,
  seeClients: 'Voir les clients',
  another: 'Importer un autre fichier',
};

export const IMPORT_STRINGS: Record<Lang, ImportStrings> = { en, fr };
