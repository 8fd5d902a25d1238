import { z } from '@courtier/adapter-kit';
import type { ProductDefinition } from '@courtier/adapter-kit';

/**
 * The sandbox insurer's products. Integrators see each schema as JSON Schema through
 * GET /api/v1/public/produits-disponibles/{code}/schema?compagnie=sandbox: the keys are the
 * dicData fields (English snake_case), `.describe()` gives each field's label, and `example`
 * must pass the schema (a test checks it). Keep the checks to what the data must look like; what
 * depends on the insurer's rules (ages, dates relative to today) is the portal's to refuse, and
 * comes back as a business `data_refused` with the portal's own message.
 */

// The format is JSON Schema's (format: date); a label in words does not repeat it.
const isoDate = (label: string) => z.iso.date().describe(label);

/**
 * A choice whose values are codes and whose labels are words: the labels travel in the JSON Schema
 * as `x-enum-labels` (value → label), and the schema document lifts them into `enum_labels`, so that
 * a form shows "Tiers étendu" and sends tiers_etendu.
 */
function labelledEnum<const Labels extends Record<string, string>>(labels: Labels, description: string) {
  const values = Object.keys(labels) as [Extract<keyof Labels, string>, ...Extract<keyof Labels, string>[]];
  return z.enum(values).meta({ description, 'x-enum-labels': labels });
}
const postcode = z
  .string()
  .regex(/^\d{5}$/, 'five digits')
  .describe('Code postal');

export const autoSchema = z
  .object({
    insured_name: z.string().trim().min(2).max(80).describe('Nom de l’assuré'),
    driver_birth_date: isoDate('Date de naissance du conducteur'),
    licence_date: isoDate('Date d’obtention du permis'),
    bonus_malus: z.number().min(0.5).max(3.5).describe('Coefficient bonus-malus (0.50 à 3.50)'),
    vehicle_make: z.string().trim().min(1).max(40).optional().describe('Marque du véhicule (avec le modèle, ou bien l’immatriculation)'),
    vehicle_model: z.string().trim().min(1).max(40).optional().describe('Modèle du véhicule'),
    registration: z
      .string()
      .regex(/^[A-Z]{2}-\d{3}-[A-Z]{2}$/, 'like AB-123-CD')
      .optional()
      .describe('Immatriculation (AB-123-CD), à défaut de marque et modèle'),
    first_registration_date: isoDate('Date de première mise en circulation'),
    postcode,
    usage: labelledEnum({ prive: 'Privé', professionnel: 'Professionnel', mixte: 'Mixte' }, 'Usage du véhicule'),
    formula: labelledEnum({ tiers: 'Tiers', tiers_etendu: 'Tiers étendu', tous_risques: 'Tous risques' }, 'Formule'),
  })
  .refine((d) => (d.vehicle_make !== undefined && d.vehicle_model !== undefined) || d.registration !== undefined, {
    message: 'Give vehicle_make and vehicle_model, or registration.',
    path: ['registration'],
  });

export const homeSchema = z.object({
  insured_name: z.string().trim().min(2).max(80).describe('Nom de l’assuré'),
  dwelling_type: labelledEnum({ maison: 'Maison', appartement: 'Appartement' }, 'Type de logement'),
  surface_m2: z.number().int().min(9).max(1000).describe('Surface habitable (m²)'),
  rooms: z.number().int().min(1).max(30).describe('Nombre de pièces'),
  postcode,
  occupant_status: labelledEnum({ proprietaire: 'Propriétaire', locataire: 'Locataire' }, 'Statut de l’occupant'),
  contents_capital_eur: z.number().int().min(1000).max(500_000).describe('Capital mobilier (€)'),
});

/** What the robot types into the portal's forms: the product's dicData once validated, never a copy of its fields. */
export type AutoQuoteData = z.output<typeof autoSchema>;
export type HomeQuoteData = z.output<typeof homeSchema>;

export const attestationSchema = z.object({
  policy_number: z.string().trim().min(3).max(40).describe('Numéro de contrat (SBX-123456 dans la sandbox)'),
});

export const SANDBOX_PRODUCTS = [
  {
    code: 'auto',
    label: 'Assurance auto',
    kind: 'quote',
    schema: autoSchema,
    example: {
      insured_name: 'Jean Dupont',
      driver_birth_date: '1980-05-14',
      licence_date: '2000-06-01',
      bonus_malus: 0.85,
      vehicle_make: 'Peugeot',
      vehicle_model: '308',
      first_registration_date: '2021-03-15',
      postcode: '69003',
      usage: 'prive',
      formula: 'tous_risques',
    },
  },
  {
    code: 'mrh',
    label: 'Multirisque habitation',
    kind: 'quote',
    schema: homeSchema,
    example: {
      insured_name: 'Marie Curie',
      dwelling_type: 'appartement',
      surface_m2: 62,
      rooms: 3,
      postcode: '75011',
      occupant_status: 'locataire',
      contents_capital_eur: 15000,
    },
  },
  {
    code: 'attestation',
    label: 'Attestation d’assurance',
    kind: 'routine',
    schema: attestationSchema,
    example: { policy_number: 'SBX-123456' },
  },
] as const satisfies readonly ProductDefinition[];
