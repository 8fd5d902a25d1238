/**
 * The sandbox insurer's tariff: deterministic functions of the form's inputs (and of the date of
 * the quote, for ages), so that tests and demos can predict every premium.
 *
 * AUTO — prime annuelle =
 *     380 €
 *   × coefficient bonus-malus (0.50 … 3.50)
 *   × jeune conducteur: 1.6 when the driver is under 25, or has held the licence for less than
 *     3 full years, on the day of the quote; else 1
 *   × usage: privé 1, mixte 1.15, professionnel 1.3
 *   × formule: tiers 1, tiers étendu 1.35, tous risques 1.9
 *   × zone (département, the postcode's first two digits): see zoneFactor
 *
 * HABITATION (MRH) — prime annuelle =
 *     ( surface m² × (maison 1.90 € | appartement 1.40 €)
 *     + pièces × 9 €
 *     + capital mobilier × 0.45 % )
 *   × occupant: propriétaire 1.25, locataire 1
 *   × zone
 *
 * ZONE — 75, 92, 93, 94 (Paris, petite couronne): 1.3; 06, 13, 31, 33, 69 (big cities): 1.15;
 * 20 (Corse) and 97 (outre-mer): 1.1; elsewhere 1.
 *
 * Every premium is rounded half-up to the cent (after removing binary floating-point noise).
 *
 * Worked examples (quote on 2026-11-22):
 *   auto, born 1980-05-14, licence 2000-06-01, bonus-malus 0.85, privé, tous risques, 69003:
 *     380 × 0.85 × 1 × 1 × 1.9 × 1.15 = 705.755 → 705,76 €
 *   MRH, appartement 62 m², 3 pièces, locataire, 15 000 € de capital, 75011:
 *     (62 × 1.40 + 3 × 9 + 15000 × 0.0045) × 1 × 1.3 = 181.3 × 1.3 = 235.69 → 235,69 €
 */

export type Usage = 'prive' | 'professionnel' | 'mixte';
export type AutoFormula = 'tiers' | 'tiers_etendu' | 'tous_risques';
export type DwellingType = 'maison' | 'appartement';
export type OccupantStatus = 'proprietaire' | 'locataire';

const AUTO_BASE_EUR = 380;
const YOUNG_DRIVER_FACTOR = 1.6;
const USAGE_FACTORS: Record<Usage, number> = { prive: 1, mixte: 1.15, professionnel: 1.3 };
const FORMULA_FACTORS: Record<AutoFormula, number> = { tiers: 1, tiers_etendu: 1.35, tous_risques: 1.9 };
export const FORMULA_LABELS: Record<AutoFormula, string> = { tiers: 'Tiers', tiers_etendu: 'Tiers étendu', tous_risques: 'Tous risques' };
export const USAGE_LABELS: Record<Usage, string> = { prive: 'Privé', professionnel: 'Professionnel', mixte: 'Mixte' };
const DWELLING_RATE_PER_M2: Record<DwellingType, number> = { maison: 1.9, appartement: 1.4 };
export const DWELLING_LABELS: Record<DwellingType, string> = { maison: 'Maison', appartement: 'Appartement' };
const RATE_PER_ROOM_EUR = 9;
const CONTENTS_RATE = 0.0045;
const OCCUPANT_FACTORS: Record<OccupantStatus, number> = { proprietaire: 1.25, locataire: 1 };
export const OCCUPANT_LABELS: Record<OccupantStatus, string> = { proprietaire: 'Propriétaire', locataire: 'Locataire' };

export function zoneFactor(postcode: string): number {
  const departement = postcode.slice(0, 2);
  if (['75', '92', '93', '94'].includes(departement)) return 1.3;
  if (['06', '13', '31', '33', '69'].includes(departement)) return 1.15;
  if (departement === '20' || departement === '97') return 1.1;
  return 1;
}

/** Half-up to the cent; toPrecision(12) first drops float noise (208.495 × 100 = 20849.499999…). */
export function roundToCents(amount: number): number {
  return Math.round(Number((amount * 100).toPrecision(12))) / 100;
}

/** Whole years from an ISO date (YYYY-MM-DD) to the UTC day of `atMs`. */
export function fullYearsSince(isoDate: string, atMs: number): number {
  const [y, m, d] = isoDate.split('-').map(Number) as [number, number, number];
  const at = new Date(atMs);
  let years = at.getUTCFullYear() - y;
  const beforeAnniversary = at.getUTCMonth() + 1 < m || (at.getUTCMonth() + 1 === m && at.getUTCDate() < d);
  if (beforeAnniversary) years -= 1;
  return years;
}

export interface AutoPricingInput {
  driverBirthDate: string;
  licenceDate: string;
  bonusMalus: number;
  postcode: string;
  usage: Usage;
  formula: AutoFormula;
}

export function isYoungDriver(input: Pick<AutoPricingInput, 'driverBirthDate' | 'licenceDate'>, atMs: number): boolean {
  return fullYearsSince(input.driverBirthDate, atMs) < 25 || fullYearsSince(input.licenceDate, atMs) < 3;
}

export function autoPremium(input: AutoPricingInput, atMs: number): number {
  return roundToCents(
    AUTO_BASE_EUR *
      input.bonusMalus *
      (isYoungDriver(input, atMs) ? YOUNG_DRIVER_FACTOR : 1) *
      USAGE_FACTORS[input.usage] *
      FORMULA_FACTORS[input.formula] *
      zoneFactor(input.postcode),
  );
}

export interface HomePricingInput {
  dwellingType: DwellingType;
  surfaceM2: number;
  rooms: number;
  postcode: string;
  occupantStatus: OccupantStatus;
  contentsCapitalEur: number;
}

export function homePremium(input: HomePricingInput): number {
  const base =
    input.surfaceM2 * DWELLING_RATE_PER_M2[input.dwellingType] + input.rooms * RATE_PER_ROOM_EUR + input.contentsCapitalEur * CONTENTS_RATE;
  return roundToCents(base * OCCUPANT_FACTORS[input.occupantStatus] * zoneFactor(input.postcode));
}

/**
 * French money: "1 234,50 €" with no-break spaces (U+00A0, which the PDF's WinAnsi font can
 * encode, unlike Intl's narrow U+202F).
 */
export function formatEuros(amount: number): string {
  const cents = Math.round(amount * 100);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const euros = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, '\u00a0');
  return `${sign}${euros},${String(abs % 100).padStart(2, '0')}\u00a0€`;
}

/** "2026-11-22" → "22/11/2026". */
export function formatFrenchDate(isoDate: string): string {
  const [y, m, d] = isoDate.split('-');
  return `${d}/${m}/${y}`;
}
