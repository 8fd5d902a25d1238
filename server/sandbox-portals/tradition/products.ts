import {
  ACTIVITIES,
  automobilePremium,
  GARANTIE_LABELS,
  habitationPremium,
  QUALITE_LABELS,
  rcProPremium,
  TYPE_LABELS,
  USAGE_LABELS,
  type Garantie,
  type Qualite,
  type TypeHab,
  type Usage,
} from './pricing.js';
import { fullYearsSince } from '../sandbox/pricing.js';

/**
 * Mutuelle Tradition's three wizards, described as data: each step's fields with their legacy
 * names (NOM_SOUSC, CP_RISQUE…), labels, codes and server-side checks, and each product's pricing
 * from the draft's raw values. Dates are typed the French way (JJ/MM/AAAA), decimals with a comma.
 */

export type ProductCode = 'automobile' | 'habitation' | 'rc_pro';

interface Choice {
  value: string;
  label: string;
}

export interface FieldDef {
  name: string;
  label: string;
  kind: 'text' | 'select' | 'radio';
  hint?: string;
  options?: readonly Choice[];
  /** The message for a raw (trimmed) value, or null when it is accepted. */
  check: (value: string, nowMs: number) => string | null;
}

export interface StepDef {
  title: string;
  fields: readonly FieldDef[];
}

export interface Priced {
  premiumEur: number;
  formule: string;
  insuredName: string;
  details: string[];
}

export interface ProductDef {
  code: ProductCode;
  label: string;
  steps: readonly StepDef[];
  price: (values: Readonly<Record<string, string>>, nowMs: number) => Priced;
}

const choices = (labels: Readonly<Record<string, string>>): Choice[] => Object.entries(labels).map(([value, label]) => ({ value, label }));

