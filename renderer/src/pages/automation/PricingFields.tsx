import type { ConsoleDryRun } from '../../../../shared/console-automation.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import type { Lang } from '../../i18n.js';
import { datePickerPattern, describeIssue } from '../../issues.js';
import type { FieldSpec } from './schemaForm.js';
import type { AutomationStrings } from './strings.js';

/** The pricing form's parts: one field of a product's schema with its problems in words, and the check's result. */

/** The problems of one field, in words for the person filling the form. */
export function wordIssues(field: FieldSpec | undefined, issues: readonly ValidationIssue[], lang: Lang): string[] {
  return issues.map((issue) => describeIssue(issue, lang, { valueLabels: field?.optionLabels, example: field?.example }));
}

interface FieldProps {
  field: FieldSpec;
  value: string | boolean;
  /** The field's problems, already in words. */
  issues: string[];
  s: AutomationStrings;
  lang: Lang;
  onChange: (key: string, value: string | boolean) => void;
}

export function Field({ field, value, issues, s, lang, onChange }: FieldProps) {
  const id = `dic-${field.key}`;
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const invalid = issues.length > 0;
  // A date picker shows the browser's order of day, month and year: the hint says that order, not the wire format.
  const hint = field.kind === 'date' ? s.dateHint(datePickerPattern(lang, navigator.language)) : null;
  const describedBy = [hint !== null ? hintId : null, invalid ? errorId : null].filter((x) => x !== null).join(' ');
  const common = {
    id,
    name: field.key,
    'aria-required': field.required || undefined,
    'aria-invalid': invalid || undefined,
    'aria-describedby': describedBy === '' ? undefined : describedBy,
  };
  // The star is outside the label, so that the field's name is the schema's label alone; aria-required says it.
  const label = (
    <span className="automation-label">
      <label htmlFor={id}>{field.label}</label>
      {field.required && (
        <span className="automation-required" aria-hidden="true">
          *
        </span>
      )}
    </span>
  );
  let input;
  switch (field.kind) {
    case 'boolean':
      return (
        <div className="field automation-checkbox">
          <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(field.key, e.target.checked)} />
          {label}
          {invalid && <FieldError id={errorId} issues={issues} />}
        </div>
      );
    case 'enum':
      input = (
        <select {...common} value={String(value)} onChange={(e) => onChange(field.key, e.target.value)}>
          <option value="">{s.choose}</option>
          {field.options.map((o) => (
            <option key={o} value={o}>
              {field.optionLabels[o] ?? o}
            </option>
          ))}
        </select>
      );
      break;
    case 'number':
    case 'integer':
      input = (
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.min}
          max={field.max}
          value={String(value)}
          onChange={(e) => onChange(field.key, e.target.value)}
        />
      );
      break;
    case 'date':
      input = <input {...common} type="date" value={String(value)} onChange={(e) => onChange(field.key, e.target.value)} />;
      break;
    case 'datetime':
      input = <input {...common} type="datetime-local" value={String(value)} onChange={(e) => onChange(field.key, e.target.value)} />;
      break;
    default:
      input = (
        <input
          {...common}
          type="text"
          maxLength={field.maxLength}
          value={String(value)}
          onChange={(e) => onChange(field.key, e.target.value)}
        />
      );
  }
  return (
    <div className="field">
      {label}
      {input}
      {hint !== null && (
        <span id={hintId} className="muted small">
          {hint}
        </span>
      )}
      {invalid && <FieldError id={errorId} issues={issues} />}
    </div>
  );
}

function FieldError({ id, issues }: { id: string; issues: string[] }) {
  return (
    <span id={id} className="automation-field-error">
      {issues.join(' · ')}
    </span>
  );
}

export function DryRunResult({
  result,
  fields,
  s,
  lang,
}: {
  result: ConsoleDryRun | null;
  fields: readonly FieldSpec[];
  s: AutomationStrings;
  lang: Lang;
}) {
  if (!result) return <div role="status" aria-live="polite" />;
  const labelOf = (key: string) => fields.find((f) => f.key === key)?.label ?? key;
  const v = result.validation;
  const ready = v.schema_ok && v.credentials_configured && v.quota.remaining > 0 && result.balance >= v.would_cost_credits;
  return (
    <div role="status" aria-live="polite" className="automation-dryrun" aria-label={s.dryRunTitle}>
      <h3>{s.dryRunTitle}</h3>
      <dl className="automation-facts">
        <dt>{s.cost}</dt>
        <dd>{s.credits(v.would_cost_credits)}</dd>
        <dt>{s.balance}</dt>
        <dd>{s.credits(result.balance)}</dd>
        <dt>Quota</dt>
        <dd>{s.quotaLeft(v.quota.remaining, v.quota.limit)}</dd>
      </dl>
      <p className={v.credentials_configured ? 'automation-ok' : 'alert'}>{s.credentialsReady(v.credentials_configured)}</p>
      {v.missing_required_fields.length > 0 && (
        <p className="alert">
          {s.missingFields} {v.missing_required_fields.map(labelOf).join(', ')}
        </p>
      )}
      {result.invalid_fields.length > 0 && (
        <p className="alert">
          {s.invalidFields}{' '}
          {result.invalid_fields
            .map((i) => {
              const field = fields.find((f) => f.key === i.field);
              return `${labelOf(i.field)} (${wordIssues(field, [i], lang).join(' ').replace(/\.$/, '')})`;
            })
            .join(', ')}
        </p>
      )}
      {ready && <p className="automation-ok">{s.readyToPrice}</p>}
    </div>
  );
}
