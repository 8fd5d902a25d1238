import { useEffect, useId, useState, type FormEvent } from 'react';
import { addConsoleOpportunityNote, listConsoleOpportunityNotes, type OpportunityNote } from '../../../../shared/opportunity-notes.js';
import { call } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { formError, type FormError } from './common.js';
import type { PipelineStrings } from './pipeline-strings.js';
import { formatDate } from './strings.js';

/** The notes, newest first, and a box to add one (written in the signed-in person's name). */
export function OpportunityNotes({
  lang,
  p,
  opportunityId,
  t,
}: {
  lang: Lang;
  p: PipelineStrings;
  opportunityId: string;
  t: PageProps['t'];
}) {
  const id = useId();
  const [notes, setNotes] = useState<OpportunityNote[] | null>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let cancelled = false;
    void call(listConsoleOpportunityNotes, { params: { opportunity_id: opportunityId } }).then((result) => {
      if (cancelled) return;
      if (result.ok) setNotes(result.data.data);
      else setError({ message: result.error.message, fields: {} });
    });
    return () => {
      cancelled = true;
    };
  }, [opportunityId]);

  async function add(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const result = await call(addConsoleOpportunityNote, { params: { opportunity_id: opportunityId }, body: { body: text } });
    setBusy(false);
    if (!result.ok) return setError(formError(result, lang));
    setError(null);
    setText('');
    setNotes((current) => [result.data, ...(current ?? [])]);
  }

  return (
    <section className="card records-panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{p.notes}</h2>
      <form className="records-form" onSubmit={(e) => void add(e)} noValidate>
        <div className="field">
          <label htmlFor={`${id}-note`}>{p.newNote}</label>
          <textarea
            id={`${id}-note`}
            rows={3}
            maxLength={5000}
            value={text}
            aria-invalid={error?.fields.body ? 'true' : undefined}
            onChange={(e) => setText(e.target.value)}
          />
          {error?.fields.body && <span className="records-field-error small">{error.fields.body}</span>}
        </div>
        {error && !error.fields.body && <Alert>{error.message}</Alert>}
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
            {busy ? p.adding : p.addNote}
          </button>
        </div>
      </form>
      {notes === null && !error && <Loading t={t} />}
      {notes?.length === 0 && <p className="muted">{p.noNotes}</p>}
      {notes && notes.length > 0 && (
        <ul className="pipeline-notes" aria-label={p.notes}>
          {notes.map((note) => (
            <li key={note.note_id} className="pipeline-note">
              <p className="muted small">{p.noteBy(note.author, formatDate(lang, note.created_at))}</p>
              <p className="pipeline-note-body">{note.body || <span className="muted">{p.noteErased}</span>}</p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
