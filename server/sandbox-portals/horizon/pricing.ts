import { fullYearsSince, roundToCents } from '../sandbox/pricing.js';

/**
 * Horizon Direct's tariff: deterministic functions of the wizard's answers (and of the day of the
 * quote, for ages), so that tests and demos predict every premium. Every formula of a product is
 * priced at once: the results show them side by side.
 *
 * VOITURE — base annuelle =
 *     420 €
 *   × crm (coefficient de réduction-majoration, 0.50 … 3.50)
 *   × jeune conducteur: 1.5 when the driver is under 25 on the day of the quote, or has held the
 *     licence for less than 3 years (the day's year − annee_permis < 3); else 1
 *   × sinistres: 1 + 0.15 per claim in the last 36 months
 *   × kilométrage annuel: moins_de_5000 0.85, de_5000_a_10000 1, de_10000_a_20000 1.1, plus_de_20000 1.25
 *   × stationnement: garage_ferme 0.9, parking_prive 1, voie_publique 1.15
 *   × zone (the garage's postcode): see zoneFactor
 * then per formula: tiers × 1, tiers_plus × 1.4, tous_risques × 2.1.
 *
 * LOGEMENT — base annuelle =
 *     ( surface m² × (maison 2.10 € | appartement 1.60 €)
 *     + pièces principales × 8 €
 *     + valeur du mobilier × 0.40 % )
 *   × qualité: proprietaire 1.2, locataire 1, proprietaire_non_occupant 0.8
 *   × rez-de-chaussée (an appartement at etage 0): 1.1; else 1
 *   × alarme: 0.95 with one; else 1
 *   × zone
 * then per formula: essentielle × 1, confort × 1.3, premium × 1.65.
 *
 * ZONE — 75, 92, 93, 94: 1.25; 06, 13, 31, 33, 59, 69: 1.12; elsewhere 1.
 *
 * Each formula's annual premium is rounded half-up to the cent; the monthly premium is the annual
 * one × 1.03 (the cost of paying monthly) / 12, rounded the same way.
 *
 * Worked examples (quote on 2026-11-22):
 *   voiture, born 1985-02-10, licence 2004, crm 0.72, no claim, de_5000_a_10000, garage_ferme, 33000:
 *     base 420 × 0.72 × 1 × 1 × 1 × 0.9 × 1.12 = 304.8192
 *     tiers 304,82 € (26,16 €/mois), tiers_plus 426,75 € (36,63 €/mois), tous_risques 640,12 € (54,94 €/mois)
 *   logement, appartement 48 m², 2 pièces, etage 3, locataire, mobilier 12 000 €, no alarm, 69007:
 *     base (48 × 1.6 + 2 × 8 + 12000 × 0.004) × 1 × 1 × 1 × 1.12 = 140.8 × 1.12 = 157.696
 *     essentielle 157,70 €, confort 205,00 €, premium 260,20 €
 */

type Mileage = 'moins_de_5000' | 'de_5000_a_10000' | 'de_10000_a_20000' | 'plus_de_20000';
type Parking = 'garage_ferme' | 'parking_prive' | 'voie_publique';
type PropertyType = 'maison' | 'appartement';
type Occupancy = 'proprietaire' | 'locataire' | 'proprietaire_non_occupant';
type CarFormula = 'tiers' | 'tiers_plus' | 'tous_risques';
type HomeFormula = 'essentielle' | 'confort' | 'premium';

const MILEAGE_FACTORS: Record<Mileage, number> = {
  moins_de_5000: 0.85,
  de_5000_a_10000: 1,
  de_10000_a_20000: 1.1,
  plus_de_20000: 1.25,
};
const PARKING_FACTORS: Record<Parking, number> = { garage_ferme: 0.9, parking_prive: 1, voie_publique: 1.15 };
const OCCUPANCY_FACTORS: Record<Occupancy, number> = { proprietaire: 1.2, locataire: 1, proprietaire_non_occupant: 0.8 };
const RATE_PER_M2: Record<PropertyType, number> = { maison: 2.1, appartement: 1.6 };
const CAR_FORMULAS: Record<CarFormula, number> = { tiers: 1, tiers_plus: 1.4, tous_risques: 2.1 };
const HOME_FORMULAS: Record<HomeFormula, number> = { essentielle: 1, confort: 1.3, premium: 1.65 };

function horizonZone(postcode: string): number {
  const departement = postcode.slice(0, 2);
  if (['75', '92', '93', '94'].includes(departement)) return 1.25;
  if (['06', '13', '31', '33', '59', '69'].includes(departement)) return 1.12;
  return 1;
}

export interface CarRisk {
  date_naissance_conducteur: string;
  annee_permis: number;
  crm: number;
  sinistres_36_mois: number;
  kilometrage_annuel: Mileage;
  stationnement: Parking;
  code_postal_garage: string;
}

