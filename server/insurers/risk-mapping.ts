import type { ExtraQuestion, RiskLine, RiskMapping, RiskOf } from '@courtier/adapter-kit';
import type { ValidationIssue } from '../../shared/errors.js';
import { checkDicData } from '../automation/catalogue.js';
import type { Insurer } from './registry.js';

/**
 * A common risk made into one insurer's dicData: through the adapter's mapping, with the answers
 * to the insurer's own questions, checked against its product's schema. What cannot be priced says
 * why, with a stable reason: the insurer does not price the line, declines the risk, still has
 * questions, or its product refuses a value (its own limits).
 */
export type MappedRisk =
  | { ok: true; produit: string; dicData: Record<string, unknown> }
  | { ok: false; reason: 'line_not_priced' | 'risk_declined' | 'mapping_failed'; message: string }
  | { ok: false; reason: 'answers_missing' | 'answers_invalid'; message: string; questions: readonly ExtraQuestion[] }
  | { ok: false; reason: 'risk_not_accepted'; message: string; produit: string; issues: ValidationIssue[] };

/** Whether `value` answers the question as its type says. */
function answers(question: ExtraQuestion, value: unknown): boolean {
  switch (question.type) {
    case 'text':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= 200;
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'choice':
      return (question.choices ?? []).some((choice) => choice.value === value);
  }
}

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0] ?? '';

export function mapRisk<L extends RiskLine>(
  insurer: Insurer,
  line: L,
  risk: RiskOf<L>,
  given: Readonly<Record<string, unknown>>,
): MappedRisk {
  const mapping = insurer.risks?.[line] as RiskMapping<L> | undefined;
  if (!mapping) return { ok: false, reason: 'line_not_priced', message: `${insurer.name} does not price the line ${line}.` };
  // An adapter's mapping is its code: whatever it throws is said, never let through.
  try {
    const declined = mapping.declines?.(risk) ?? null;
    if (declined) return { ok: false, reason: 'risk_declined', message: declined };
    const questions = mapping.questions(risk);
    const missing = questions.filter((q) => given[q.code] === undefined);
    if (missing.length > 0)
      return {
        ok: false,
        reason: 'answers_missing',
        message: `${insurer.name} asks: ${missing.map((q) => q.label.fr).join(', ')}.`,
        questions: missing,
      };
    const wrong = questions.filter((q) => !answers(q, given[q.code]));
    if (wrong.length > 0)
      return {
        ok: false,
        reason: 'answers_invalid',
        message: `Answers ${insurer.name} cannot take: ${wrong.map((q) => q.code).join(', ')}.`,
        questions: wrong,
      };
    const asked = Object.fromEntries(questions.map((q) => [q.code, given[q.code]]));
    const product = insurer.products.find((p) => p.code === mapping.produit);
    if (!product)
      return {
        ok: false,
        reason: 'mapping_failed',
        message: `${insurer.name} maps ${line} to ${mapping.produit}, which it does not have.`,
      };
    const checked = checkDicData(product, mapping.dicData(risk, asked));
    if (!checked.ok)
      return {
        ok: false,
        reason: 'risk_not_accepted',
        message: `${insurer.name} does not accept this risk for ${product.label}: ${checked.issues.map((i) => `${i.path.replace(/^body\.dicData\./, '')} ${i.message}`).join('; ')}`,
        produit: product.code,
        issues: checked.issues,
      };
    return { ok: true, produit: product.code, dicData: checked.data };
  } catch (err) {
    return { ok: false, reason: 'mapping_failed', message: `${insurer.name}'s mapping of the line ${line} failed: ${firstLine(err)}` };
  }
}

/** Answers that fit each question (its first choice, 1, false, "x"): what an offline replay of a mapping types. */
export function placeholderAnswers(questions: readonly ExtraQuestion[]): Record<string, unknown> {
  const placeholder = (q: ExtraQuestion) =>
    q.type === 'choice' ? q.choices?.[0]?.value : q.type === 'boolean' ? false : q.type === 'text' ? 'x' : 1;
  return Object.fromEntries(questions.map((q) => [q.code, placeholder(q)]));
}