/** "14/05/1980" → "1980-05-14"; null when it is not a real date. */
function isoFromFrench(text: string): string | null {
  const match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text);
  if (!match) return null;
  const [, d, m, y] = match;
  const date = new Date(`${y}-${m}-${d}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.getUTCDate() !== Number(d) ? null : `${y}-${m}-${d}`;
}

const decimal = (text: string) => Number(text.replace(',', '.'));

function required(label: string, value: string): string | null {
  return value === '' ? `Le champ « ${label} » est obligatoire.` : null;
}

function textCheck(label: string, max: number): FieldDef['check'] {
  return (v) => required(label, v) ?? (v.length > max ? `« ${label} » : ${max} caractères au plus.` : null);
}

function intCheck(label: string, min: number, max: number): FieldDef['check'] {
  return (v) =>
    required(label, v) ??
    (/^\d{1,9}$/.test(v) && Number(v) >= min && Number(v) <= max ? null : `« ${label} » : un entier de ${min} à ${max}.`);
}

function dateCheck(label: string, minAge: number, maxAge: number): FieldDef['check'] {
  return (v, now) => {
    const missing = required(label, v);
    if (missing) return missing;
    const iso = isoFromFrench(v);
    if (!iso) return `« ${label} » : date au format JJ/MM/AAAA.`;
    const years = fullYearsSince(iso, now);
    if (new Date(`${iso}T00:00:00Z`).getTime() > now) return `« ${label} » ne peut pas être dans le futur.`;
    return years < minAge || years > maxAge ? `« ${label} » : entre ${minAge} et ${maxAge} ans avant ce jour.` : null;
  };
}

function choiceCheck(label: string, options: readonly Choice[]): FieldDef['check'] {
  return (v) => required(label, v) ?? (options.some((o) => o.value === v) ? null : `« ${label} » : choix invalide.`);
}

const postcodeCheck: FieldDef['check'] = (v) =>
  required('Code postal du risque', v) ?? (/^\d{5}$/.test(v) ? null : '« Code postal du risque » : 5 chiffres.');

function textField(name: string, label: string, max: number, hint?: string): FieldDef {
  return { name, label, kind: 'text', check: textCheck(label, max), ...(hint ? { hint } : {}) };
}
function choiceField(name: string, label: string, kind: 'select' | 'radio', labels: Readonly<Record<string, string>>): FieldDef {
  const options = choices(labels);
  return { name, label, kind, options, check: choiceCheck(label, options) };
}

const NOM_SOUSC = textField('NOM_SOUSC', 'Nom du souscripteur', 60);
const CP_RISQUE: FieldDef = { name: 'CP_RISQUE', label: 'Code postal du risque', kind: 'text', check: postcodeCheck };

const AUTOMOBILE: ProductDef = {
  code: 'automobile',
  label: 'Devis Automobile',
  steps: [
    {
      title: 'Souscripteur',
      fields: [
        NOM_SOUSC,
        { name: 'DT_NAISS', label: 'Date de naissance', kind: 'text', hint: 'JJ/MM/AAAA', check: dateCheck('Date de naissance', 18, 99) },
        { name: 'DT_PERMIS', label: 'Date du permis', kind: 'text', hint: 'JJ/MM/AAAA', check: dateCheck('Date du permis', 0, 80) },
        {
          name: 'CRM',
          label: 'CRM',
          kind: 'text',
          hint: 'Coefficient de réduction-majoration, ex. 0,85',
          check: (v) =>
            required('CRM', v) ??
            (/^\d(?:[.,]\d{1,2})?$/.test(v) && decimal(v) >= 0.5 && decimal(v) <= 3.5 ? null : '« CRM » : de 0,50 à 3,50.'),
        },
        CP_RISQUE,
      ],
    },
    {
      title: 'Véhicule',
      fields: [
        textField('MARQUE', 'Marque', 30),
        textField('MODELE', 'Modèle', 30),
        { name: 'PUISS_FISC', label: 'Puissance fiscale (CV)', kind: 'text', check: intCheck('Puissance fiscale (CV)', 1, 50) },
        {
          name: 'DT_MEC',
          label: 'Date de mise en circulation',
          kind: 'text',
          hint: 'JJ/MM/AAAA',
          check: dateCheck('Date de mise en circulation', 0, 60),
        },
        choiceField('USAGE', 'Usage', 'select', USAGE_LABELS),
      ],
    },
    { title: 'Garanties', fields: [choiceField('GARANTIE', 'Garantie', 'radio', GARANTIE_LABELS)] },
  ],
  price(v, now) {
    const birthDate = isoFromFrench(v.DT_NAISS ?? '') ?? '';
    const garantie = v.GARANTIE as Garantie;
    return {
      premiumEur: automobilePremium(
        {
          birthDate,
          crm: decimal(v.CRM ?? ''),
          fiscalHorsepower: Number(v.PUISS_FISC),
          usage: v.USAGE as Usage,
          garantie,
          postcode: v.CP_RISQUE ?? '',
        },
        now,
      ),
      formule: GARANTIE_LABELS[garantie],
      insuredName: v.NOM_SOUSC ?? '',
      details: [
        `Conducteur né le ${v.DT_NAISS}, permis du ${v.DT_PERMIS}, CRM ${v.CRM}`,
        `Véhicule : ${v.MARQUE} ${v.MODELE}, ${v.PUISS_FISC} CV, mis en circulation le ${v.DT_MEC}`,
        `Usage : ${USAGE_LABELS[v.USAGE as Usage]} – code postal ${v.CP_RISQUE}`,
      ],
    };
  },
};

const HABITATION: ProductDef = {
  code: 'habitation',
  label: 'Devis Habitation',
  steps: [
    {
      title: 'Risque',
      fields: [
        NOM_SOUSC,
        CP_RISQUE,
        choiceField('TYPE_HAB', 'Type d’habitation', 'select', TYPE_LABELS),
        choiceField('QUALITE', 'Qualité', 'select', QUALITE_LABELS),
      ],
    },
    {
      title: 'Biens',
      fields: [
        { name: 'NB_PIECES', label: 'Nombre de pièces', kind: 'text', check: intCheck('Nombre de pièces', 1, 20) },
        { name: 'SURF', label: 'Surface (m²)', kind: 'text', check: intCheck('Surface (m²)', 10, 800) },
        { name: 'CAP_MOB', label: 'Capital mobilier (€)', kind: 'text', check: intCheck('Capital mobilier (€)', 2000, 300000) },
        choiceField('ALARME', 'Alarme', 'radio', { O: 'Oui', N: 'Non' }),
      ],
    },
  ],
  price(v) {
    const qualite = v.QUALITE as Qualite;
    return {
      premiumEur: habitationPremium({
        type: v.TYPE_HAB as TypeHab,
        qualite,
        rooms: Number(v.NB_PIECES),
        surfaceM2: Number(v.SURF),
        contentsEur: Number(v.CAP_MOB),
        alarm: v.ALARME === 'O',
        postcode: v.CP_RISQUE ?? '',
      }),
      formule: `Habitation – ${QUALITE_LABELS[qualite]}`,
      insuredName: v.NOM_SOUSC ?? '',
      details: [
        `${TYPE_LABELS[v.TYPE_HAB as TypeHab]} de ${v.SURF} m², ${v.NB_PIECES} pièce(s), code postal ${v.CP_RISQUE}`,
        `Capital mobilier : ${v.CAP_MOB} €, alarme : ${v.ALARME === 'O' ? 'oui' : 'non'}`,
      ],
    };
  },
};

const RC_PRO: ProductDef = {
  code: 'rc_pro',
  label: 'Devis RC Professionnelle',
  steps: [
    {
      title: 'Entreprise',
      fields: [
        textField('RAISON_SOC', 'Raison sociale', 80),
        choiceField(
          'CODE_ACT',
          'Code activité (NAF)',
          'select',
          Object.fromEntries(Object.entries(ACTIVITIES).map(([c, a]) => [c, `${c} – ${a.label}`])),
        ),
        { name: 'ANNEE_CREA', label: 'Année de création', kind: 'text', check: (v, now) => yearCheck(v, now) },
      ],
    },
    {
      title: 'Activité',
      fields: [
        {
          name: 'CA',
          label: 'Chiffre d’affaires annuel (€)',
          kind: 'text',
          check: intCheck('Chiffre d’affaires annuel (€)', 0, 50_000_000),
        },
        { name: 'EFFECTIF', label: 'Effectif salarié', kind: 'text', check: intCheck('Effectif salarié', 0, 500) },
        { name: 'SIN_3ANS', label: 'Sinistres sur 3 ans', kind: 'text', check: intCheck('Sinistres sur 3 ans', 0, 20) },
      ],
    },
  ],
  price(v, now) {
    const activity = ACTIVITIES[v.CODE_ACT ?? ''];
    return {
      premiumEur: rcProPremium(
        {
          activity: v.CODE_ACT ?? '',
          turnoverEur: Number(v.CA),
          staff: Number(v.EFFECTIF),
          claims3Years: Number(v.SIN_3ANS),
          creationYear: Number(v.ANNEE_CREA),
        },
        now,
      ),
      formule: 'RC Professionnelle',
      insuredName: v.RAISON_SOC ?? '',
      details: [
        `Activité : ${v.CODE_ACT} – ${activity?.label ?? ''}, créée en ${v.ANNEE_CREA}`,
        `Chiffre d’affaires : ${v.CA} €, effectif : ${v.EFFECTIF}, sinistres sur 3 ans : ${v.SIN_3ANS}`,
      ],
    };
  },
};

function yearCheck(v: string, now: number): string | null {
  const year = new Date(now).getUTCFullYear();
  return (
    required('Année de création', v) ??
    (/^\d{4}$/.test(v) && Number(v) >= 1900 && Number(v) <= year ? null : `« Année de création » : de 1900 à ${year}.`)
  );
}

export const PRODUCTS: Readonly<Record<ProductCode, ProductDef>> = { automobile: AUTOMOBILE, habitation: HABITATION, rc_pro: RC_PRO };

export function isProductCode(code: string): code is ProductCode {
  return Object.hasOwn(PRODUCTS, code);
}

const RENAMED: Readonly<Record<string, string>> = {
  'Nom du souscripteur': 'Nom et prénom du souscripteur',
  'Code postal du risque': 'Code postal',
  CRM: 'Bonus-malus (CRM)',
  'Raison sociale': 'Dénomination sociale',
  Marque: 'Constructeur',
};

/**
 * The redesign (mode changed): a first step added, labels renamed, and the first step's last field
 * moved to the second step.
 */
export function redesignedSteps(product: ProductDef): StepDef[] {
  const rename = (f: FieldDef): FieldDef => ({ ...f, label: RENAMED[f.label] ?? f.label });
  const steps = product.steps.map((s) => ({ ...s, fields: s.fields.map(rename) }));
  const [first, second, ...rest] = steps;
  if (!first || !second) return steps;
  const moved = first.fields.at(-1);
  const intro: StepDef = {
    title: 'Informations préalables',
    fields: [choiceField('DEJA_CLIENT', 'Le souscripteur est-il déjà adhérent ?', 'radio', { O: 'Oui', N: 'Non' })],
  };
  return [
    intro,
    { ...first, fields: first.fields.slice(0, -1) },
    { ...second, fields: moved ? [moved, ...second.fields] : second.fields },
    ...rest,
  ];
}
