import type { RiskMappings } from '@courtier/adapter-kit';

/**
 * How Sandbox Assurances prices the common risk: its `auto` and `mrh` products, whose fields the
 * common model answers in full. It quotes one formula (the one the cover level names) and does not
 * insure a non-occupying owner's home.
 */
export const SANDBOX_RISKS: RiskMappings = {
  auto: {
    produit: 'auto',
    questions: () => [],
    dicData: (risk) => ({
      insured_name: `${risk.conducteur.prenom} ${risk.conducteur.nom}`,
      driver_birth_date: risk.conducteur.date_naissance,
      licence_date: risk.conducteur.date_permis,
      bonus_malus: risk.conducteur.crm,
      vehicle_make: risk.vehicule.marque,
      vehicle_model: risk.vehicule.modele,
      ...(risk.vehicule.immatriculation ? { registration: risk.vehicule.immatriculation } : {}),
      first_registration_date: risk.vehicule.date_mise_circulation,
      postcode: risk.usage.code_postal,
      usage: ({ prive: 'prive', trajet_travail: 'mixte', professionnel: 'professionnel' } as const)[risk.usage.usage],
      formula: ({ essentielle: 'tiers', intermediaire: 'tiers_etendu', etendue: 'tous_risques' } as const)[risk.couverture],
    }),
  },
  mrh: {
    produit: 'mrh',
    questions: () => [],
    declines: (risk) =>
      risk.occupation === 'proprietaire_non_occupant' ? 'Sandbox Assurances n’assure pas les propriétaires non occupants.' : null,
    dicData: (risk) => ({
      insured_name: `${risk.souscripteur.prenom} ${risk.souscripteur.nom}`,
      dwelling_type: risk.logement.type,
      surface_m2: risk.logement.surface_m2,
      rooms: risk.logement.pieces_principales,
      postcode: risk.logement.code_postal,
      occupant_status: risk.occupation,
      contents_capital_eur: risk.capital_mobilier_eur,
    }),
  },
};
