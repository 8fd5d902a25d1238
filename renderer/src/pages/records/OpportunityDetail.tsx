import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { getConsoleOpportunity, updateConsoleOpportunity, type ConsoleOpportunity } from '../../../../shared/console-records.js';
import { FINAL_STAGES, OPPORTUNITY_STAGES, type OpportunityStage } from '../../../../shared/crm.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import type { Lang } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { ClientPicker, type ChosenClient } from '../automation/ClientPicker.js';
import { AUTOMATION_STRINGS } from '../automation/strings.js';
import { clientPath, formError, Notice, type FormError } from './common.js';
import { OpportunityFields, typedEuros, type OpportunityField } from './OpportunityFields.js';
import { OpportunityNotes } from './OpportunityNotes.js';
import { PIPELINE_STRINGS, type PipelineStrings } from './pipeline-strings.js';
import { whoOf } from './PipelineBoard.js';
import { formatDate, formatEuros, RECORDS_STRINGS, type RecordsStrings } from './strings.js';

type Loaded = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; opportunity: ConsoleOpportunity };

/** /console/opportunities/<id>: an opportunity read and edited, its stage, its client (one of the cabinet's) and its notes. */
export function OpportunityDetail({ lang, t, opportunityId }: PageProps & { opportunityId: string }) {
  const s = RECORDS_STRINGS[lang];
  const p = PIPELINE_STRINGS[lang];
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    void call(getConsoleOpportunity, { params: { opportunity_id: opportunityId } }).then((result) => {
      if (cancelled) return;
      if (result.ok) return setLoaded({ kind: 'ready', opportunity: result.data });
      setLoaded({ kind: 'error', message: result.error.error === 'not_found' ? p.notFound : result.error.message });
    });
    return () => {
      cancelled = true;
    };
  }, [opportunityId, p.notFound]);

  const changeStage = useConfirmation(
    async ({ to, reopen }: { to: OpportunityStage; reopen: boolean }) =>
      call(updateConsoleOpportunity, { params: { opportunity_id: opportunityId }, body: reopen ? { stage: to, reopen } : { stage: to } }),
    (_move, result) => {
      if (!result.ok) return setError(result.error.message);
      setError(null);
      setLoaded({ kind: 'ready', opportunity: result.data });
      setNotice(s.moved(result.data.title, s.stages[result.data.stage]));
    },
  );

  if (loaded.kind === 'loading') return <Loading t={t} />;
  if (loaded.kind === 'error')
    return (
      <section className="records">
        <p>
          <a className="back-link" href="/console/opportunities">{`← ${p.backToBoard}`}</a>
        </p>
        <Alert>{loaded.message}</Alert>
      </section>
    );
  const opportunity = loaded.opportunity;

  function chooseStage(to: OpportunityStage) {
    if (to === opportunity.stage) return;
    const reopen = FINAL_STAGES.includes(opportunity.stage);
    if (reopen || FINAL_STAGES.includes(to)) return changeStage.ask({ to, reopen });
    void changeStage.confirm({ to, reopen: false });
  }

  return (
    <section className="records">
      <p>
        <a className="back-link" href="/console/opportunities">{`← ${p.backToBoard}`}</a>
      </p>
      <div className="records-heading">
        <h1>{opportunity.title}</h1>
        {!editing && (
          <button type="button" className="button" onClick={() => (setEditing(true), setNotice(null))}>
            {p.edit}
          </button>
        )}
      </div>
      {notice && <Notice>{notice}</Notice>}
      {error && <Alert>{error}</Alert>}
      <StageField s={s} stage={opportunity.stage} onChoose={chooseStage} />
      {editing ? (
        <OpportunityEditForm
          lang={lang}
          s={s}
          p={p}
          opportunity={opportunity}
          onCancel={() => setEditing(false)}
          onSaved={(saved) => {
            setLoaded({ kind: 'ready', opportunity: saved });
            setEditing(false);
            setNotice(p.saved);
          }}
        />
      ) : (
        <OpportunityFacts lang={lang} s={s} p={p} opportunity={opportunity} />
      )}
      <OpportunityNotes lang={lang} p={p} opportunityId={opportunity.id} t={t} />
      <ConfirmStep
        confirmation={changeStage}
        title={(m) => (m.reopen ? s.reopenTitle(opportunity.title) : p.finalTitle(opportunity.title, s.stages[m.to]))}
        text={(m) => (m.reopen ? s.reopenText(s.stages[opportunity.stage], s.stages[m.to]) : p.finalText(s.stages[m.to]))}
        confirmLabel={changeStage.pending?.reopen ? s.reopenConfirm : p.finalConfirm(s.stages[changeStage.pending?.to ?? 'won'])}
        cancelLabel={s.cancel}
        tone="primary"
      />
    </section>
  );
}

function StageField({ s, stage, onChoose }: { s: RecordsStrings; stage: OpportunityStage; onChoose: (to: OpportunityStage) => void }) {
  const id = useId();
  return (
    <div className="field records-stage-field pipeline-detail-stage">
      <label htmlFor={id}>{s.stage}</label>
      <select id={id} value={stage} onChange={(e) => onChoose(e.target.value as OpportunityStage)}>
        {OPPORTUNITY_STAGES.map((option) => (
          <option key={option} value={option}>
            {s.stages[option]}
          </option>
        ))}
      </select>
    </div>
  );
}

