import { useId, useState, type FormEvent } from 'react';
import { Alert } from '../../Layout.js';
import { EventPicker } from './EventPicker.js';
import type { WebhookStrings } from './strings.js';

export interface WebhookFormValue {
  url: string;
  description: string;
  events: string[];
}

interface WebhookFormProps {
  s: WebhookStrings;
  initial: WebhookFormValue;
  submitLabel: string;
  busyLabel: string;
  /** Resolves with an error message to show, or null when done. */
  onSubmit: (value: WebhookFormValue) => Promise<string | null>;
  onCancel?: () => void;
  /** The form is reset to `initial` after a successful submit (the create form). */
  resetOnSuccess?: boolean;
}

/** URL, description and events: the create form and the edit form. */
export function WebhookForm({ s, initial, submitLabel, busyLabel, onSubmit, onCancel, resetOnSuccess = false }: WebhookFormProps) {
  const id = useId();
  const [value, setValue] = useState<WebhookFormValue>(initial);
  const [error, setError] = useState<{ message: string; field: 'url' | 'events' | null } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const url = value.url.trim();
    if (url === '') return setError({ message: s.urlRequired, field: 'url' });
    if (!/^https:\/\//i.test(url)) return setError({ message: s.urlNotHttps, field: 'url' });
    if (value.events.length === 0) return setError({ message: s.eventsRequired, field: 'events' });
    setBusy(true);
    setError(null);
    const message = await onSubmit({ ...value, url, description: value.description.trim() });
    setBusy(false);
    if (message !== null) return setError({ message, field: null });
    if (resetOnSuccess) setValue(initial);
  }

  return (
    <form className="form wh-form" onSubmit={(event) => void submit(event)} noValidate>
      <div className="field">
        <label htmlFor={`${id}-url`}>{s.url}</label>
        <input
          id={`${id}-url`}
          type="url"
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
          placeholder="https://"
          value={value.url}
          onChange={(e) => setValue({ ...value, url: e.target.value })}
          aria-describedby={`${id}-url-hint`}
          aria-invalid={error?.field === 'url' || undefined}
        />
        <span id={`${id}-url-hint`} className="muted small">
          {s.urlHint}
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${id}-description`}>{s.description}</label>
        <input
          id={`${id}-description`}
          type="text"
          maxLength={500}
          value={value.description}
          onChange={(e) => setValue({ ...value, description: e.target.value })}
          aria-describedby={`${id}-description-hint`}
        />
        <span id={`${id}-description-hint`} className="muted small">
          {s.descriptionHint}
        </span>
      </div>
      <EventPicker s={s} idPrefix={`${id}-events`} value={value.events} onChange={(events) => setValue({ ...value, events })} invalid={error?.field === 'events'} />
      {error !== null && <Alert>{error.message}</Alert>}
      <div className="actions">
        {onCancel && (
          <button type="button" className="button" onClick={onCancel} disabled={busy}>
            {s.cancel}
          </button>
        )}
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {busy ? busyLabel : submitLabel}
        </button>
      </div>
    </form>
  );
}
