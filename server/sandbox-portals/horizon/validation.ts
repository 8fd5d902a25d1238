import { fullYearsSince } from '../sandbox/pricing.js';
import type { FieldSpec, StepSpec } from './wizard.js';

/**
 * The server's checks of a wizard step's answers (JSON): each field by its description, as the app
 * checks it before sending, then the rules the app does not know (ages, dates, a floor for an
 * appartement), which only the server answers, with a 422 naming the field.
 */

type Answer = string | number | boolean | null;
export type Answers = Record<string, Answer>;
export type StepCheck = { ok: true; values: Answers } | { ok: false; errors: Record<string, string> };

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isRealDate(value: string): boolean {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** The field's value, or the message that refuses it. */
function checkField(field: FieldSpec, raw: unknown): { value: Answer } | { error: string } {
  const missing = raw === undefined || raw === null || raw === '';
  if (field.kind === 'checkbox')
    return typeof raw === 'boolean' || missing ? { value: raw === true } : { error: 'Valeur oui/non attendue.' };
  if (missing) return field.required ? { error: 'Ce champ est obligatoire.' } : { value: null };
  switch (field.kind) {
    case 'text':
      return typeof raw === 'string' && raw.trim().length >= (field.min ?? 1) && raw.trim().length <= (field.max ?? 60)
        ? { value: raw.trim() }
        : { error: `Entre ${field.min ?? 1} et ${field.max ?? 60} caractères.` };
    case 'date':
      return typeof raw === 'string' && isRealDate(raw) ? { value: raw } : { error: 'Date invalide (JJ/MM/AAAA).' };
    case 'postcode':
      return typeof raw === 'string' && /^\d{5}$/.test(raw) ? { value: raw } : { error: 'Code postal à 5 chiffres.' };
    case 'select':
      return typeof raw === 'string' && (field.choices ?? []).some((c) => c.value === raw) ? { value: raw } : { error: 'Choix invalide.' };
    case 'integer':
    case 'decimal': {
      const number = typeof raw === 'number' && Number.isFinite(raw) ? raw : NaN;
      const wrongKind = field.kind === 'integer' ? !Number.isInteger(number) : Number.isNaN(number);
      if (wrongKind || number < (field.min ?? -Infinity) || number > (field.max ?? Infinity))
        return { error: `Nombre${field.kind === 'integer' ? ' entier' : ''} entre ${field.min} et ${field.max} attendu.` };
      return { value: number };
    }
  }
}

/** The rules on the quote's answers so far that only the server knows. */
function businessRules(all: Answers, nowMs: number): Record<string, string> {
  const errors: Record<string, string> = {};
  const birth = all.date_naissance_conducteur;
  if (typeof birth === 'string') {
    const age = fullYearsSince(birth, nowMs);
    if (age < 18 || age > 99) errors.date_naissance_conducteur = 'Le conducteur doit avoir entre 18 et 99 ans.';
    const licence = all.annee_permis;
    const year = new Date(nowMs).getUTCFullYear();
    if (typeof licence === 'number' && (licence < Number(birth.slice(0, 4)) + 17 || licence > year))
      errors.annee_permis = 'Année de permis incompatible avec la date de naissance.';
  }
  const registered = all.date_mec;
  if (typeof registered === 'string' && Date.parse(`${registered}T00:00:00Z`) > nowMs)
    errors.date_mec = 'La date de mise en circulation est dans le futur.';
  if (all.type_bien === 'appartement' && 'etage' in all && all.etage === null) errors.etage = 'Indiquez l’étage de l’appartement.';
  return errors;
}

/**
 * Checks one step's answers, with the earlier steps' (`before`) for the rules across steps. Unknown
 * fields are refused: the app sends exactly the step's fields.
 */
export function checkStep(step: StepSpec, answers: unknown, before: Answers, nowMs: number): StepCheck {
  if (typeof answers !== 'object' || answers === null || Array.isArray(answers)) return { ok: false, errors: { _: 'Réponses attendues.' } };
  const given = answers as Record<string, unknown>;
  const errors: Record<string, string> = {};
  const values: Answers = {};
  for (const name of Object.keys(given)) if (!step.fields.some((f) => f.name === name)) errors[name] = 'Champ inconnu.';
  for (const field of step.fields) {
    const checked = checkField(field, given[field.name]);
    if ('error' in checked) errors[field.name] = checked.error;
    else values[field.name] = checked.value;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const own = new Set(step.fields.map((f) => f.name));
  const ruled = Object.entries(businessRules({ ...before, ...values }, nowMs)).filter(([name]) => own.has(name));
  return ruled.length > 0 ? { ok: false, errors: Object.fromEntries(ruled) } : { ok: true, values };
}
