import type { ExtraQuestion, RiskMappings } from '@courtier/adapter-kit';

/**
 * How Horizon Direct prices the common risk: `voiture` and `logement`. It asks for the yearly
 * mileage as a band and for where the car sleeps, and for the floor of a flat: when the risk does
 * not say, they are questions of its own. Its offers' guarantees line up with the line's codes.
 */

const MILEAGE_BANDS = [
  { value: 'moins_de_5000', label: { fr: 'Moins de 5 000 km', en: 'Under 5,000 km' }, below: 5_000 },
  { value: 'de_5000_a_10000', label: { fr: 'De 5 000 à 10 000 km', en: '5,000 to 10,000 km' }, below: 10_000 },
  { value: 'de_10000_a_20000', label: { fr: 'De 10 000 à 20 000 km', en: '10,000 to 20,000 km' }, below: 20_000 },
  { value: 'plus_de_20000', label: { fr: 'Plus de 20 000 km', en: 'Over 20,000 km' }, below: Infinity },
] as const;

const mileageQuestion: ExtraQuestion = {
  code: 'kilometrage_annuel',
  label: { fr: 'Kilométrage annuel', en: 'Yearly mileage' },
  type: 'choice',
  choices: MILEAGE_BANDS.map(({ value, label }) => ({ value, label })),
};
const parkingQuestion: ExtraQuestion = {
  code: 'stationnement',
  label: { fr: 'Stationnement la nuit', en: 'Parking at night' },
  type: 'choice',
  choices: [
    { value: 'garage_ferme', label: { fr: 'Garage fermé', en: 'Locked garage' } },
    { value: 'parking_prive', label: { fr: 'Parking privé', en: 'Private car park' } },
    { value: 'voie_publique', label: { fr: 'Voie publique', en: 'Street' } },
  ],
};
const floorQuestion: ExtraQuestion = { code: 'etage', label: { fr: 'Étage du logement', en: 'Floor of the flat' }, type: 'integer' };

const mileageBand = (km: number) => MILEAGE_BANDS.find((band) => km < band.below)!.value;

export const HORIZON_RISKS: RiskMappings = {
  auto: {
    produit: 'voiture',
    questions: (risk) => [
      ...(risk.usage.kilometrage_annuel === undefined ? [mileageQuestion] : []),
      ...(risk.usage.stationnement === undefined ? [parkingQuestion] : []),
    ],
    dicData: (risk, answers) => ({
      prenom: risk.conducteur.prenom,
      nom: risk.conducteur.nom,
      date_naissance_conducteur: risk.conducteur.date_naissance,
      annee_permis: Number(risk.conducteur.date_permis.slice(0, 4)),
      crm: risk.conducteur.crm,
      sinistres_36_mois: risk.conducteur.sinistres_36_mois,
      code_postal_garage: risk.usage.code_postal,
      marque: risk.vehicule.marque,
      modele: risk.vehicule.modele,
      date_mec: risk.vehicule.date_mise_circulation,
      kilometrage_annuel:
        risk.usage.kilometrage_annuel === undefined ? answers.kilometrage_annuel : mileageBand(risk.usage.kilometrage_annuel),
      stationnement: risk.usage.stationnement ?? answers.stationnement,
      formule: ({ essentielle: 'tiers', intermediaire: 'tiers_plus', etendue: 'tous_risques' } as const)[risk.couverture],
    }),
    guarantees: {
      rc: 'responsabilite_civile',
      defense_recours: 'defense_recours',
      bris_de_glace: 'bris_de_glace',
      vol: 'vol_incendie',
      incendie: 'vol_incendie',
      dommages_tous_accidents: 'dommages_tous_accidents',
      assistance_0km: 'assistance',
    },
  },
  mrh: {
    produit: 'logement',
    questions: (risk) => (risk.logement.type === 'appartement' && risk.logement.etage === undefined ? [floorQuestion] : []),
    dicData: (risk, answers) => ({
      prenom: risk.souscripteur.prenom,
      nom: risk.souscripteur.nom,
      type_bien: risk.logement.type,
      qualite: risk.occupation,
      code_postal: risk.logement.code_postal,
      surface: risk.logement.surface_m2,
      nb_pieces_principales: risk.logement.pieces_principales,
      ...(risk.logement.type === 'appartement' ? { etage: risk.logement.etage ?? answers.etage } : {}),
      valeur_mobilier: risk.capital_mobilier_eur,
      ...(risk.logement.alarme === undefined ? {} : { alarme: risk.logement.alarme }),
      formule: ({ essentielle: 'essentielle', intermediaire: 'confort', etendue: 'premium' } as const)[risk.couverture],
    }),
    guarantees: {
      incendie: 'incendie',
      degats_des_eaux: 'degats_des_eaux',
      responsabilite_civile_vie_privee: 'responsabilite_civile',
      vol: 'vol_vandalisme',
      bris_de_glace: 'bris_de_glace',
      dommages_electriques: 'dommages_electriques',
      assistance_0km: 'assistance',
    },
  },
};
