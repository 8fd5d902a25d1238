/**
 * The wizard of each product, as the API describes it to the single-page app: its steps, each with
 * its fields (name, label, kind, bounds, choices). The app draws its forms and checks them from this
 * description; the server checks the same answers again (validation.ts). The redesign (mode
 * changed) renames labels and steps, moves a field to another step and adds one step.
 */

export type ProductCode = 'voiture' | 'logement';
export const PRODUCTS: readonly ProductCode[] = ['voiture', 'logement'];

interface Choice {
  value: string;
  label: string;
}

export interface FieldSpec {
  name: string;
  label: string;
  /** date: typed JJ/MM/AAAA in the page, sent as YYYY-MM-DD; postcode: five digits. */
  kind: 'text' | 'date' | 'integer' | 'decimal' | 'postcode' | 'select' | 'checkbox';
  required: boolean;
  min?: number;
  max?: number;
  choices?: readonly Choice[];
  help?: string;
}

export interface StepSpec {
  name: string;
  title: string;
  fields: readonly FieldSpec[];
}

const text = (name: string, label: string): FieldSpec => ({ name, label, kind: 'text', required: true, min: 1, max: 60 });
const date = (name: string, label: string): FieldSpec => ({ name, label, kind: 'date', required: true, help: 'JJ/MM/AAAA' });
const integer = (name: string, label: string, min: number, max: number, required = true): FieldSpec => ({
  name,
  label,
  kind: 'integer',
  required,
  min,
  max,
});
const postcode = (name: string, label: string): FieldSpec => ({ name, label, kind: 'postcode', required: true });
const select = (name: string, label: string, choices: readonly Choice[]): FieldSpec => ({
  name,
  label,
  kind: 'select',
  required: true,
  choices,
});

const MILEAGE_CHOICES: readonly Choice[] = [
  { value: 'moins_de_5000', label: 'Moins de 5 000 km' },
  { value: 'de_5000_a_10000', label: 'De 5 000 à 10 000 km' },
  { value: 'de_10000_a_20000', label: 'De 10 000 à 20 000 km' },
  { value: 'plus_de_20000', label: 'Plus de 20 000 km' },
];
const PARKING_CHOICES: readonly Choice[] = [
  { value: 'garage_ferme', label: 'Garage fermé' },
  { value: 'parking_prive', label: 'Parking privé' },
  { value: 'voie_publique', label: 'Voie publique' },
];
const PROPERTY_CHOICES: readonly Choice[] = [
  { value: 'maison', label: 'Maison' },
  { value: 'appartement', label: 'Appartement' },
];
const OCCUPANCY_CHOICES: readonly Choice[] = [
  { value: 'proprietaire', label: 'Propriétaire occupant' },
  { value: 'locataire', label: 'Locataire' },
  { value: 'proprietaire_non_occupant', label: 'Propriétaire non occupant' },
];
const USAGE_CHOICES: readonly Choice[] = [
  { value: 'prive', label: 'Privé et trajet travail' },
  { value: 'professionnel', label: 'Professionnel' },
];

const crm: FieldSpec = { name: 'crm', label: 'Coefficient bonus-malus (CRM)', kind: 'decimal', required: true, min: 0.5, max: 3.5 };
const alarm: FieldSpec = { name: 'alarme', label: 'Alarme anti-intrusion', kind: 'checkbox', required: false };
const floor = integer('etage', 'Étage (appartement)', 0, 60, false);

const WIZARDS: Record<ProductCode, { normal: readonly StepSpec[]; changed: readonly StepSpec[] }> = {
  voiture: {
    normal: [
      {
        name: 'conducteur',
        title: 'Conducteur principal',
        fields: [
          text('prenom', 'Prénom'),
          text('nom', 'Nom'),
          date('date_naissance_conducteur', 'Date de naissance du conducteur'),
          integer('annee_permis', 'Année d’obtention du permis', 1940, 2100),
          crm,
          integer('sinistres_36_mois', 'Sinistres sur 36 mois', 0, 10),
          postcode('code_postal_garage', 'Code postal du garage'),
        ],
      },
      {
        name: 'vehicule',
        title: 'Véhicule',
        fields: [
          text('marque', 'Marque'),
          text('modele', 'Modèle'),
          date('date_mec', 'Date de mise en circulation'),
          select('kilometrage_annuel', 'Kilométrage annuel', MILEAGE_CHOICES),
          select('stationnement', 'Stationnement la nuit', PARKING_CHOICES),
        ],
      },
    ],
    changed: [
      {
        name: 'profil',
        title: 'Votre profil',
        fields: [
          text('prenom', 'Votre prénom'),
          text('nom', 'Votre nom'),
          date('date_naissance_conducteur', 'Née / né le'),
          integer('annee_permis', 'Permis B depuis (année)', 1940, 2100),
          { ...crm, label: 'Bonus-malus' },
          integer('sinistres_36_mois', 'Sinistres déclarés (3 ans)', 0, 10),
        ],
      },
      {
        name: 'usage',
        title: 'Usage du véhicule',
        fields: [select('usage', 'Usage', USAGE_CHOICES), postcode('code_postal_garage', 'Code postal de stationnement')],
      },
      {
        name: 'vehicule',
        title: 'Votre véhicule',
        fields: [
          text('marque', 'Constructeur'),
          text('modele', 'Modèle'),
          date('date_mec', 'Première immatriculation'),
          select('kilometrage_annuel', 'Kilomètres par an', MILEAGE_CHOICES),
          select('stationnement', 'Stationnement', PARKING_CHOICES),
        ],
      },
    ],
  },
  logement: {
    normal: [
      {
        name: 'bien',
        title: 'Le bien à assurer',
        fields: [
          text('prenom', 'Prénom'),
          text('nom', 'Nom'),
          select('type_bien', 'Type de bien', PROPERTY_CHOICES),
          select('qualite', 'Vous êtes', OCCUPANCY_CHOICES),
          postcode('code_postal', 'Code postal du bien'),
        ],
      },
      {
        name: 'pieces',
        title: 'Pièces et contenu',
        fields: [
          integer('surface', 'Surface habitable (m²)', 9, 1000),
          integer('nb_pieces_principales', 'Nombre de pièces principales', 1, 20),
          floor,
          integer('valeur_mobilier', 'Valeur du mobilier (€)', 2000, 300_000),
          alarm,
        ],
      },
    ],
    changed: [
      {
        name: 'occupant',
        title: 'L’occupant',
        fields: [text('prenom', 'Votre prénom'), text('nom', 'Votre nom'), select('qualite', 'Votre situation', OCCUPANCY_CHOICES)],
      },
      {
        name: 'logement',
        title: 'Votre logement',
        fields: [
          select('type_bien', 'Maison ou appartement', PROPERTY_CHOICES),
          postcode('code_postal', 'Code postal'),
          integer('surface', 'Surface (m²)', 9, 1000),
          integer('nb_pieces_principales', 'Pièces principales', 1, 20),
          { ...floor, label: 'Étage' },
        ],
      },
      {
        name: 'contenu',
        title: 'Vos biens',
        fields: [integer('valeur_mobilier', 'Mobilier à assurer (€)', 2000, 300_000), { ...alarm, label: 'Logement équipé d’une alarme' }],
      },
    ],
  },
};

export function wizardOf(product: ProductCode, redesigned: boolean): readonly StepSpec[] {
  return WIZARDS[product][redesigned ? 'changed' : 'normal'];
}

export const PRODUCT_LABELS: Record<ProductCode, string> = { voiture: 'Assurance auto', logement: 'Assurance habitation' };
