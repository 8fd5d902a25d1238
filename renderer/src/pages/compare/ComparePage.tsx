import { useEffect, useMemo, useState, type FormEvent } from 'react';
import type { z } from 'zod';
import { RISK_LINE_CODES, type comparisonRequestBody, type RiskSchemaDocument } from '../../../../shared/comparaisons.js';
import { createConsoleComparison, getConsoleRiskSchema, type ConsoleComparisonDryRun } from '../../../../shared/console-comparaisons.js';
import { createConsoleClient } from '../../../../shared/console-records.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import { go, useLocation } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { ActionError, type ShownError } from '../automation/ActionError.js';
import { ClientPicker, useClientFromAddress, type ChosenClient } from '../automation/ClientPicker.js';
import { Field, wordIssues } from '../automation/PricingFields.js';
import type { FormValues } from '../automation/schemaForm.js';
import { AUTOMATION_STRINGS } from '../automation/strings.js';
import { ComparisonView } from './ComparisonView.js';
import { CompareDryRun } from './CompareDryRun.js';
import { questionField, questionsOfRefusal, toAnswers, type Question } from './questions.js';
import { riskGroups, riskIssuesByField, toRisk } from './riskForm.js';
import { COMPARE_STRINGS, comparisonPath } from './strings.js';

type Line = (typeof RISK_LINE_CODES)[number];
/** The risk is built from the form as typed: the service checks it against the line's model and names each problem. */
type ComparisonInput = z.input<typeof comparisonRequestBody>;
const PAGE_PATH = '/console/compare';

/** /console/compare: the form of a new comparison; /console/compare/<id>: one comparison, live. */
export function ComparePage(props: PageProps) {
  const { pathname } = useLocation();
  const rest = pathname.slice(PAGE_PATH.length).replace(/^\/+|\/+$/g, '');
  if (rest !== '') return <ComparisonView {...props} comparisonId={decodeURIComponent(rest)} />;
  return <CompareForm {...props} />;
}

/** The names of the risk's person (the driver, the policyholder), to create the client from them. */
function personIn(values: FormValues, doc: RiskSchemaDocument): { last: string; first: string } | null {
  const group = doc.ligne === 'auto' ? 'conducteur' : 'souscripteur';
  const last = String(values[`${group}.nom`] ?? '').trim();
  const first = String(values[`${group}.prenom`] ?? '').trim();
  return last === '' ? null : { last, first };
}

