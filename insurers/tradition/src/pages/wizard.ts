import type { PageExpectation } from '@courtier/adapter-kit';
import type { Frame, TraditionDriver } from '../driver.js';
import type { AutomobileData, HabitationData, RcProData, TraditionProductCode } from '../products.js';
import { PAGES } from './expectations.js';

/** One step of a wizard: the page it expects, and what it types there from the dicData. */
export interface WizardStep<D> {
  page: PageExpectation;
  fill(driver: TraditionDriver, frame: Frame, data: D): Promise<void>;
}

/** "1980-05-14" → "14/05/1980": the portal takes French dates as text. */
const frenchDate = (iso: string) => iso.split('-').reverse().join('/');
/** 0.72 → "0,72". */
const frenchDecimal = (value: number) => value.toFixed(2).replace('.', ',');

const AUTOMOBILE: readonly WizardStep<AutomobileData>[] = [
  {
    page: PAGES.automobile[0],
    async fill(d, f, data) {
      await d.fill(f, 'Nom du souscripteur', data.nom_souscripteur);
      await d.fill(f, 'Date de naissance', frenchDate(data.date_naissance));
      await d.fill(f, 'Date du permis', frenchDate(data.date_permis));
      await d.fill(f, 'CRM', frenchDecimal(data.crm));
      await d.fill(f, 'Code postal du risque', data.code_postal_risque);
    },
  },
  {
    page: PAGES.automobile[1],
    async fill(d, f, data) {
      await d.fill(f, 'Marque', data.marque);
      await d.fill(f, 'Modèle', data.modele);
      await d.fill(f, 'Puissance fiscale (CV)', String(data.puissance_fiscale));
      await d.fill(f, 'Date de mise en circulation', frenchDate(data.date_mise_circulation));
      await d.select(f, 'Usage', data.usage);
    },
  },
  {
    page: PAGES.automobile[2],
    async fill(d, f, data) {
      const labels = { RC: 'Responsabilité civile', RCV: 'RC + vol et incendie', TR: 'Tous risques' } as const;
      await d.check(f, labels[data.garantie]);
    },
  },
];

const HABITATION: readonly WizardStep<HabitationData>[] = [
  {
    page: PAGES.habitation[0],
    async fill(d, f, data) {
      await d.fill(f, 'Nom du souscripteur', data.nom_souscripteur);
      await d.fill(f, 'Code postal du risque', data.code_postal_risque);
      await d.select(f, 'Type d’habitation', data.type_habitation);
      await d.select(f, 'Qualité', data.qualite);
    },
  },
  {
    page: PAGES.habitation[1],
    async fill(d, f, data) {
      await d.fill(f, 'Nombre de pièces', String(data.nb_pieces));
      await d.fill(f, 'Surface (m²)', String(data.surface_m2));
      await d.fill(f, 'Capital mobilier (€)', String(data.capital_mobilier_eur));
      await d.check(f, data.alarme ? 'Oui' : 'Non');
    },
  },
];

const RC_PRO: readonly WizardStep<RcProData>[] = [
  {
    page: PAGES.rc_pro[0],
    async fill(d, f, data) {
      await d.fill(f, 'Raison sociale', data.raison_sociale);
      await d.select(f, 'Code activité (NAF)', data.code_activite);
      await d.fill(f, 'Année de création', String(data.annee_creation));
    },
  },
  {
    page: PAGES.rc_pro[1],
    async fill(d, f, data) {
      await d.fill(f, 'Chiffre d’affaires annuel (€)', String(data.chiffre_affaires));
      await d.fill(f, 'Effectif salarié', String(data.effectif));
      await d.fill(f, 'Sinistres sur 3 ans', String(data.sinistres_3_ans));
    },
  },
];

export const WIZARDS = { automobile: AUTOMOBILE, habitation: HABITATION, rc_pro: RC_PRO } as const;

/** Each product's link in the extranet's menu frame. */
export const MENU_LINKS: Readonly<Record<TraditionProductCode, string>> = {
  automobile: 'Devis Automobile',
  habitation: 'Devis Habitation',
  rc_pro: 'Devis RC Professionnelle',
};
