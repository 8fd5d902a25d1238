import { fullYearsSince, type AutoFormula, type DwellingType, type OccupantStatus, type Usage } from './pricing.js';

/**
 * Server-side checks of the portal's forms. Each step returns either its typed values or the
 * messages to show (each names the field by its label), with the raw values kept for re-display.
 */

export type FormBody = Record<string, unknown>;

/** A trimmed string field of an urlencoded body ('' when missing or not a string). */
export function field(body: FormBody | undefined, name: string): string {
  const value = body?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

export type Checked<T> =
  { ok: true; value: T; raw: Record<string, string> } | { ok: false; errors: string[]; invalid: Set<string>; raw: Record<string, string> };

class Collector {
  readonly errors: string[] = [];
  readonly invalid = new Set<string>();
  fail(name: string, message: string): void {
    this.errors.push(message);
    this.invalid.add(name);
  }
}

function rawOf(body: FormBody | undefined, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, field(body, n)]));
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isValidIsoDate(value: string): boolean {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d && y >= 1900;
}

function todayIso(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

function checkName(c: Collector, raw: Record<string, string>, name: string, label: string): string {
  const value = raw[name] ?? '';
  if (value === '') c.fail(name, `Le champ « ${label} » est obligatoire.`);
  else if (value.length < 2 || value.length > 80) c.fail(name, `Le champ « ${label} » doit compter de 2 à 80 caractères.`);
  return value;
}

function checkPostcode(c: Collector, raw: Record<string, string>): string {
  const value = raw.postcode ?? '';
  if (!/^\d{5}$/.test(value)) c.fail('postcode', 'Le champ « Code postal » doit compter 5 chiffres.');
  return value;
}

function checkPastDate(c: Collector, raw: Record<string, string>, name: string, label: string, nowMs: number): string {
  const value = raw[name] ?? '';
  if (value === '') c.fail(name, `Le champ « ${label} » est obligatoire.`);
  else if (!isValidIsoDate(value)) c.fail(name, `Le champ « ${label} » n’est pas une date valide.`);
  else if (value > todayIso(nowMs)) c.fail(name, `Le champ « ${label} » ne peut pas être dans le futur.`);
  return value;
}

function checkChoice<T extends string>(c: Collector, raw: Record<string, string>, name: string, label: string, allowed: readonly T[]): T {
  const value = raw[name] ?? '';
  if (!(allowed as readonly string[]).includes(value)) c.fail(name, `Choisissez une valeur pour « ${label} ».`);
  return value as T;
}

function checkInteger(c: Collector, raw: Record<string, string>, name: string, label: string, min: number, max: number): number {
  const value = (raw[name] ?? '').replace(/[\s\u00a0\u202f]/g, '');
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    c.fail(
      name,
      `Le champ « ${label} » doit être un nombre entier entre ${min.toLocaleString('fr-FR')} et ${max.toLocaleString('fr-FR')}.`.replace(
        /\u202f/g,
        '\u00a0',
      ),
    );
  }
  return n;
}

function result<T>(c: Collector, raw: Record<string, string>, value: T): Checked<T> {
  return c.errors.length === 0 ? { ok: true, value, raw } : { ok: false, errors: c.errors, invalid: c.invalid, raw };
}

// ---- Auto ------------------------------------------------------------------------------------

const DRIVER_FIELDS = ['insured_name', 'birth_date', 'licence_date', 'bonus_malus', 'postcode'] as const;
export interface DriverStep {
  insuredName: string;
  birthDate: string;
  licenceDate: string;
  bonusMalus: number;
  postcode: string;
}

export function checkDriver(body: FormBody | undefined, nowMs: number): Checked<DriverStep> {
  const raw = rawOf(body, DRIVER_FIELDS);
  const c = new Collector();
  const insuredName = checkName(c, raw, 'insured_name', 'Nom de l’assuré');
  const birthDate = checkPastDate(c, raw, 'birth_date', 'Date de naissance du conducteur', nowMs);
  if (!c.invalid.has('birth_date')) {
    const age = fullYearsSince(birthDate, nowMs);
    if (age < 18 || age > 99)
      c.fail('birth_date', 'Le champ « Date de naissance du conducteur » doit correspondre à un conducteur de 18 à 99 ans.');
  }
  const licenceDate = checkPastDate(c, raw, 'licence_date', 'Date d’obtention du permis', nowMs);
  if (
    !c.invalid.has('licence_date') &&
    !c.invalid.has('birth_date') &&
    fullYearsSince(birthDate, Date.parse(`${licenceDate}T00:00:00Z`)) < 17
  ) {
    c.fail('licence_date', 'Le champ « Date d’obtention du permis » doit être postérieur aux 17 ans du conducteur.');
  }
  const bmText = (raw.bonus_malus ?? '').replace(',', '.');
  const bonusMalus = Number(bmText);
  if (!/^\d+(\.\d{1,2})?$/.test(bmText) || bonusMalus < 0.5 || bonusMalus > 3.5) {
    c.fail('bonus_malus', 'Le champ « Coefficient bonus-malus » doit être compris entre 0,50 et 3,50.');
  }
  const postcode = checkPostcode(c, raw);
  return result(c, raw, { insuredName, birthDate, licenceDate, bonusMalus, postcode });
}