function OpportunityFacts({
  lang,
  s,
  p,
  opportunity,
}: {
  lang: Lang;
  s: RecordsStrings;
  p: PipelineStrings;
  opportunity: ConsoleOpportunity;
}) {
  const contact = opportunity.contact;
  const facts: [string, ReactNode][] = [
    [
      p.client,
      opportunity.client_id === null ? (
        p.noClient
      ) : opportunity.client_name === null ? (
        p.clientErased
      ) : (
        <a href={clientPath(opportunity.client_id)}>{p.openClient(opportunity.client_name)}</a>
      ),
    ],
    [s.product, opportunity.product],
    [s.expectedValue, formatEuros(lang, opportunity.expected_value_eur)],
    [p.contact, [whoOf({ ...opportunity, client_name: null }), contact.email, contact.phone].filter((part) => part).join(' · ') || p.none],
    [p.source, opportunity.source],
    [p.tags, opportunity.tags.join(', ') || p.none],
  ];
  return (
    <div className="card records-panel">
      <h2>{p.details}</h2>
      <dl className="pipeline-facts">
        {facts.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="muted small">{s.created(formatDate(lang, opportunity.created_at))}</p>
    </div>
  );
}

type EditValues = Record<'title' | 'product' | 'value' | 'source' | 'tags' | 'last_name' | 'first_name' | 'email' | 'phone', string>;

/** The opportunity's fields as a form; only what changed is sent. */
function OpportunityEditForm(props: {
  lang: Lang;
  s: RecordsStrings;
  p: PipelineStrings;
  opportunity: ConsoleOpportunity;
  onCancel: () => void;
  onSaved: (opportunity: ConsoleOpportunity) => void;
}) {
  const { lang, s, p, opportunity } = props;
  const id = useId();
  const initial: EditValues = {
    title: opportunity.title,
    product: opportunity.product,
    value: String(opportunity.expected_value_eur),
    source: opportunity.source,
    tags: opportunity.tags.join(', '),
    last_name: opportunity.contact.last_name,
    first_name: opportunity.contact.first_name ?? '',
    email: opportunity.contact.email ?? '',
    phone: opportunity.contact.phone ?? '',
  };
  const [values, setValues] = useState(initial);
  const [client, setClient] = useState<ChosenClient | null>(
    opportunity.client_id && opportunity.client_name ? { client_id: opportunity.client_id, name: opportunity.client_name } : null,
  );
  // An erased client has no name to show: the opportunity keeps it unless the broker picks another.
  const [clientTouched, setClientTouched] = useState(false);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const changed = (field: keyof EditValues) => values[field].trim() !== initial[field].trim();
    const contact = Object.fromEntries(
      (['last_name', 'first_name', 'email', 'phone'] as const)
        .filter((f) => changed(f) && values[f].trim() !== '')
        .map((f) => [f, values[f].trim()]),
    );
    const value = typedEuros(values.value);
    if (changed('value') && value === null) return setError({ message: p.valueInvalid, fields: { expected_value_eur: p.valueInvalid } });
    const body = {
      ...(changed('title') ? { title: values.title } : {}),
      ...(changed('product') ? { product: values.product } : {}),
      ...(changed('source') ? { source: values.source } : {}),
      ...(changed('value') && value !== null ? { expected_value_eur: value } : {}),
      ...(changed('tags')
        ? {
            tags: values.tags
              .split(',')
              .map((tag) => tag.trim())
              .filter((tag) => tag),
          }
        : {}),
      ...(Object.keys(contact).length > 0 ? { contact } : {}),
      ...(clientTouched && (client?.client_id ?? null) !== opportunity.client_id ? { client_id: client?.client_id ?? null } : {}),
    };
    if (Object.keys(body).length === 0) return props.onCancel();
    setBusy(true);
    const result = await call(updateConsoleOpportunity, { params: { opportunity_id: opportunity.id }, body });
    setBusy(false);
    if (!result.ok) return setError(formError(result, lang));
    props.onSaved(result.data);
  }

  const fields: OpportunityField<keyof EditValues>[] = [
    { name: 'title', label: s.title, problem: error?.fields.title, required: true },
    { name: 'product', label: s.product, problem: error?.fields.product, required: true },
    { name: 'value', label: s.expectedValue, problem: error?.fields.expected_value_eur },
    { name: 'source', label: p.source, problem: error?.fields.source },
    { name: 'tags', label: p.tags, problem: error?.fields.tags, hint: p.tagsHint },
    { name: 'last_name', label: s.contactLastName, problem: error?.fields.last_name ?? error?.fields.contact, required: true },
    { name: 'first_name', label: p.firstName, problem: error?.fields.first_name },
    { name: 'email', label: s.email, problem: error?.fields.email, type: 'email' },
    { name: 'phone', label: p.phone, problem: error?.fields.phone, type: 'tel' },
  ];
  return (
    <form className="card records-panel records-form" onSubmit={(e) => void submit(e)} aria-label={p.edit} noValidate>
      <ClientPicker
        lang={lang}
        s={{ ...AUTOMATION_STRINGS[lang], client: p.client, clientHint: p.clientHint }}
        chosen={client}
        onChoose={(chosen) => (setClient(chosen), setClientTouched(true))}
      />
      {error?.fields.client_id && <span className="records-field-error small">{error.fields.client_id}</span>}
      <OpportunityFields
        id={id}
        fields={fields}
        values={values}
        optional={s.optional}
        onChange={(name, value) => setValues({ ...values, [name]: value })}
      />
      {error && <Alert>{error.message}</Alert>}
      <div className="actions">
        <button type="button" className="button" onClick={props.onCancel} disabled={busy}>
          {s.cancel}
        </button>
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {busy ? p.saving : p.save}
        </button>
      </div>
    </form>
  );
}
