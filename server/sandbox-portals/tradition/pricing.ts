import { fullYearsSince, roundToCents } from '../sandbox/pricing.js';

/**
 * Mutuelle Tradition's tariff: one deterministic formula per product, so that tests and demos
 * predict every premium. Ages and seniority are taken on the day of the quote (the portal's clock).
 * Every premium is rounded half-up to the cent.
 *
 * AUTOMOBILE — prime annuelle =
 *     290 €
 *   × CRM (coefficient de réduction-majoration, 0.50 … 3.50)
 *   × puissance: 1 + 0.05 × (CV − 4) above 4 CV, else 1
 *   × jeune conducteur: 1.5 when the driver is under 26 on the day of the quote, else 1
 *   × USAGE: P (privé) 1, PT (privé et trajet travail) 1.1, T (tournées professionnelles) 1.35
 *   × GARANTIE: RC (responsabilité civile) 1, RCV (RC + vol incendie) 1.4, TR (tous risques) 2.1
 *   × zone of CP_RISQUE (see zoneFactor)
 *
 * HABITATION — prime annuelle =
 *     ( NB_PIECES × 38 € + SURF m² × 0.50 € + CAP_MOB × 0.4 % )
 *   × TYPE_HAB: M (maison) 1.2, A (appartement) 1
 *   × QUALITE: P (propriétaire occupant) 1.15, L (locataire) 1, PNO (propriétaire non occupant) 0.7
 *   × ALARME: O 0.9, N 1
 *   × zone of CP_RISQUE
 *
 * RC_PRO — prime annuelle =
 *     max(250 €, CA × 0.12 %)
 *   × activité (CODE_ACT, see ACTIVITIES)
 *   × effectif: 1 + 0.02 × EFFECTIF
 *   × sinistres: 1 + 0.25 × SIN_3ANS
 *   × création récente: 1.2 when the company is less than 3 years old (year of the quote − ANNEE_CREA < 3)
 *
 * ZONE — 75, 92, 93, 94: 1.25; 13, 69: 1.1; elsewhere 1.
 *
 * Worked examples (quote on 2026-11-22):
 *   automobile, born 1985-03-02, CRM 0.72, 6 CV, PT, TR, 33000:
 *     290 × 0.72 × 1.1 × 1 × 1.1 × 2.1 × 1 = 530.5608 → 530,56 €
 *   habitation, appartement, locataire, 3 pièces, 65 m², 20 000 € de mobilier, alarme N, 75011:
 *     (3 × 38 + 65 × 0.5 + 20000 × 0.004) × 1 × 1 × 1 × 1.25 = 226.5 × 1.25 = 283.125 → 283,13 €
 *   rc_pro, 6201Z, CA 180 000 €, 2 salariés, 0 sinistre, créée en 2015:
 *     max(250, 216) × 1 × 1.04 × 1 × 1 = 260 → 260,00 €
 */

export type Usage = 'P' | 'PT' | 'T';
export type Garantie = 'RC' | 'RCV' | 'TR';
export type TypeHab = 'M' | 'A';
export type Qualite = 'P' | 'L' | 'PNO';

const USAGE_FACTORS: Record<Usage, number> = { P: 1, PT: 1.1, T: 1.35 };
const GARANTIE_FACTORS: Record<Garantie, number> = { RC: 1, RCV: 1.4, TR: 2.1 };
const TYPE_FACTORS: Record<TypeHab, number> = { M: 1.2, A: 1 };
const QUALITE_FACTORS: Record<Qualite, number> = { P: 1.15, L: 1, PNO: 0.7 };

export const USAGE_LABELS: Record<Usage, string> = { P: 'Privé', PT: 'Privé et trajet travail', T: 'Tournées professionnelles' };
export const GARANTIE_LABELS: Record<Garantie, string> = {
  RC: 'Responsabilité civile',
  RCV: 'RC + vol et incendie',
  TR: 'Tous risques',
};
export const TYPE_LABELS: Record<TypeHab, string> = { M: 'Maison', A: 'Appartement' };
export const QUALITE_LABELS: Record<Qualite, string> = {
  P: 'Propriétaire occupant',
  L: 'Locataire',
  PNO: 'Propriétaire non occupant',
};

/** The activities RC Pro covers, by NAF code: their label and rate factor. */
export const ACTIVITIES: Readonly<Record<string, { label: string; factor: number }>> = {
  '6201Z': { label: 'Programmation informatique', factor: 1 },
  '7022Z': { label: 'Conseil pour les affaires et autres conseils de gestion', factor: 1.2 },
  '7111Z': { label: 'Activités d’architecture', factor: 2 },
  '4332A': { label: 'Travaux de menuiserie bois et PVC', factor: 2.4 },
  '8621Z': { label: 'Activité des médecins généralistes', factor: 3 },
};

function zoneFactor(postcode: string): number {
  const departement = postcode.slice(0, 2);
  if (['75', '92', '93', '94'].includes(departement)) return 1.25;
  if (['13', '69'].includes(departement)) return 1.1;
  return 1;
}

export interface AutomobileInput {
  birthDate: string;
  crm: number;
  fiscalHorsepower: number;
  usage: Usage;
  garantie: Garantie;
  postcode: string;
}

export function automobilePremium(input: AutomobileInput, atMs: number): number {
  const power = input.fiscalHorsepower > 4 ? 1 + 0.05 * (input.fiscalHorsepower - 4) : 1;
  const young = fullYearsSince(input.birthDate, atMs) < 26 ? 1.5 : 1;
  return roundToCents(
    290 * input.crm * power * young * USAGE_FACTORS[input.usage] * GARANTIE_FACTORS[input.garantie] * zoneFactor(input.postcode),
  );
}

export interface HabitationInput {
  type: TypeHab;
  qualite: Qualite;
  rooms: number;
  surfaceM2: number;
  contentsEur: number;
  alarm: boolean;
  postcode: string;
}

export function habitationPremium(input: HabitationInput): number {
  const base = input.rooms * 38 + input.surfaceM2 * 0.5 + input.contentsEur * 0.004;
  return roundToCents(
    base * TYPE_FACTORS[input.type] * QUALITE_FACTORS[input.qualite] * (input.alarm ? 0.9 : 1) * zoneFactor(input.postcode),
  );
}

export interface RcProInput {
  activity: string;
  turnoverEur: number;
  staff: number;
  claims3Years: number;
  creationYear: number;
}

export function rcProPremium(input: RcProInput, atMs: number): number {
  const activity = ACTIVITIES[input.activity];
  if (!activity) throw new Error(`unknown activity ${input.activity}`);
  const recent = new Date(atMs).getUTCFullYear() - input.creationYear < 3 ? 1.2 : 1;
  return roundToCents(
    Math.max(250, input.turnoverEur * 0.0012) * activity.factor * (1 + 0.02 * input.staff) * (1 + 0.25 * input.claims3Years) * recent,
  );
}
