import { z } from '@courtier/adapter-kit';
import type { ProductDefinition } from '@courtier/adapter-kit';

/**
 * Mutuelle Tradition's products. The dicData keys are French snake_case (its own, not Sandbox
 * Assurances'); the codes are the portal's (USAGE P/PT/T, GARANTIE RC/RCV/TR…), labelled in
 * `x-enum-labels`. What depends on the insurer's rules (ages, dates relative to today) is the
 * portal's to refuse: it comes back as a business `data_refused` with the portal's own message.
 */

const isoDate = (label: string) => z.iso.date().describe(label);

function labelledEnum<const Labels extends Record<string, string>>(labels: Labels, description: string) {
  const values = Object.keys(labels) as [Extract<keyof Labels, string>, ...Extract<keyof Labels, string>[]];
  return z.enum(values).meta({ description, 'x-enum-labels': labels });
}

const postcode = z
  .string()
  .regex(/^\d{5}$/, 'five digits')
  .describe('Code postal du lieu de risque');
const subscriber = z.string().trim().min(2).max(60).describe('Nom du souscripteur');

const automobileSchema = z.object({
  nom_souscripteur: subscriber,
  date_naissance: isoDate('Date de naissance du conducteur principal'),
  date_permis: isoDate('Date d’obtention du permis'),
  crm: z.number().min(0.5).max(3.5).describe('Coefficient de réduction-majoration (CRM, 0.50 à 3.50)'),
  code_postal_risque: postcode,
  marque: z.string().trim().min(1).max(30).describe('Marque du véhicule'),
  modele: z.string().trim().min(1).max(30).describe('Modèle du véhicule'),
  puissance_fiscale: z.number().int().min(1).max(50).describe('Puissance fiscale (CV)'),
  date_mise_circulation: isoDate('Date de première mise en circulation'),
  usage: labelledEnum({ P: 'Privé', PT: 'Privé et trajet travail', T: 'Tournées professionnelles' }, 'Usage du véhicule'),
  garantie: labelledEnum({ RC: 'Responsabilité civile', RCV: 'RC + vol et incendie', TR: 'Tous risques' }, 'Garantie'),
});

const habitationSchema = z.object({
  nom_souscripteur: subscriber,
  code_postal_risque: postcode,
  type_habitation: labelledEnum({ M: 'Maison', A: 'Appartement' }, 'Type d’habitation'),
  qualite: labelledEnum({ P: 'Propriétaire occupant', L: 'Locataire', PNO: 'Propriétaire non occupant' }, 'Qualité du souscripteur'),
  nb_pieces: z.number().int().min(1).max(20).describe('Nombre de pièces principales'),
  surface_m2: z.number().int().min(10).max(800).describe('Surface habitable (m²)'),
  capital_mobilier_eur: z.number().int().min(2000).max(300_000).describe('Capital mobilier (€)'),
  alarme: z.boolean().optional().describe('Logement équipé d’une alarme (non par défaut)'),
});

const rcProSchema = z.object({
  raison_sociale: z.string().trim().min(2).max(80).describe('Raison sociale'),
  code_activite: labelledEnum(
    {
      '6201Z': 'Programmation informatique',
      '7022Z': 'Conseil pour les affaires et autres conseils de gestion',
      '7111Z': 'Activités d’architecture',
      '4332A': 'Travaux de menuiserie bois et PVC',
      '8621Z': 'Activité des médecins généralistes',
    },
    'Code activité (NAF)',
  ),
  annee_creation: z.number().int().min(1900).max(2100).describe('Année de création de l’entreprise'),
  chiffre_affaires: z.number().int().min(0).max(50_000_000).describe('Chiffre d’affaires annuel (€)'),
  effectif: z.number().int().min(0).max(500).describe('Effectif salarié'),
  sinistres_3_ans: z.number().int().min(0).max(20).describe('Nombre de sinistres sur les 3 dernières années'),
});

export type AutomobileData = z.output<typeof automobileSchema>;
export type HabitationData = z.output<typeof habitationSchema>;
export type RcProData = z.output<typeof rcProSchema>;

export const TRADITION_PRODUCTS = [
  {
    code: 'automobile',
    label: 'Automobile',
    kind: 'quote',
    schema: automobileSchema,
    example: {
      nom_souscripteur: 'Jean Martin',
      date_naissance: '1985-03-02',
      date_permis: '2004-06-15',
      crm: 0.72,
      code_postal_risque: '33000',
      marque: 'Renault',
      modele: 'Clio',
      puissance_fiscale: 6,
      date_mise_circulation: '2020-01-10',
      usage: 'PT',
      garantie: 'TR',
    },
  },
  {
    code: 'habitation',
    label: 'Habitation',
    kind: 'quote',
    schema: habitationSchema,
    example: {
      nom_souscripteur: 'Claire Petit',
      code_postal_risque: '75011',
      type_habitation: 'A',
      qualite: 'L',
      nb_pieces: 3,
      surface_m2: 65,
      capital_mobilier_eur: 20000,
      alarme: false,
    },
  },
  {
    code: 'rc_pro',
    label: 'Responsabilité civile professionnelle',
    kind: 'quote',
    schema: rcProSchema,
    example: {
      raison_sociale: 'Octet Conseil SARL',
      code_activite: '6201Z',
      annee_creation: 2015,
      chiffre_affaires: 180000,
      effectif: 2,
      sinistres_3_ans: 0,
    },
  },
] as const satisfies readonly ProductDefinition[];

export type TraditionProductCode = (typeof TRADITION_PRODUCTS)[number]['code'];
