/** One text field of an opportunity's form: its label, its problem in words, an optional hint. */
export interface OpportunityField<Name extends string> {
  name: Name;
  label: string;
  problem?: string | undefined;
  type?: string;
  hint?: string;
  required?: boolean;
}

/** The text fields of an opportunity's form (new or edited), each with its label, hint and problem beside it. */
export function OpportunityFields<Name extends string>({
  id,
  fields,
  values,
  optional,
  onChange,
}: {
  id: string;
  fields: readonly OpportunityField<Name>[];
  values: Record<Name, string>;
  optional: string;
  onChange: (name: Name, value: string) => void;
}) {
  return (
    <div className="records-fields">
      {fields.map((field) => (
        <div className="field" key={field.name}>
          <label htmlFor={`${id}-${field.name}`}>
            {field.label}
            {!field.required && <span className="muted small">{` (${optional})`}</span>}
          </label>
          <input
            id={`${id}-${field.name}`}
            type={field.type ?? 'text'}
            inputMode={field.name === 'value' ? 'decimal' : undefined}
            value={values[field.name]}
            required={field.required}
            aria-invalid={field.problem ? 'true' : undefined}
            aria-describedby={field.hint ? `${id}-${field.name}-hint` : undefined}
            onChange={(e) => onChange(field.name, e.target.value)}
          />
          {field.hint && (
            <span id={`${id}-${field.name}-hint`} className="muted small">
              {field.hint}
            </span>
          )}
          {field.problem && <span className="records-field-error small">{field.problem}</span>}
        </div>
      ))}
    </div>
  );
}

/** An amount typed by a person ("1 200,50"), or null when it is not one. */
export function typedEuros(text: string): number | null {
  const value = Number(text.replace(',', '.').replace(/\s/g, ''));
  return text.trim() !== '' && Number.isFinite(value) ? value : null;
}
