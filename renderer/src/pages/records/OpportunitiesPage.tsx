import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import {
  FINAL_STAGES,
  OPPORTUNITY_SORTS,
  OPPORTUNITY_STAGES,
  type OpportunitySort,
  type OpportunityStage,
} from '../../../../shared/crm.js';
import type { ConsoleOpportunity as Opportunity } from '../../../../shared/console-records.js';
import { createConsoleOpportunity, listConsoleOpportunities, updateConsoleOpportunity } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation, type Confirmation } from '../../components/ConfirmDialog.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { formError, idInPath, Notice, type FormError } from './common.js';
import { OpportunityDetail } from './OpportunityDetail.js';
import { OpportunityFields, typedEuros, type OpportunityField } from './OpportunityFields.js';
import { PIPELINE_STRINGS } from './pipeline-strings.js';
import { PipelineBoard, type Board } from './PipelineBoard.js';
import { RECORDS_STRINGS, type RecordsStrings } from './strings.js';
import type { Lang } from '../../i18n.js';
import { ClientPicker, type ChosenClient } from '../automation/ClientPicker.js';
import { AUTOMATION_STRINGS } from '../automation/strings.js';

const PAGE_SIZE = 100;

interface Move {
  opportunity: Opportunity;
  to: OpportunityStage;
}

/** The cards' order in a column, as the service sorts them: newest, or largest value, first. */
const ORDERS: Record<OpportunitySort, (a: Opportunity, b: Opportunity) => number> = {
  '-created_at': (a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id),
  '-expected_value_eur': (a, b) => b.expected_value_eur - a.expected_value_eur || a.id.localeCompare(b.id),
};

/** The board with the opportunity taken out of every column and put in its stage's, in the board's order. */
function placed(board: Board, opportunity: Opportunity, order: OpportunitySort): Board {
  const next = { ...board };
  for (const stage of OPPORTUNITY_STAGES) {
    const others = board[stage].opportunities.filter((o) => o.id !== opportunity.id);
    next[stage] = { ...board[stage], opportunities: stage === opportunity.stage ? [...others, opportunity].sort(ORDERS[order]) : others };
  }
  return next;
}

/** /console/opportunities: the pipeline board; /console/opportunities/<id>: one opportunity's page. */
export function OpportunitiesPage(props: PageProps) {
  const opportunityId = idInPath('opportunities');
  return opportunityId === null ? <Pipeline {...props} /> : <OpportunityDetail {...props} opportunityId={opportunityId} />;
}

/**
 * One column per stage, a card per opportunity, moved by drag and drop (mouse, touch, keyboard) or
 * its stage select. Won and lost are final: moving into one asks first, leaving one asks to reopen.
 * A refused move leaves the card where it was and says why above the board.
 */
