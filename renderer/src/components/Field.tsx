import type { InputHTMLAttributes, ReactNode } from 'react';

/** The id of a field's hint, for the control's aria-describedby. */
export function hintId(id: string): string {
  return `${id}-hint`;
}

/** A labelled form field: the label, the control given as children, then the hint (read with the control). */
export function Field({ id, label, hint, children }: { id: string; label: ReactNode; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint !== undefined && (
        <span id={hintId(id)} className="muted small">
          {hint}
        </span>
      )}
    </div>
  );
}

type TextFieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'> & {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  value: string;
  /** Left out for a read-only field. */
  onValue?: (value: string) => void;
};

/** A labelled `<input>` (text, email, password, date…); every other input attribute is passed through. */
export function TextField({ id, label, hint, onValue, ...input }: TextFieldProps) {
  return (
    <Field id={id} label={label} hint={hint}>
      <input id={id} aria-describedby={hint !== undefined ? hintId(id) : undefined} {...input} onChange={onValue && ((event) => onValue(event.target.value))} />
    </Field>
  );
}

/** A labelled `<select>` over a fixed set of values. */
export function SelectField<V extends string>(props: { id: string; label: ReactNode; value: V; options: readonly { value: V; label: ReactNode }[]; onValue: (value: V) => void }) {
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
