import type { ComparisonDryRun } from '../../../../shared/comparaisons.js';
import type { Lang } from '../../i18n.js';
import type { FieldSpec, FormValues } from '../automation/schemaForm.js';

/** An insurer's own question, as the dry run (or an answers_missing refusal) names it. */
export type Question = ComparisonDryRun['compagnies'][number]['missing_answers'][number];

/** The form field of a question; its key is `<compagnie>.<code>`. */
export function questionField(compagnie: string, question: Question, lang: Lang): FieldSpec {
  const kind: FieldSpec['kind'] = question.type === 'choice' ? 'enum' : question.type;
  return {
    key: `${compagnie}.${question.code}`,
    label: question.label[lang],
    required: true,
    kind,
    options: question.choices?.map((c) => c.value) ?? [],
    optionLabels: Object.fromEntries((question.choices ?? []).map((c) => [c.value, c.label[lang]])),
    initial: kind === 'boolean' ? false : '',
  };
}

/** The answers to send, by insurer then question: numbers as numbers, an empty field left out. */
export function toAnswers(
  questions: Readonly<Record<string, readonly Question[]>>,
  values: FormValues,
): Record<string, Record<string, string | number | boolean>> {
  const out: Record<string, Record<string, string | number | boolean>> = {};
  for (const [compagnie, list] of Object.entries(questions)) {
    for (const question of list) {
      const value = values[`${compagnie}.${question.code}`];
      let answer: string | number | boolean | undefined;
      if (question.type === 'boolean') answer = value === true;
      else if (typeof value === 'string' && value.trim() !== '') {
        const text = value.trim();
        const n = Number(text.replace(',', '.'));
        answer = (question.type === 'integer' || question.type === 'number') && Number.isFinite(n) ? n : text;
      }
      if (answer !== undefined) (out[compagnie] ??= {})[question.code] = answer;
    }
  }
  return out;
}

/** The questions an answers_missing refusal lists (its details.questions), by insurer. */
export function questionsOfRefusal(details: unknown): Record<string, Question[]> {
  if (typeof details !== 'object' || details === null) return {};
  const questions = (details as { questions?: unknown }).questions;
  if (typeof questions !== 'object' || questions === null) return {};
  return Object.fromEntries(Object.entries(questions).filter((entry): entry is [string, Question[]] => Array.isArray(entry[1])));
}
