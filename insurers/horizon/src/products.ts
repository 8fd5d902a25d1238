import { z } from '@courtier/adapter-kit';
import type { ProductDefinition } from '@courtier/adapter-kit';

/**
 * Horizon Direct's products, with its own field names (French, flat, as its API names them):
 * integrators read each schema as JSON Schema through the schema endpoint. `formule` is the formula
 * whose annual premium is `tarif_eur`; the result's `offres` carries every formula the portal priced.
 */

const isoDate = (label: string) => z.iso.date().describe(label);
const name = (label: string) => z.string().trim().min(1).max(60).describe(label);
const postcode = (label: string) =>
  z
    .string()
    .regex(/^\d{5}$/, 'five digits')
    .describe(label);

/** A choice whose values are codes and whose labels are words (`x-enum-labels`). */
function labelledEnum<const Labels extends Record<string, string>>(labels: Labels, description: string) {
  const values = Object.keys(labels) as [Extract<keyof Labels, string>, ...Extract<keyof Labels, string>[]];
  return z.enum(values).meta({ description, 'x-enum-labels': labels });
}

export const carSchema = z.object({
  prenom: name('Prénom du conducteur principal'),
  nom: name('Nom du conducteur principal'),
  date_naissance_conducteur: isoDate('Date de naissance du conducteur principal'),
  annee_permis: z.number().int().min(1940).max(2100).describe('Année d’obtention du permis B'),
  crm: z.number().min(0.5).max(3.5).describe('Coefficient de réduction-majoration (bonus-malus), 0.50 à 3.50'),
  sinistres_36_mois: z.number().int().min(0).max(10).describe('Sinistres déclarés sur les 36 derniers mois'),
  code_postal_garage: postcode('Code postal du lieu de stationnement la nuit'),
  marque: name('Marque du véhicule'),
  modele: name('Modèle du véhicule'),
  date_mec: isoDate('Date de première mise en circulation'),
  kilometrage_annuel: labelledEnum(
    {
      moins_de_5000: 'Moins de 5 000 km',
      de_5000_a_10000: 'De 5 000 à 10 000 km',
      de_10000_a_20000: 'De 10 000 à 20 000 km',
      plus_de_20000: 'Plus de 20 000 km',
    },
    'Kilométrage annuel',
  ),
  stationnement: labelledEnum(
    { garage_ferme: 'Garage fermé', parking_prive: 'Parking privé', voie_publique: 'Voie publique' },
    'Stationnement la nuit',
  ),
  formule: labelledEnum({ tiers: 'Tiers', tiers_plus: 'Tiers+', tous_risques: 'Tous risques' }, 'Formule du devis').default('tous_risques'),
});

export const homeSchema = z
  .object({
    prenom: name('Prénom du souscripteur'),
    nom: name('Nom du souscripteur'),
    type_bien: labelledEnum({ maison: 'Maison', appartement: 'Appartement' }, 'Type de bien'),
    qualite: labelledEnum(
      { proprietaire: 'Propriétaire occupant', locataire: 'Locataire', proprietaire_non_occupant: 'Propriétaire non occupant' },
      'Qualité du souscripteur',
    ),
    code_postal: postcode('Code postal du bien'),
    surface: z.number().int().min(9).max(1000).describe('Surface habitable (m²)'),
    nb_pieces_principales: z.number().int().min(1).max(20).describe('Nombre de pièces principales'),
    etage: z.number().int().min(0).max(60).optional().describe('Étage (appartement : obligatoire ; 0 pour le rez-de-chaussée)'),
    valeur_mobilier: z.number().int().min(2000).max(300_000).describe('Valeur du mobilier (€)'),
    alarme: z.boolean().default(false).describe('Alarme anti-intrusion'),
    formule: labelledEnum({ essentielle: 'Essentielle', confort: 'Confort', premium: 'Premium' }, 'Formule du devis').default('confort'),
  })
  .refine((d) => d.type_bien !== 'appartement' || d.etage !== undefined, { message: 'An appartement needs its etage.', path: ['etage'] });

export type CarQuoteData = z.output<typeof carSchema>;
export type HomeQuoteData = z.output<typeof homeSchema>;

export const HORIZON_PRODUCTS = [
  {
    code: 'voiture',
    label: 'Assurance auto',
    kind: 'quote',
    schema: carSchema,
    example: {
      prenom: 'Léa',
      nom: 'Martin',
      date_naissance_conducteur: '1985-02-10',
      annee_permis: 2004,
      crm: 0.72,
      sinistres_36_mois: 0,
      code_postal_garage: '33000',
      marque: 'Renault',
      modele: 'Clio',
      date_mec: '2022-04-01',
      kilometrage_annuel: 'de_5000_a_10000',
      stationnement: 'garage_ferme',
      formule: 'tous_risques',
    },
  },
  {
    code: 'logement',
    label: 'Assurance habitation',
    kind: 'quote',
    schema: homeSchema,
    example: {
      prenom: 'Hugo',
      nom: 'Bernard',
      type_bien: 'appartement',
      qualite: 'locataire',
      code_postal: '69007',
      surface: 48,
      nb_pieces_principales: 2,
      etage: 3,
      valeur_mobilier: 12000,
      alarme: false,
      formule: 'confort',
    },
  },
] as const satisfies readonly ProductDefinition[];
