import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import { FINAL_STAGES, OPPORTUNITY_STAGES, type OpportunityStage } from '../../../../shared/crm.js';
import type { ConsoleOpportunity as Opportunity } from '../../../../shared/console-records.js';
import { createConsoleOpportunity, listConsoleOpportunities, updateConsoleOpportunity } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { formError, Notice, type FormError } from './common.js';
import { formatDate, formatEuros, RECORDS_STRINGS, type RecordsStrings } from './strings.js';
import type { Lang } from '../../i18n.js';

const PAGE_SIZE = 100;

type Column = { opportunities: Opportunity[]; nextCursor: string | null };
type Board = Record<OpportunityStage, Column>;

interface Move {
  opportunity: Opportunity;
  to: OpportunityStage;
}

function newestFirst(a: Opportunity, b: Opportunity): number {
  return b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id);
}

/** The board with the opportunity taken out of every column and put in its stage's. */
function placed(board: Board, opportunity: Opportunity): Board {
  const next = { ...board };
  for (const stage of OPPORTUNITY_STAGES) {
    const others = board[stage].opportunities.filter((o) => o.id !== opportunity.id);
    next[stage] = { ...board[stage], opportunities: stage === opportunity.stage ? [...others, opportunity].sort(newestFirst) : others };
  }
  return next;
}

/**
 * /console/opportunities: one column per stage (a list grouped by stage on a phone), a stage select
 * on each card. Won and lost are final: leaving them asks to reopen first.
 */
export function OpportunitiesPage({ lang, t }: PageProps) {
  const s = RECORDS_STRINGS[lang];
  const [board, setBoard] = useState<Board | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);

  const column = useCallback(
    (stage: OpportunityStage, cursor?: string) => call(listConsoleOpportunities, { query: { stage, limit: PAGE_SIZE, cursor } }),
    [],
  );

  useEffect(() => {
    let cancelled = false;
    void Promise.all(OPPORTUNITY_STAGES.map((stage) => column(stage))).then((results) => {
      if (cancelled) return;
      const failed = results.find((result) => !result.ok);
      if (failed && !failed.ok) return setError(failed.error.message);
      const loaded = Object.fromEntries(
        OPPORTUNITY_STAGES.map((stage, i) => {
          const result = results[i];
          return [
            stage,
            result?.ok ? { opportunities: result.data.data, nextCursor: result.data.next_cursor } : { opportunities: [], nextCursor: null },
          ];
        }),
      ) as Board;
      setBoard(loaded);
    });
    return () => {
      cancelled = true;
    };
  }, [column]);

  async function loadMore(stage: OpportunityStage) {
    const cursor = board?.[stage].nextCursor;
    if (!cursor) return;
    const result = await column(stage, cursor);
    if (!result.ok) return setError(result.error.message);
    setBoard(
      (current) =>
        current && {
          ...current,
          [stage]: { opportunities: [...current[stage].opportunities, ...result.data.data], nextCursor: result.data.next_cursor },
        },
    );
  }

  async function move({ opportunity, to }: Move, reopen: boolean) {
    const result = await call(updateConsoleOpportunity, {
      params: { opportunity_id: opportunity.id },
      body: reopen ? { stage: to, reopen: true } : { stage: to },
    });
    if (!result.ok) {
      setNotice(null);
      return setError(result.error.message);
    }
    setError(null);
    setBoard((current) => current && placed(current, result.data));
    setNotice(s.moved(result.data.title, s.stages[result.data.stage]));
  }

  const reopening = useConfirmation(
    (m: Move) => move(m, true),
    () => undefined,
  );

  function choose(opportunity: Opportunity, to: OpportunityStage) {
    if (to === opportunity.stage) return;
    if (FINAL_STAGES.includes(opportunity.stage)) return reopening.ask({ opportunity, to });
    void move({ opportunity, to }, false);
  }

  return (
    <section className="records">
      <div className="records-heading">
        <h1>{s.opportunitiesTitle}</h1>
        {!creating && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            {s.newOpportunity}
          </button>
        )}
      </div>
      <p className="muted">{s.opportunitiesIntro}</p>
      {creating && (
        <div className="card records-panel">
          <h2>{s.newOpportunity}</h2>
          <OpportunityForm
            lang={lang}
            s={s}
            onCancel={() => setCreating(false)}
            onCreated={(opportunity) => {
              setCreating(false);
              setBoard((current) => current && placed(current, opportunity));
            }}
          />
        </div>
      )}
      {notice && <Notice>{notice}</Notice>}
      {error && <Alert>{error}</Alert>}
      {board === null && !error && <Loading t={t} />}
      {board && (
        <div className="records-board">
          {OPPORTUNITY_STAGES.map((stage) => (
            <section key={stage} className={`records-column records-column-${stage}`} aria-labelledby={`stage-${stage}`}>
              <h2 id={`stage-${stage}`}>
                {s.stages[stage]}{' '}
                <span className="muted small">{`(${board[stage].opportunities.length}${board[stage].nextCursor ? '+' : ''})`}</span>
              </h2>
              {board[stage].opportunities.length === 0 && <p className="muted small">{s.noOpportunities}</p>}
              <ul className="records-cards">
                {board[stage].opportunities.map((opportunity) => (
                  <OpportunityCard
                    key={opportunity.id}
                    opportunity={opportunity}
                    s={s}
                    lang={lang}
                    onChoose={(to) => choose(opportunity, to)}
                  />
                ))}
              </ul>
              {board[stage].nextCursor && (
                <button type="button" className="button records-small-button" onClick={() => void loadMore(stage)}>
                  {s.loadMore}
                </button>
              )}
            </section>
          ))}
        </div>
      )}
      <ConfirmStep
        confirmation={reopening}
        title={(m) => s.reopenTitle(m.opportunity.title)}
        text={reopening.pending ? s.reopenText(s.stages[reopening.pending.opportunity.stage], s.stages[reopening.pending.to]) : ''}
        confirmLabel={s.reopenConfirm}
        cancelLabel={s.cancel}
      />
    </section>
  );
}

