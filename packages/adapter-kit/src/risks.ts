import { z } from 'zod';

/**
 * The common risk model: one schema per line of business, the same whatever the insurer, so that a
 * broker describes a client's risk once and every insurer that prices the line is asked. Each
 * adapter maps it to its own product's dicData (RiskMapping). Labels in French and English
 * (`title`, `x-title-en`; a choice's words in `x-enum-labels` and `x-enum-labels-en`), read by the
 * console to build its form and by integrators from the schema endpoint.
 */

type Labels = { fr: string; en: string };
const labelled = <T extends z.ZodType>(schema: T, { fr, en }: Labels) => schema.meta({ title: fr, 'x-title-en': en });

const isoDate = (labels: Labels) => labelled(z.iso.date(), labels);
const words = (labels: Labels) => labelled(z.string().trim().min(1).max(60), labels);
const postcode = (labels: Labels) => labelled(z.string().regex(/^\d{5}$/, 'five digits'), labels);

/** A choice among codes, with the words for each in French and English. */
function choice<const Codes extends string>(options: Record<Codes, Labels>, labels: Labels) {
  const codes = Object.keys(options) as [Codes, ...Codes[]];
  const fr = Object.fromEntries(codes.map((code) => [code, options[code].fr]));
  const en = Object.fromEntries(codes.map((code) => [code, options[code].en]));
  return z.enum(codes).meta({ title: labels.fr, 'x-title-en': labels.en, 'x-enum-labels': fr, 'x-enum-labels-en': en });
}

/** The level of cover the client wants: each insurer maps it to its nearest formula. */
const coverLevel = choice(
  {
    essentielle: { fr: 'Essentielle (le minimum légal)', en: 'Essential (the legal minimum)' },
    intermediaire: { fr: 'Intermédiaire', en: 'Intermediate' },
    etendue: { fr: 'Étendue (tous risques)', en: 'Extended (comprehensive)' },
  },
  { fr: 'Niveau de couverture souhaité', en: 'Level of cover wanted' },
);

const person = z.object({
  nom: words({ fr: 'Nom', en: 'Last name' }),
  prenom: words({ fr: 'Prénom', en: 'First name' }),
});

export const autoRiskSchema = z.object({
  conducteur: labelled(
    person.extend({
      date_naissance: isoDate({ fr: 'Date de naissance', en: 'Date of birth' }),
      date_permis: isoDate({ fr: 'Date d’obtention du permis B', en: 'Date the driving licence was obtained' }),
      crm: labelled(z.number().min(0.5).max(3.5), { fr: 'Bonus-malus (CRM, 0,50 à 3,50)', en: 'No-claims coefficient (0.50 to 3.50)' }),
      sinistres_36_mois: labelled(z.number().int().min(0).max(10), {
        fr: 'Sinistres déclarés sur 36 mois',
        en: 'Claims in the last 36 months',
      }),
    }),
    { fr: 'Conducteur principal', en: 'Main driver' },
  ),
  vehicule: labelled(
    z.object({
      marque: words({ fr: 'Marque', en: 'Make' }),
      modele: words({ fr: 'Modèle', en: 'Model' }),
      date_mise_circulation: isoDate({ fr: 'Date de première mise en circulation', en: 'Date first registered' }),
      puissance_fiscale: labelled(z.number().int().min(1).max(60), { fr: 'Puissance fiscale (CV)', en: 'Tax horsepower (CV)' }).optional(),
      immatriculation: labelled(z.string().regex(/^[A-Z]{2}-\d{3}-[A-Z]{2}$/, 'AB-123-CD'), {
        fr: 'Immatriculation (AB-123-CD)',
        en: 'Registration (AB-123-CD)',
      }).optional(),
    }),
    { fr: 'Véhicule', en: 'Vehicle' },
  ),
  usage: labelled(
    z.object({
      usage: choice(
        {
          prive: { fr: 'Privé', en: 'Private' },
          trajet_travail: { fr: 'Privé et trajet travail', en: 'Private and commuting' },
          professionnel: { fr: 'Professionnel', en: 'Business' },
        },
        { fr: 'Usage', en: 'Use' },
      ),
      code_postal: postcode({ fr: 'Code postal du stationnement la nuit', en: 'Postcode where it is parked at night' }),
      stationnement: choice(
        {
          garage_ferme: { fr: 'Garage fermé', en: 'Locked garage' },
          parking_prive: { fr: 'Parking privé', en: 'Private car park' },
          voie_publique: { fr: 'Voie publique', en: 'Street' },
        },
        { fr: 'Stationnement la nuit', en: 'Parking at night' },
      ).optional(),
      kilometrage_annuel: labelled(z.number().int().min(0).max(200_000), { fr: 'Kilométrage annuel', en: 'Yearly mileage' }).optional(),
    }),
    { fr: 'Usage', en: 'Use' },
  ),
  couverture: coverLevel,
});
export type AutoRisk = z.output<typeof autoRiskSchema>;

