import type { InputHTMLAttributes, ReactNode } from 'react';

/** The id of a field's hint, for the control's aria-describedby. */
export function hintId(id: string): string {
  return `${id}-hint`;
}

/** The id of a field's problem, for the control's aria-describedby. */
function errorId(id: string): string {
  return `${id}-error`;
}

/** What the control's aria-describedby names: its hint, then its problem (each when there is one). */
function describedBy(id: string, hint: ReactNode, error: ReactNode): string | undefined {
  const ids = [...(hint !== undefined ? [hintId(id)] : []), ...(error !== undefined && error !== null ? [errorId(id)] : [])];
  return ids.length > 0 ? ids.join(' ') : undefined;
}

/** A labelled form field: the label, the control given as children, then the hint and the problem, if any (read with the control). */
export function Field({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  error?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint !== undefined && (
        <span id={hintId(id)} className="muted small">
          {hint}
        </span>
      )}
      {error !== undefined && error !== null && (
        <span id={errorId(id)} className="field-error">
          {error}
        </span>
      )}
    </div>
  );
}

type TextFieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'> & {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  /** What is wrong with the value (issues.ts words a validation problem): shown under the field, and the field marked invalid. */
  error?: string | null;
  value: string;
  /** Left out for a read-only field. */
  onValue?: (value: string) => void;
};

/** A labelled `<input>` (text, email, password, date…); every other input attribute is passed through. */
export function TextField({ id, label, hint, error, onValue, ...input }: TextFieldProps) {
  const invalid = error !== undefined && error !== null;
  return (
    <Field id={id} label={label} hint={hint} error={error}>
      <input
        id={id}
        aria-describedby={describedBy(id, hint, error)}
        aria-invalid={invalid || undefined}
        {...input}
        onChange={onValue && ((event) => onValue(event.target.value))}
      />
    </Field>
  );
}

/** A labelled `<select>` over a fixed set of values. */
export function SelectField<V extends string>(props: {
  id: string;
  label: ReactNode;
  value: V;
  options: readonly { value: V; label: ReactNode }[];
  onValue: (value: V) => void;
}) {
  const { id, label, value, options, onValue } = props;
  return (
    <Field id={id} label={label}>
      <select
        id={id}
        value={value}
        onChange={(event) => {
          const picked = options.find((option) => option.value === event.target.value);
          if (picked) onValue(picked.value);
        }}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </Field>
  );
}