function OpportunityCard({
  opportunity,
  s,
  lang,
  onChoose,
}: {
  opportunity: Opportunity;
  s: RecordsStrings;
  lang: PageProps['lang'];
  onChoose: (to: OpportunityStage) => void;
}) {
  const selectId = useId();
  const contact = opportunity.contact;
  const who = contact.company_name ?? [contact.first_name, contact.last_name].filter((part) => part).join(' ');
  return (
    <li className="records-card" aria-label={opportunity.title}>
      <p className="records-card-title">{opportunity.title}</p>
      <p className="records-card-line muted small">{`${who} · ${opportunity.product}`}</p>
      <p className="records-card-line small">
        <strong>{formatEuros(lang, opportunity.expected_value_eur)}</strong>
        <span className="muted">{` · ${formatDate(lang, opportunity.created_at)}`}</span>
      </p>
      <div className="field records-stage-field">
        <label htmlFor={selectId} className="small">
          {s.stage}
        </label>
        <select
          id={selectId}
          aria-label={s.stageOf(opportunity.title)}
          value={opportunity.stage}
          onChange={(e) => onChoose(e.target.value as OpportunityStage)}
        >
          {OPPORTUNITY_STAGES.map((stage) => (
            <option key={stage} value={stage}>
              {s.stages[stage]}
            </option>
          ))}
        </select>
      </div>
    </li>
  );
}

/** A new opportunity: a title, a product, a contact's last name, optionally its email and a value. */
function OpportunityForm({
  s,
  lang,
  onCancel,
  onCreated,
}: {
  s: RecordsStrings;
  lang: Lang;
  onCancel: () => void;
  onCreated: (opportunity: Opportunity) => void;
}) {
  const id = useId();
  const [values, setValues] = useState({ title: '', product: '', last_name: '', email: '', value: '' });
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const value = Number(values.value.replace(',', '.'));
    const result = await call(createConsoleOpportunity, {
      body: {
        title: values.title,
        product: values.product,
        contact: { last_name: values.last_name, ...(values.email.trim() ? { email: values.email.trim() } : {}) },
        ...(values.value.trim() && Number.isFinite(value) ? { expected_value_eur: value } : {}),
      },
    });
    setBusy(false);
    if (!result.ok) return setError(formError(result, lang));
    onCreated(result.data);
  }

  const fields: { name: keyof typeof values; label: string; type: string; problem: string | undefined; required: boolean }[] = [
    { name: 'title', label: s.title, type: 'text', problem: error?.fields.title, required: true },
    { name: 'product', label: s.product, type: 'text', problem: error?.fields.product, required: true },
    {
      name: 'last_name',
      label: s.contactLastName,
      type: 'text',
      problem: error?.fields.last_name ?? error?.fields.contact,
      required: true,
    },
    { name: 'email', label: s.email, type: 'email', problem: error?.fields.email, required: false },
    { name: 'value', label: s.expectedValue, type: 'text', problem: error?.fields.expected_value_eur, required: false },
  ];
  return (
    <form className="records-form" onSubmit={(e) => void submit(e)} aria-label={s.newOpportunity} noValidate>
      <div className="records-fields">
        {fields.map((field) => (
          <div className="field" key={field.name}>
            <label htmlFor={`${id}-${field.name}`}>
              {field.label}
              {!field.required && <span className="muted small">{` (${s.optional})`}</span>}
            </label>
            <input
              id={`${id}-${field.name}`}
              type={field.type}
              inputMode={field.name === 'value' ? 'decimal' : undefined}
              value={values[field.name]}
              required={field.required}
              aria-invalid={field.problem ? 'true' : undefined}
              onChange={(e) => setValues({ ...values, [field.name]: e.target.value })}
            />
            {field.problem && <span className="records-field-error small">{field.problem}</span>}
          </div>
        ))}
      </div>
      {error && <Alert>{error.message}</Alert>}
      <div className="actions">
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          {s.cancel}
        </button>
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {busy ? s.creating : s.newOpportunity}
        </button>
      </div>
    </form>
  );
}