const VEHICLE_FIELDS = ['make', 'model', 'registration', 'first_registration_date', 'usage'] as const;
export const USAGES: readonly Usage[] = ['prive', 'professionnel', 'mixte'];
export interface VehicleStep {
  make: string;
  model: string;
  registration: string;
  firstRegistrationDate: string;
  usage: Usage;
}

const REGISTRATION_PATTERN = /^[A-Z]{2}-\d{3}-[A-Z]{2}$/;

export function checkVehicle(body: FormBody | undefined, nowMs: number): Checked<VehicleStep> {
  const raw = rawOf(body, VEHICLE_FIELDS);
  const c = new Collector();
  const make = raw.make ?? '';
  const model = raw.model ?? '';
  const registration = (raw.registration ?? '').toUpperCase();
  if (registration !== '') {
    if (!REGISTRATION_PATTERN.test(registration)) c.fail('registration', 'Le champ « Immatriculation » doit avoir la forme AB-123-CD.');
  } else if (make === '' || model === '') {
    if (make === '') c.invalid.add('make');
    if (model === '') c.invalid.add('model');
    c.errors.push('Renseignez les champs « Marque » et « Modèle », ou le champ « Immatriculation ».');
  }
  if (make.length > 40) c.fail('make', 'Le champ « Marque » compte au plus 40 caractères.');
  if (model.length > 40) c.fail('model', 'Le champ « Modèle » compte au plus 40 caractères.');
  const firstRegistrationDate = checkPastDate(c, raw, 'first_registration_date', 'Date de première mise en circulation', nowMs);
  const usage = checkChoice(c, raw, 'usage', 'Usage', USAGES);
  return result(c, raw, { make, model, registration, firstRegistrationDate, usage });
}

export const FORMULAS: readonly AutoFormula[] = ['tiers', 'tiers_etendu', 'tous_risques'];

export function checkFormula(body: FormBody | undefined): Checked<{ formula: AutoFormula }> {
  const raw = rawOf(body, ['formula']);
  const c = new Collector();
  const formula = checkChoice(c, raw, 'formula', 'Formule', FORMULAS);
  return result(c, raw, { formula });
}

// ---- Habitation -------------------------------------------------------------------------------

const DWELLING_FIELDS = ['insured_name', 'dwelling_type', 'surface', 'rooms', 'postcode'] as const;
export const DWELLING_TYPES: readonly DwellingType[] = ['maison', 'appartement'];
export interface DwellingStep {
  insuredName: string;
  dwellingType: DwellingType;
  surfaceM2: number;
  rooms: number;
  postcode: string;
}

export function checkDwelling(body: FormBody | undefined): Checked<DwellingStep> {
  const raw = rawOf(body, DWELLING_FIELDS);
  const c = new Collector();
  const insuredName = checkName(c, raw, 'insured_name', 'Nom de l’assuré');
  const dwellingType = checkChoice(c, raw, 'dwelling_type', 'Type de logement', DWELLING_TYPES);
  const surfaceM2 = checkInteger(c, raw, 'surface', 'Surface (m²)', 9, 1000);
  const rooms = checkInteger(c, raw, 'rooms', 'Nombre de pièces', 1, 30);
  const postcode = checkPostcode(c, raw);
  return result(c, raw, { insuredName, dwellingType, surfaceM2, rooms, postcode });
}

const OCCUPATION_FIELDS = ['occupant_status', 'contents_capital'] as const;
export const OCCUPANT_STATUSES: readonly OccupantStatus[] = ['proprietaire', 'locataire'];

export function checkOccupation(body: FormBody | undefined): Checked<{ occupantStatus: OccupantStatus; contentsCapitalEur: number }> {
  const raw = rawOf(body, OCCUPATION_FIELDS);
  const c = new Collector();
  const occupantStatus = checkChoice(c, raw, 'occupant_status', 'Statut de l’occupant', OCCUPANT_STATUSES);
  const contentsCapitalEur = checkInteger(c, raw, 'contents_capital', 'Capital mobilier (€)', 1000, 500000);
  return result(c, raw, { occupantStatus, contentsCapitalEur });
}

// ---- Attestation ------------------------------------------------------------------------------

/** Every number of this shape is an existing contract of the sandbox; nothing else is. */
export const POLICY_PATTERN = /^SBX-\d{6}$/;
