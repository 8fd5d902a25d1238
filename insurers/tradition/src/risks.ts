import type { ExtraQuestion, RiskMappings } from '@courtier/adapter-kit';

/**
 * How Mutuelle Tradition prices the common risk: `automobile` and `habitation`, with its one-letter
 * codes. It rates a car by its tax horsepower: a question of its own when the risk does not say.
 */

const horsepowerQuestion: ExtraQuestion = {
  code: 'puissance_fiscale',
  label: { fr: 'Puissance fiscale du véhicule (CV)', en: 'Tax horsepower of the vehicle (CV)' },
  type: 'integer',
};

export const TRADITION_RISKS: RiskMappings = {
  auto: {
    produit: 'automobile',
    questions: (risk) => (risk.vehicule.puissance_fiscale === undefined ? [horsepowerQuestion] : []),
    dicData: (risk, answers) => ({
      nom_souscripteur: `${risk.conducteur.prenom} ${risk.conducteur.nom}`,
      date_naissance: risk.conducteur.date_naissance,
      date_permis: risk.conducteur.date_permis,
      crm: risk.conducteur.crm,
      code_postal_risque: risk.usage.code_postal,
      marque: risk.vehicule.marque,
      modele: risk.vehicule.modele,
      puissance_fiscale: risk.vehicule.puissance_fiscale ?? answers.puissance_fiscale,
      date_mise_circulation: risk.vehicule.date_mise_circulation,
      usage: ({ prive: 'P', trajet_travail: 'PT', professionnel: 'T' } as const)[risk.usage.usage],
      garantie: ({ essentielle: 'RC', intermediaire: 'RCV', etendue: 'TR' } as const)[risk.couverture],
    }),
  },
  mrh: {
    produit: 'habitation',
    questions: () => [],
    dicData: (risk) => ({
      nom_souscripteur: `${risk.souscripteur.prenom} ${risk.souscripteur.nom}`,
      code_postal_risque: risk.logement.code_postal,
      type_habitation: risk.logement.type === 'maison' ? 'M' : 'A',
      qualite: ({ proprietaire: 'P', locataire: 'L', proprietaire_non_occupant: 'PNO' } as const)[risk.occupation],
      nb_pieces: risk.logement.pieces_principales,
      surface_m2: risk.logement.surface_m2,
      capital_mobilier_eur: risk.capital_mobilier_eur,
      ...(risk.logement.alarme === undefined ? {} : { alarme: risk.logement.alarme }),
    }),
  },
};