function CompareForm({ lang, t }: PageProps) {
  const s = COMPARE_STRINGS[lang];
  const a = AUTOMATION_STRINGS[lang];
  const [line, setLine] = useState<Line>('auto');
  const [doc, setDoc] = useState<RiskSchemaDocument | null>(null);
  const [values, setValues] = useState<FormValues>({});
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [questions, setQuestions] = useState<Record<string, Question[]>>({});
  const [answers, setAnswers] = useState<FormValues>({});
  const [issues, setIssues] = useState<Record<string, ValidationIssue[]>>({});
  const [dryRun, setDryRun] = useState<ConsoleComparisonDryRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** A refusal of the check, the comparison or the client's creation, shown beside the buttons. */
  const [refusal, setRefusal] = useState<ShownError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState<'check' | 'start' | 'client' | null>(null);
  const [client, setClient] = useClientFromAddress(lang);

  useEffect(() => {
    let cancelled = false;
    setDoc(null);
    setDryRun(null);
    setIssues({});
    setQuestions({});
    void call(getConsoleRiskSchema, { params: { ligne: line } }).then((result) => {
      if (cancelled) return;
      if (!result.ok) return setError(result.error.message);
      setDoc(result.data);
      setChosen(new Set(result.data.compagnies.map((c) => c.compagnie)));
    });
    return () => {
      cancelled = true;
    };
  }, [line]);

  const groups = useMemo(() => (doc ? riskGroups(doc, lang, s.coverGroup) : []), [doc, lang, s.coverGroup]);

  function changed() {
    setDryRun(null);
    setNotice(null);
  }
  function setValue(key: string, value: string | boolean) {
    setValues((v) => ({ ...v, [key]: value }));
    setIssues(({ [key]: _dropped, ...others }) => others);
    changed();
  }
  function setAnswer(key: string, value: string | boolean) {
    setAnswers((v) => ({ ...v, [key]: value }));
    changed();
  }
  function toggleInsurer(code: string, on: boolean) {
    setChosen((current) => {
      const next = new Set(current);
      if (on) next.add(code);
      else next.delete(code);
      return next;
    });
    changed();
  }
  function addQuestions(more: Record<string, readonly Question[]>) {
    setQuestions((current) => {
      const next = { ...current };
      for (const [compagnie, list] of Object.entries(more)) {
        const known = new Set((next[compagnie] ?? []).map((q) => q.code));
        next[compagnie] = [...(next[compagnie] ?? []), ...list.filter((q) => !known.has(q.code))];
      }
      return next;
    });
  }

  function body(dry: boolean) {
    if (!doc) throw new Error('no form');
    const reponses = toAnswers(Object.fromEntries(Object.entries(questions).filter(([c]) => chosen.has(c))), answers);
    return {
      ligne: doc.ligne,
      risque: toRisk(groups, values),
      compagnies: [...chosen],
      ...(Object.keys(reponses).length > 0 ? { reponses } : {}),
      ...(client ? { client_id: client.client_id } : {}),
      ...(dry ? { dry_run: true } : {}),
    } as ComparisonInput;
  }

  /** A refusal: each field's problem beside it, the answers asked for below the form, the rest beside the buttons. */
  function refused(failure: { error: { error: string; message: string; details?: unknown } }) {
    if (failure.error.error === 'validation_error') {
      const { '': others = [], ...byField } = riskIssuesByField(failure.error.details, groups);
      setIssues(byField);
      return setRefusal({ message: others.length > 0 ? failure.error.message : s.fixFields });
    }
    if (failure.error.error === 'answers_missing') addQuestions(questionsOfRefusal(failure.error.details));
    setRefusal({ message: failure.error.message, code: failure.error.error, details: failure.error.details });
  }

  async function check() {
    setBusy('check');
    setRefusal(null);
    const result = await call(createConsoleComparison, { body: body(true) });
    setBusy(null);
    if (!result.ok) return refused(result);
    if (result.status !== 200) return setRefusal({ message: t.unexpectedError(result.status) });
    setIssues({});
    setDryRun(result.data);
    addQuestions(Object.fromEntries(result.data.compagnies.map((c) => [c.compagnie, c.missing_answers])));
  }

  async function start(event: FormEvent) {
    event.preventDefault();
    setBusy('start');
    setRefusal(null);
    const result = await call(createConsoleComparison, { body: body(false) });
    if (result.ok && result.status === 202) return go(comparisonPath(result.data.comparaison_id));
    setBusy(null);
    if (result.ok) return setRefusal({ message: t.unexpectedError(result.status) });
    refused(result);
  }

  async function createClientFromForm(person: { last: string; first: string }) {
    setBusy('client');
    setRefusal(null);
    const result = await call(createConsoleClient, {
      body: { type: 'person', last_name: person.last, ...(person.first !== '' ? { first_name: person.first } : {}) },
    });
    setBusy(null);
    if (!result.ok) return setRefusal({ message: result.error.message });
    const name = [person.first, person.last].filter((x) => x !== '').join(' ');
    setClient({ client_id: result.data.client_id, name });
    setNotice(s.clientCreated(name));
  }

  const person = doc ? personIn(values, doc) : null;
  const asked = doc ? doc.compagnies.filter((c) => chosen.has(c.compagnie) && (questions[c.compagnie] ?? []).length > 0) : [];
  return (
    <section className="automation compare">
      <h1>{s.title}</h1>
      <p className="muted">{s.intro}</p>
      <div className="automation-pickers">
        <ClientPicker lang={lang} s={a} chosen={client} onChoose={(c: ChosenClient | null) => (setClient(c), changed())} />
        {!client && person && (
          <p>
            <button type="button" className="button" disabled={busy !== null} onClick={() => void createClientFromForm(person)}>
              {busy === 'client' ? s.creatingClient : s.createClient([person.first, person.last].join(' ').trim())}
            </button>
          </p>
        )}
        <fieldset className="compare-lines">
          <legend>{s.line}</legend>
          {RISK_LINE_CODES.map((code) => (
            <label key={code}>
              <input type="radio" name="ligne" value={code} checked={line === code} onChange={() => setLine(code)} /> {s.lines[code]}
            </label>
          ))}
        </fieldset>
      </div>
      {notice && (
        <p className="automation-ok" role="status">
          {notice}
        </p>
      )}
      {!doc && !error && <Loading t={t} />}
      {doc && (
        <form className="card automation-form" noValidate onSubmit={(e) => void start(e)} aria-label={s.title}>
          <p className="muted small">{s.requiredNote}</p>
          {groups.map((group) => (
            <fieldset key={`${doc.ligne}/${group.key}`} className="compare-group">
              <legend>{group.label}</legend>
              <div className="automation-fields">
                {group.fields.map((field) => (
                  <Field
                    key={field.key}
                    field={field}
                    value={values[field.key] ?? field.initial}
                    issues={wordIssues(field, issues[field.key] ?? [], lang)}
                    s={a}
                    lang={lang}
                    onChange={setValue}
                  />
                ))}
              </div>
            </fieldset>
          ))}
          <fieldset className="compare-group">
            <legend>{s.insurers}</legend>
            <p className="muted small">{s.insurersHint}</p>
            {doc.compagnies.length === 0 && <p>{s.noInsurer}</p>}
            {doc.compagnies.map((c) => (
              <label key={c.compagnie} className="compare-insurer">
                <input type="checkbox" checked={chosen.has(c.compagnie)} onChange={(e) => toggleInsurer(c.compagnie, e.target.checked)} />{' '}
                {c.name}
              </label>
            ))}
          </fieldset>
          {asked.length > 0 && <p className="muted small">{s.questionsIntro}</p>}
          {asked.map((c) => (
            <fieldset key={c.compagnie} className="compare-group">
              <legend>{s.asks(c.name)}</legend>
              <div className="automation-fields">
                {(questions[c.compagnie] ?? []).map((q) => {
                  const field = questionField(c.compagnie, q, lang);
                  return (
                    <Field
                      key={field.key}
                      field={field}
                      value={answers[field.key] ?? field.initial}
                      issues={[]}
                      s={a}
                      lang={lang}
                      onChange={setAnswer}
                    />
                  );
                })}
              </div>
            </fieldset>
          ))}
          <CompareDryRun result={dryRun} names={doc.compagnies} s={s} />
          <ActionError error={refusal} lang={lang} />
          <div className="automation-actions">
            <button type="button" className="button" disabled={busy !== null || chosen.size === 0} onClick={() => void check()}>
              {busy === 'check' ? s.checking : s.check}
            </button>
            <button type="submit" className="button button-primary" disabled={busy !== null || chosen.size === 0}>
              {busy === 'start' ? s.starting : s.start}
            </button>
          </div>
        </form>
      )}
      {!doc && error && <Alert>{error}</Alert>}
    </section>
  );
}
