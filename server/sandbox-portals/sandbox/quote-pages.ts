import { definitionList, escapeHtml, form, layout, radioGroup, selectField, textField } from './html.js';
import { DWELLING_LABELS, FORMULA_LABELS, formatEuros, OCCUPANT_LABELS, USAGE_LABELS } from './pricing.js';
import { DWELLING_TYPES, FORMULAS, OCCUPANT_STATUSES, USAGES } from './validation.js';

/** The sandbox portal's quote wizards, auto and home, step by step, and the price they end on; `base` is the plugin's prefix. */

const RESULT_HEADING = 'Votre tarif';
const AUTO_HEADINGS = { driver: 'Devis auto – Conducteur', vehicle: 'Devis auto – Véhicule', formula: 'Devis auto – Formule' } as const;
const HOME_QUOTE_HEADINGS = { dwelling: 'Devis habitation – Logement', occupation: 'Devis habitation – Occupation' } as const;

type Raw = Record<string, string>;
type Invalid = ReadonlySet<string>;
const none: Invalid = new Set();

function step(n: number, of: number): string {
  return `<p>Étape ${n} sur ${of}</p>`;
}

/**
 * The driver's step. The redesign (mode 'changed') renames the page and the birth date's label,
 * moves the postcode first, and comes after a new first step (needsStepPage).
 */
export function driverStepPage(
  base: string,
  raw: Raw,
  alert: readonly string[] | null = null,
  invalid: Invalid = none,
  redesigned = false,
): string {
  const postcode = textField({
    id: 'postcode',
    label: 'Code postal',
    value: raw.postcode,
    inputmode: 'numeric',
    autocomplete: 'postal-code',
    invalid: invalid.has('postcode'),
  });
  return layout({
    base,
    heading: redesigned ? 'Devis auto – Conducteur principal' : AUTO_HEADINGS.driver,
    alert,
    loggedIn: true,
    body:
      (redesigned ? step(2, 4) : step(1, 3)) +
      form(
        `${base}/devis/auto/conducteur`,
        (redesigned ? postcode : '') +
          textField({ id: 'insured_name', label: 'Nom de l’assuré', value: raw.insured_name, invalid: invalid.has('insured_name') }) +
          textField({
            id: 'birth_date',
            label: redesigned ? 'Date de naissance' : 'Date de naissance du conducteur',
            type: 'date',
            value: raw.birth_date,
            invalid: invalid.has('birth_date'),
          }) +
          textField({
            id: 'licence_date',
            label: 'Date d’obtention du permis',
            type: 'date',
            value: raw.licence_date,
            invalid: invalid.has('licence_date'),
          }) +
          textField({
            id: 'bonus_malus',
            label: 'Coefficient bonus-malus',
            value: raw.bonus_malus,
            inputmode: 'decimal',
            hint: 'De 0,50 à 3,50 (1,00 pour un nouveau conducteur).',
            invalid: invalid.has('bonus_malus'),
          }) +
          (redesigned ? '' : postcode),
        'Continuer',
      ),
  });
}

/** The step the redesign adds before the driver's: what the client needs, one button. */
export function needsStepPage(base: string): string {
  return layout({
    base,
    heading: 'Devis auto – Vos besoins',
    alert: null,
    loggedIn: true,
    body:
      step(1, 4) +
      '<p>Votre client souhaite assurer un véhicule terrestre à moteur. Les étapes suivantes décrivent le conducteur et le véhicule.</p>' +
      form(`${base}/devis/auto/besoins`, '', 'Commencer le devis'),
  });
}

export function vehicleStepPage(base: string, raw: Raw, alert: readonly string[] | null = null, invalid: Invalid = none): string {
  return layout({
    base,
    heading: AUTO_HEADINGS.vehicle,
    alert,
    loggedIn: true,
    body:
      step(2, 3) +
      '<p>Indiquez la marque et le modèle, ou l’immatriculation.</p>' +
      form(
        `${base}/devis/auto/vehicule`,
        textField({ id: 'make', label: 'Marque', value: raw.make, invalid: invalid.has('make') }) +
          textField({ id: 'model', label: 'Modèle', value: raw.model, invalid: invalid.has('model') }) +
          textField({
            id: 'registration',
            label: 'Immatriculation',
            value: raw.registration,
            hint: 'Au format AB-123-CD.',
            invalid: invalid.has('registration'),
          }) +
          textField({
            id: 'first_registration_date',
            label: 'Date de première mise en circulation',
            type: 'date',
            value: raw.first_registration_date,
            invalid: invalid.has('first_registration_date'),
          }) +
          selectField({
            id: 'usage',
            label: 'Usage',
            value: raw.usage,
            options: USAGES.map((u) => ({ value: u, label: USAGE_LABELS[u].toLowerCase() })),
            invalid: invalid.has('usage'),
          }),
        'Continuer',
      ),
  });
}