export interface HomeRisk {
  type_bien: PropertyType;
  qualite: Occupancy;
  surface: number;
  nb_pieces_principales: number;
  etage: number | null;
  valeur_mobilier: number;
  alarme: boolean;
  code_postal: string;
}

export function carBase(risk: CarRisk, atMs: number): number {
  const young = fullYearsSince(risk.date_naissance_conducteur, atMs) < 25 || new Date(atMs).getUTCFullYear() - risk.annee_permis < 3;
  return (
    420 *
    risk.crm *
    (young ? 1.5 : 1) *
    (1 + 0.15 * risk.sinistres_36_mois) *
    MILEAGE_FACTORS[risk.kilometrage_annuel] *
    PARKING_FACTORS[risk.stationnement] *
    horizonZone(risk.code_postal_garage)
  );
}

export function homeBase(risk: HomeRisk): number {
  const groundFloor = risk.type_bien === 'appartement' && risk.etage === 0;
  return (
    (risk.surface * RATE_PER_M2[risk.type_bien] + risk.nb_pieces_principales * 8 + risk.valeur_mobilier * 0.004) *
    OCCUPANCY_FACTORS[risk.qualite] *
    (groundFloor ? 1.1 : 1) *
    (risk.alarme ? 0.95 : 1) *
    horizonZone(risk.code_postal)
  );
}

interface Guarantee {
  code: string;
  libelle: string;
  incluse: boolean;
  plafond_eur: number | null;
}

export interface Offer {
  formule: string;
  libelle: string;
  prime_annuelle_eur: number;
  prime_mensuelle_eur: number;
  franchise_eur: number;
  garanties: Guarantee[];
}

const g = (code: string, libelle: string, incluse: boolean, plafond_eur: number | null = null): Guarantee => ({
  code,
  libelle,
  incluse,
  plafond_eur: incluse ? plafond_eur : null,
});

function priced(base: number, factor: number): Pick<Offer, 'prime_annuelle_eur' | 'prime_mensuelle_eur'> {
  const annual = roundToCents(base * factor);
  return { prime_annuelle_eur: annual, prime_mensuelle_eur: roundToCents((annual * 1.03) / 12) };
}

export function carOffers(base: number): Offer[] {
  const levels: { formule: CarFormula; libelle: string; franchise: number; rank: number }[] = [
    { formule: 'tiers', libelle: 'Tiers', franchise: 0, rank: 0 },
    { formule: 'tiers_plus', libelle: 'Tiers+', franchise: 250, rank: 1 },
    { formule: 'tous_risques', libelle: 'Tous risques', franchise: 400, rank: 2 },
  ];
  return levels.map(({ formule, libelle, franchise, rank }) => ({
    formule,
    libelle,
    ...priced(base, CAR_FORMULAS[formule]),
    franchise_eur: franchise,
    garanties: [
      g('rc', 'Responsabilité civile', true),
      g('defense_recours', 'Défense pénale et recours', true, 15_000),
      g('bris_de_glace', 'Bris de glace', rank >= 1, 1_500),
      g('vol', 'Vol', rank >= 1, 30_000),
      g('incendie', 'Incendie', rank >= 1, 30_000),
      g('dommages_tous_accidents', 'Dommages tous accidents', rank >= 2, 30_000),
      g('assistance_0km', 'Assistance 0 km', rank >= 2),
    ],
  }));
}

export function homeOffers(base: number, contentsEur: number): Offer[] {
  const levels: { formule: HomeFormula; libelle: string; franchise: number; rank: number }[] = [
    { formule: 'essentielle', libelle: 'Essentielle', franchise: 300, rank: 0 },
    { formule: 'confort', libelle: 'Confort', franchise: 150, rank: 1 },
    { formule: 'premium', libelle: 'Premium', franchise: 0, rank: 2 },
  ];
  return levels.map(({ formule, libelle, franchise, rank }) => ({
    formule,
    libelle,
    ...priced(base, HOME_FORMULAS[formule]),
    franchise_eur: franchise,
    garanties: [
      g('incendie', 'Incendie', true, contentsEur),
      g('degats_des_eaux', 'Dégâts des eaux', true, contentsEur),
      g('responsabilite_civile_vie_privee', 'Responsabilité civile vie privée', true, 1_000_000),
      g('vol', 'Vol et vandalisme', rank >= 1, roundToCents(contentsEur * (rank >= 2 ? 1 : 0.5))),
      g('bris_de_glace', 'Bris de glace', rank >= 1, 2_000),
      g('dommages_electriques', 'Dommages électriques', rank >= 2, 5_000),
      g('assistance_0km', 'Assistance habitation 24 h/24', rank >= 2),
    ],
  }));
}
