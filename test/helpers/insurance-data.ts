/**
 * An auto quote's answers, as the sandbox and the insurers of the tests take them: Jeanne Martin,
 * born 1984, a Renault Clio of 2021 in Lyon (69003), private use, fully comprehensive. A test that
 * needs another name, date or postcode spreads it over this.
 */
export const AUTO_DIC_DATA = {
  insured_name: 'Jeanne Martin',
  driver_birth_date: '1984-03-09',
  licence_date: '2004-06-01',
  bonus_malus: 0.85,
  vehicle_make: 'Renault',
  vehicle_model: 'Clio',
  first_registration_date: '2021-02-15',
  postcode: '69003',
  usage: 'prive',
  formula: 'tous_risques',
};

/** A small PDF whose body is `text`: a quote's document, as stored and synced. */
export const pdf = (text: string) => Buffer.from(`%PDF-1.4\n${text}\n%%EOF\n`, 'latin1');

/** The same answers typed into the sandbox's auto form in the console, by the label of each field. */
export const AUTO_FORM_FIELDS = {
  'Nom de l’assuré': 'Jeanne Martin',
  'Date de naissance du conducteur': '1984-03-09',
  'Date d’obtention du permis': '2004-06-01',
  'Coefficient bonus-malus (0.50 à 3.50)': '0.85',
  'Marque du véhicule (avec le modèle, ou bien l’immatriculation)': 'Renault',
  'Modèle du véhicule': 'Clio',
  'Date de première mise en circulation': '2021-02-15',
  'Code postal': '69003',
};
