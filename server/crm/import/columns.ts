import type { ImportColumn, ImportField } from '../../../shared/console-import.js';

/**
 * What each column of a file fills, guessed from its header in French or English, and the cell
 * values as a spreadsheet writes them turned into the API's (dates, countries, types).
 */

/** A header or value compared without case, accents, punctuation or repeated spaces. */
export function plain(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The headers each field is known by, written plain. */
const HEADERS: Record<ImportField, readonly string[]> = {
  type: ['type', 'type client', 'type de client', 'nature', 'categorie', 'client type', 'kind', 'personne physique ou morale'],
  last_name: [
    'nom',
    'nom de famille',
    'nom client',
    'nom du client',
    'nom du contact',
    'last name',
    'lastname',
    'surname',
    'family name',
    'name',
  ],
  first_name: ['prenom', 'prenom du contact', 'first name', 'firstname', 'given name'],
  company_name: [
    'raison sociale',
    'societe',
    'entreprise',
    'denomination',
    'nom de la societe',
    'nom entreprise',
    'company',
    'company name',
    'organisation',
    'organization',
  ],
  siret: ['siret', 'n siret', 'no siret', 'numero siret', 'numero de siret', 'siret number'],
  email: ['email', 'e mail', 'mail', 'courriel', 'adresse email', 'adresse e mail', 'adresse mail', 'email address', 'e mail address'],
  phone: [
    'telephone',
    'tel',
    'phone',
    'portable',
    'mobile',
    'gsm',
    'telephone portable',
    'tel portable',
    'tel mobile',
    'numero de telephone',
    'phone number',
    'telephone number',
  ],
  address_line1: [
    'adresse',
    'adresse 1',
    'adresse ligne 1',
    'adresse postale',
    'rue',
    'voie',
    'address',
    'address 1',
    'address line 1',
    'street',
  ],
  address_line2: ['adresse 2', 'adresse ligne 2', 'complement', 'complement d adresse', 'address 2', 'address line 2'],
  postcode: ['code postal', 'cp', 'postcode', 'post code', 'postal code', 'zip', 'zip code'],
  city: ['ville', 'commune', 'localite', 'city', 'town'],
  country: ['pays', 'code pays', 'country', 'country code'],
  birth_date: [
    'date de naissance',
    'date naissance',
    'naissance',
    'ne le',
    'ne e le',
    'nee le',
    'birth date',
    'date of birth',
    'birthdate',
    'dob',
  ],
};

const FIELD_OF_HEADER = new Map<string, ImportField>(
  Object.entries(HEADERS).flatMap(([field, headers]) => headers.map((header) => [header, field as ImportField] as const)),
);

/** Each column's field from its header; a field already taken by an earlier column is not taken twice. */
export function guessColumns(header: readonly string[], width: number): ImportColumn[] {
  const taken = new Set<ImportField>();
  return Array.from({ length: width }, (_, i) => {
    const field = FIELD_OF_HEADER.get(plain(header[i] ?? ''));
    if (!field || taken.has(field)) return 'ignore';
    taken.add(field);
    return field;
  });
}

const TYPE_WORDS: Record<string, 'person' | 'company'> = Object.fromEntries([
  ...['person', 'personne', 'personne physique', 'particulier', 'physique', 'pp', 'individual', 'private'].map((w) => [w, 'person']),
  ...['company', 'entreprise', 'societe', 'personne morale', 'morale', 'pm', 'professionnel', 'pro', 'business'].map((w) => [w, 'company']),
]) as Record<string, 'person' | 'company'>;

/** A type cell as the API's type; undefined for a word it does not know (the row is refused). */
export function typeOf(cell: string): 'person' | 'company' | undefined {
  return TYPE_WORDS[plain(cell)];
}

const COUNTRIES: Record<string, string> = {
  france: 'FR',
  belgique: 'BE',
  belgium: 'BE',
  suisse: 'CH',
  switzerland: 'CH',
  luxembourg: 'LU',
  monaco: 'MC',
  allemagne: 'DE',
  germany: 'DE',
  espagne: 'ES',
  spain: 'ES',
  italie: 'IT',
  italy: 'IT',
  'royaume uni': 'GB',
  'united kingdom': 'GB',
};

/** A country cell as an ISO code: a known name (France, Belgique…) or the code itself, upper case. */
export function countryOf(cell: string): string {
  return COUNTRIES[plain(cell)] ?? cell.toUpperCase();
}

// Excel counts days from 1899-12-30 (its 1900 leap-year bug included).
const EXCEL_EPOCH = Date.UTC(1899, 11, 30);
const DAY = 86_400_000;

/**
 * A date cell as YYYY-MM-DD: already so, French DD/MM/YYYY (also with - or .), or an Excel serial
 * number (an .xlsx date cell); anything else is left as written, for the check to refuse.
 */
export function dateOf(cell: string): string {
  const french = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:\s.*)?$/.exec(cell);
  if (french) return `${french[3]}-${(french[2] ?? '').padStart(2, '0')}-${(french[1] ?? '').padStart(2, '0')}`;
  const iso = /^(\d{4}-\d{2}-\d{2})(?:[ T].*)?$/.exec(cell);
  if (iso) return iso[1] ?? cell;
  if (/^\d{3,6}(\.\d+)?$/.test(cell)) return new Date(EXCEL_EPOCH + Math.floor(Number(cell)) * DAY).toISOString().slice(0, 10);
  return cell;
}

/** A French number a spreadsheet took for a number lost its leading zero: 612345678 is 0612345678. */
export function phoneOf(cell: string): string {
  return /^[1-9]\d{8}$/.test(cell) ? `0${cell}` : cell;
}

/** Likewise a French postcode: 1000 is 01000. */
export function postcodeOf(cell: string, country: string | undefined): string {
  return /^\d{4}$/.test(cell) && (country === undefined || country === 'FR') ? `0${cell}` : cell;
}