export const homeRiskSchema = z.object({
  souscripteur: labelled(person, { fr: 'Souscripteur', en: 'Policyholder' }),
  logement: labelled(
    z.object({
      type: choice(
        { maison: { fr: 'Maison', en: 'House' }, appartement: { fr: 'Appartement', en: 'Flat' } },
        { fr: 'Type de logement', en: 'Type of home' },
      ),
      code_postal: postcode({ fr: 'Code postal', en: 'Postcode' }),
      surface_m2: labelled(z.number().int().min(9).max(1000), { fr: 'Surface habitable (m²)', en: 'Living area (m²)' }),
      pieces_principales: labelled(z.number().int().min(1).max(30), { fr: 'Pièces principales', en: 'Main rooms' }),
      etage: labelled(z.number().int().min(0).max(60), { fr: 'Étage (0 : rez-de-chaussée)', en: 'Floor (0: ground floor)' }).optional(),
      alarme: labelled(z.boolean(), { fr: 'Alarme anti-intrusion', en: 'Burglar alarm' }).optional(),
    }),
    { fr: 'Logement', en: 'Home' },
  ),
  occupation: choice(
    {
      proprietaire: { fr: 'Propriétaire occupant', en: 'Owner-occupier' },
      locataire: { fr: 'Locataire', en: 'Tenant' },
      proprietaire_non_occupant: { fr: 'Propriétaire non occupant', en: 'Non-occupying owner' },
    },
    { fr: 'Qualité du souscripteur', en: 'Policyholder is' },
  ),
  capital_mobilier_eur: labelled(z.number().int().min(0).max(1_000_000), { fr: 'Capital mobilier (€)', en: 'Contents value (€)' }),
  couverture: coverLevel,
});
export type HomeRisk = z.output<typeof homeRiskSchema>;

/** The lines of business the common model covers, with their risk schemas. */
export const RISK_LINES = { auto: autoRiskSchema, mrh: homeRiskSchema } as const;
export type RiskLine = keyof typeof RISK_LINES;
export type RiskOf<L extends RiskLine> = z.output<(typeof RISK_LINES)[L]>;

/**
 * The guarantees of each line, by a code every adapter uses in its offers' `garanties` when it
 * prices through the common model, so that offers of different insurers line up.
 */
