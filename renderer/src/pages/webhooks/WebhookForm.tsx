import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { ValidationIssue } from '../../../../shared/errors.js';
import type { ApiError } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import { Alert } from '../../Layout.js';
import { EventPicker } from './EventPicker.js';
import { errorText } from './format.js';
import type { WebhookStrings } from './strings.js';

export interface WebhookFormValue {
  url: string;
  description: string;
  events: string[];
}

type FieldName = 'url' | 'description' | 'events';

/** What is wrong, each next to its field; `form` for what belongs to no field. */
type Problems = Partial<Record<FieldName | 'form', string>>;

interface WebhookFormProps {
  s: WebhookStrings;
  lang: Lang;
  initial: WebhookFormValue;
  submitLabel: string;
  busyLabel: string;
  /** Resolves with the failure to show, or null when done. */
  onSubmit: (value: WebhookFormValue) => Promise<ApiError | null>;
  onCancel?: () => void;
  /** The form is reset to `initial` after a successful submit (the create form). */
  resetOnSuccess?: boolean;
  /** Opened on demand: the cursor goes to its first field. */
  focusFirst?: boolean;
}

const FIELDS: readonly FieldName[] = ['url', 'description', 'events'];

function isIssue(value: unknown): value is ValidationIssue {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ValidationIssue).path === 'string' &&
    typeof (value as ValidationIssue).message === 'string'
  );
}

/** The service's refusal placed on the field it concerns: the URL, the events, or each field a validation_error names. */
function problemsOf(s: WebhookStrings, lang: Lang, error: ApiError): Problems {
  if (error.error === 'invalid_webhook_url') return { url: errorText(s, error) };
  if (error.error === 'unknown_event_type') return { events: errorText(s, error) };
  if (error.error !== 'validation_error' || !Array.isArray(error.details)) return { form: errorText(s, error) };
  const problems: Problems = {};
  for (const issue of error.details.filter(isIssue)) {
    const field = FIELDS.find((f) => issue.path === `body.${f}` || issue.path.startsWith(`body.${f}.`)) ?? 'form';
    const sentence = field === 'form' ? errorText(s, error) : describeIssue(issue, lang);
    problems[field] ??= sentence;
  }
  return problems;
}

/** URL, description and events: the create form and the edit form. */
export function WebhookForm({
  s,
  lang,
  initial,
  submitLabel,
  busyLabel,
  onSubmit,
  onCancel,
  resetOnSuccess = false,
  focusFirst = false,
}: WebhookFormProps) {
  const id = useId();
  const [value, setValue] = useState<WebhookFormValue>(initial);
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (focusFirst) form.current?.querySelector<HTMLElement>('[data-field="url"]')?.focus();
  }, [focusFirst]);

  /** Shows the problems and takes the person to the first field concerned. */
  function show(next: Problems) {
    setProblems(next);
    const first = FIELDS.find((f) => next[f] !== undefined);
    if (first) form.current?.querySelector<HTMLElement>(`[data-field="${first}"]`)?.focus();
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const url = value.url.trim();
    if (url === '') return show({ url: s.urlRequired });
    if (!/^https:\/\//i.test(url)) return show({ url: s.urlNotHttps });
    if (value.events.length === 0) return show({ events: s.eventsRequired });
    setBusy(true);
    setProblems({});
    const failure = await onSubmit({ ...value, url, description: value.description.trim() });
    setBusy(false);
    if (failure !== null) return show(problemsOf(s, lang, failure));
    if (resetOnSuccess) setValue(initial);
  }

  /** The hint and, when there is one, the field's problem: what a screen reader reads with the control. */
  const describedBy = (field: FieldName) =>
    [`${id}-${field}-hint`, ...(problems[field] !== undefined ? [`${id}-${field}-error`] : [])].join(' ');
  const problemOf = (field: FieldName) =>
    problems[field] !== undefined && (
      <span id={`${id}-${field}-error`} className="wh-field-error">
        {problems[field]}
      </span>
    );

  return (
    <form ref={form} className="form wh-form" onSubmit={(event) => void submit(event)} noValidate>
      <div className="field">
        <label htmlFor={`${id}-url`}>{s.url}</label>
        <input
          id={`${id}-url`}
          data-field="url"
          type="url"
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
          placeholder="https://"
          value={value.url}
          onChange={(e) => setValue({ ...value, url: e.target.value })}
          aria-describedby={describedBy('url')}
          aria-invalid={problems.url !== undefined || undefined}
        />
        <span id={`${id}-url-hint`} className="muted small">
          {s.urlHint}
        </span>
        {problemOf('url')}
      </div>
      <div className="field">
        <label htmlFor={`${id}-description`}>{s.description}</label>
        <input
          id={`${id}-description`}
          data-field="description"
          type="text"
          maxLength={500}
          value={value.description}
          onChange={(e) => setValue({ ...value, description: e.target.value })}
          aria-describedby={describedBy('description')}
          aria-invalid={problems.description !== undefined || undefined}
        />
        <span id={`${id}-description-hint`} className="muted small">
          {s.descriptionHint}
        </span>
        {problemOf('description')}
      </div>
      <EventPicker
        s={s}
        idPrefix={`${id}-events`}
        value={value.events}
        onChange={(events) => setValue({ ...value, events })}
        problem={problems.events !== undefined ? { id: `${id}-events-error`, text: problems.events } : null}
      />
      {problems.form !== undefined && <Alert>{problems.form}</Alert>}
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