function Pipeline({ lang, t }: PageProps) {
  const s = RECORDS_STRINGS[lang];
  const p = PIPELINE_STRINGS[lang];
  const [board, setBoard] = useState<Board | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const orderId = useId();
  const [order, setOrder] = useState<OpportunitySort>('-created_at');
  // A new object for each request, so that asking again for the same card focuses it again.
  const [focusRequest, setFocusRequest] = useState<{ id: string } | null>(null);

  const column = useCallback(
    (stage: OpportunityStage, cursor?: string) =>
      call(listConsoleOpportunities, { query: { stage, limit: PAGE_SIZE, sort: order, cursor } }),
    [order],
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
      return setError(p.refused(opportunity.title, result.error.message));
    }
    setError(null);
    setBoard((current) => current && placed(current, result.data, order));
    setNotice(s.moved(result.data.title, s.stages[result.data.stage]));
  }

  // Once the dialog is closed (settled after it), the focus goes back to the card's Move button.
  const reopening = useConfirmation(
    (m: Move) => move(m, true),
    (m) => setFocusRequest({ id: m.opportunity.id }),
  );
  const finishing = useConfirmation(
    (m: Move) => move(m, false),
    (m) => setFocusRequest({ id: m.opportunity.id }),
  );
  /** A dialog closed without moving gives the focus back to the card's Move button. */
  const refocusOnCancel = <T extends Move>(confirmation: Confirmation<T>): Confirmation<T> => ({
    ...confirmation,
    cancel: () => {
      if (confirmation.pending) setFocusRequest({ id: confirmation.pending.opportunity.id });
      confirmation.cancel();
    },
  });

  function choose(opportunity: Opportunity, to: OpportunityStage) {
    if (to === opportunity.stage) return;
    if (FINAL_STAGES.includes(opportunity.stage)) return reopening.ask({ opportunity, to });
    if (FINAL_STAGES.includes(to)) return finishing.ask({ opportunity, to });
    void move({ opportunity, to }, false).then(() => setFocusRequest({ id: opportunity.id }));
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
      <form className="records-search" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={orderId}>{p.order}</label>
          <select
            id={orderId}
            value={order}
            onChange={(e) => setOrder(OPPORTUNITY_SORTS.find((v) => v === e.target.value) ?? '-created_at')}
          >
            <option value="-created_at">{p.orderNewest}</option>
            <option value="-expected_value_eur">{p.orderValue}</option>
          </select>
        </div>
      </form>
      {creating && (
        <div className="card records-panel">
          <h2>{s.newOpportunity}</h2>
          <OpportunityForm
            lang={lang}
            s={s}
            onCancel={() => setCreating(false)}
            onCreated={(opportunity) => {
              setCreating(false);
              setBoard((current) => current && placed(current, opportunity, order));
            }}
          />
        </div>
      )}
      {notice && <Notice>{notice}</Notice>}
      {error && <Alert>{error}</Alert>}
      {board === null && !error && <Loading t={t} />}
      {board && (
        <PipelineBoard
          lang={lang}
          s={s}
          p={p}
          board={board}
          focusRequest={focusRequest}
          onMove={choose}
          onLoadMore={(stage) => void loadMore(stage)}
        />
      )}
      <ConfirmStep
        confirmation={refocusOnCancel(reopening)}
        title={(m) => s.reopenTitle(m.opportunity.title)}
        text={(m) => s.reopenText(s.stages[m.opportunity.stage], s.stages[m.to])}
        confirmLabel={s.reopenConfirm}
        cancelLabel={s.cancel}
      />
      <ConfirmStep
        confirmation={refocusOnCancel(finishing)}
        title={(m) => p.finalTitle(m.opportunity.title, s.stages[m.to])}
        text={(m) => p.finalText(s.stages[m.to])}
        confirmLabel={finishing.pending ? p.finalConfirm(s.stages[finishing.pending.to]) : ''}
        cancelLabel={s.cancel}
        tone="primary"
      />
    </section>
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
  const p = PIPELINE_STRINGS[lang];
  const [values, setValues] = useState({ title: '', product: '', last_name: '', email: '', value: '' });
  const [client, setClient] = useState<ChosenClient | null>(null);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    const value = typedEuros(values.value);
    if (values.value.trim() !== '' && value === null)
      return setError({ message: p.valueInvalid, fields: { expected_value_eur: p.valueInvalid } });
    const result = await call(createConsoleOpportunity, {
      body: {
        title: values.title,
        product: values.product,
        contact: { last_name: values.last_name, ...(values.email.trim() ? { email: values.email.trim() } : {}) },
        ...(value !== null ? { expected_value_eur: value } : {}),
        ...(client ? { client_id: client.client_id } : {}),
      },
    });
    setBusy(false);
    if (!result.ok) return setError(formError(result, lang));
    onCreated(result.data);
  }

  const fields: OpportunityField<keyof typeof values>[] = [
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
      <ClientPicker
        lang={lang}
        s={{ ...AUTOMATION_STRINGS[lang], client: p.clientOptional, clientHint: p.clientHint }}
        chosen={client}
        onChoose={(chosen) => {
          setClient(chosen);
          // The contact is the client's, until the broker names someone else.
          if (chosen && values.last_name.trim() === '') setValues({ ...values, last_name: chosen.name });
        }}
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