export const LINE_GUARANTEES = {
  auto: {
    responsabilite_civile: { fr: 'Responsabilité civile', en: 'Third-party liability' },
    defense_recours: { fr: 'Défense pénale et recours', en: 'Legal defence' },
    protection_conducteur: { fr: 'Protection du conducteur', en: 'Driver injury cover' },
    bris_de_glace: { fr: 'Bris de glace', en: 'Glass breakage' },
    vol_incendie: { fr: 'Vol et incendie', en: 'Theft and fire' },
    evenements_climatiques: { fr: 'Événements climatiques et catastrophes naturelles', en: 'Weather events and natural disasters' },
    dommages_tous_accidents: { fr: 'Dommages tous accidents', en: 'Own damage, any accident' },
    assistance: { fr: 'Assistance', en: 'Breakdown assistance' },
    vehicule_remplacement: { fr: 'Véhicule de remplacement', en: 'Replacement vehicle' },
  },
  mrh: {
    responsabilite_civile: { fr: 'Responsabilité civile vie privée', en: 'Personal liability' },
    incendie: { fr: 'Incendie et explosions', en: 'Fire and explosion' },
    degats_des_eaux: { fr: 'Dégâts des eaux', en: 'Water damage' },
    evenements_climatiques: { fr: 'Événements climatiques et catastrophes naturelles', en: 'Weather events and natural disasters' },
    vol_vandalisme: { fr: 'Vol et vandalisme', en: 'Theft and vandalism' },
    bris_de_glace: { fr: 'Bris de glace', en: 'Glass breakage' },
    dommages_electriques: { fr: 'Dommages électriques', en: 'Electrical damage' },
    assistance: { fr: 'Assistance', en: 'Home assistance' },
    protection_juridique: { fr: 'Protection juridique', en: 'Legal expenses' },
    objets_valeur: { fr: 'Objets de valeur', en: 'Valuables' },
  },
} as const satisfies Record<RiskLine, Record<string, Labels>>;
export type LineGuarantee<L extends RiskLine> = keyof (typeof LINE_GUARANTEES)[L];

/** A question of an insurer's own that the common model does not answer: asked once, with the insurer named. */
export interface ExtraQuestion {
  /** Its key in the answers (`reponses.<compagnie>.<code>`). */
  code: string;
  label: Labels;
  type: 'text' | 'integer' | 'number' | 'boolean' | 'choice';
  /** For a choice: its values and their words. */
  choices?: readonly { value: string; label: Labels }[];
}

/**
 * How an adapter prices a line of business from the common risk: which of its products, the
 * questions of its own the risk leaves open, and the product's dicData. Courtier checks the dicData
 * against the product's schema before it enqueues anything.
 */
export interface RiskMapping<L extends RiskLine> {
  produit: string;
  /** The questions this risk leaves open (none when the risk says all the insurer asks). */
  questions(risk: RiskOf<L>): readonly ExtraQuestion[];
  /** Why this insurer does not insure this risk (a non-occupying owner…), or null. */
  declines?(risk: RiskOf<L>): string | null;
  /** The product's dicData, from the risk and the answers to `questions`. */
  dicData(risk: RiskOf<L>, answers: Readonly<Record<string, unknown>>): Record<string, unknown>;
  /** The insurer's guarantee codes (in its offers) → the line's codes; a code not listed stays the insurer's. */
  guarantees?: Readonly<Record<string, LineGuarantee<L>>>;
}

/** What an adapter declares for the lines it prices through the common model. */
export type RiskMappings = { [L in RiskLine]?: RiskMapping<L> };

/** A risk of each line that passes its schema: the documentation's, the tests' and the console's example. */
export const RISK_EXAMPLES: { [L in RiskLine]: RiskOf<L> } = {
  auto: {
    conducteur: { nom: 'Martin', prenom: 'Léa', date_naissance: '1985-02-10', date_permis: '2004-06-15', crm: 0.72, sinistres_36_mois: 0 },
    vehicule: { marque: 'Renault', modele: 'Clio', date_mise_circulation: '2022-04-01', puissance_fiscale: 5 },
    usage: { usage: 'trajet_travail', code_postal: '33000', stationnement: 'garage_ferme', kilometrage_annuel: 9000 },
    couverture: 'etendue',
  },
  mrh: {
    souscripteur: { nom: 'Martin', prenom: 'Léa' },
    logement: { type: 'appartement', code_postal: '69003', surface_m2: 62, pieces_principales: 3, etage: 2, alarme: false },
    occupation: 'locataire',
    capital_mobilier_eur: 15000,
    couverture: 'intermediaire',
  },
};