export function formulaStepPage(base: string, raw: Raw, alert: readonly string[] | null = null, invalid: Invalid = none): string {
  return layout({
    base,
    heading: AUTO_HEADINGS.formula,
    alert,
    loggedIn: true,
    body:
      step(3, 3) +
      form(
        `${base}/devis/auto/formule`,
        radioGroup({
          legend: 'Formule',
          name: 'formula',
          value: raw.formula,
          options: FORMULAS.map((f) => ({ value: f, label: FORMULA_LABELS[f] })),
          invalid: invalid.has('formula'),
        }),
        'Calculer le tarif',
      ),
  });
}

export function dwellingStepPage(
  base: string,
  raw: Raw,
  alert: readonly string[] | null = null,
  invalid: Invalid = none,
  redesigned = false,
): string {
  return layout({
    base,
    heading: redesigned ? 'Devis habitation – Votre logement' : HOME_QUOTE_HEADINGS.dwelling,
    alert,
    loggedIn: true,
    body:
      step(1, 2) +
      form(
        `${base}/devis/habitation/logement`,
        textField({ id: 'insured_name', label: 'Nom de l’assuré', value: raw.insured_name, invalid: invalid.has('insured_name') }) +
          selectField({
            id: 'dwelling_type',
            label: 'Type de logement',
            value: raw.dwelling_type,
            options: DWELLING_TYPES.map((d) => ({ value: d, label: DWELLING_LABELS[d] })),
            invalid: invalid.has('dwelling_type'),
          }) +
          textField({ id: 'surface', label: 'Surface (m²)', value: raw.surface, inputmode: 'numeric', invalid: invalid.has('surface') }) +
          textField({ id: 'rooms', label: 'Nombre de pièces', value: raw.rooms, inputmode: 'numeric', invalid: invalid.has('rooms') }) +
          textField({
            id: 'postcode',
            label: 'Code postal',
            value: raw.postcode,
            inputmode: 'numeric',
            autocomplete: 'postal-code',
            invalid: invalid.has('postcode'),
          }),
        'Continuer',
      ),
  });
}

export function occupationStepPage(base: string, raw: Raw, alert: readonly string[] | null = null, invalid: Invalid = none): string {
  return layout({
    base,
    heading: HOME_QUOTE_HEADINGS.occupation,
    alert,
    loggedIn: true,
    body:
      step(2, 2) +
      form(
        `${base}/devis/habitation/occupation`,
        selectField({
          id: 'occupant_status',
          label: 'Statut de l’occupant',
          value: raw.occupant_status,
          options: OCCUPANT_STATUSES.map((s) => ({ value: s, label: OCCUPANT_LABELS[s] })),
          invalid: invalid.has('occupant_status'),
        }) +
          textField({
            id: 'contents_capital',
            label: 'Capital mobilier (€)',
            value: raw.contents_capital,
            inputmode: 'numeric',
            invalid: invalid.has('contents_capital'),
          }),
        'Calculer le tarif',
      ),
  });
}

export interface QuoteView {
  id: string;
  reference: string;
  productLabel: string;
  insuredName: string;
  premiumEur: number;
  formulaLabel: string;
  pieces?: string;
}

export function resultPage(base: string, quote: QuoteView): string {
  return layout({
    base,
    heading: RESULT_HEADING,
    loggedIn: true,
    body:
      definitionList([
        { id: 'res-product', term: 'Produit', value: quote.productLabel },
        { id: 'res-insured', term: 'Assuré', value: quote.insuredName },
        { id: 'res-formula', term: 'Formule', value: quote.formulaLabel },
        { id: 'res-premium', term: 'Prime annuelle', value: formatEuros(quote.premiumEur) },
        { id: 'res-reference', term: 'Référence', value: quote.reference },
        ...(quote.pieces ? [{ id: 'res-pieces', term: 'Pièces à fournir', value: quote.pieces }] : []),
      ]) +
      `<p><a href="${base}/devis/${escapeHtml(quote.id)}/pdf">Télécharger le devis (PDF)</a></p>` +
      `<p><a href="${base}/accueil">Retour à l’accueil</a></p>`,
  });
}
