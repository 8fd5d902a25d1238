import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import type { ProductList, ProductSchemaDocument } from '../../../../shared/automation.js';
import { getConsoleProductSchema, listConsoleProducts, priceFromConsole, type ConsoleDryRun } from '../../../../shared/console-automation.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import { call } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { datePickerPattern, describeIssue } from '../../issues.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { ClientPicker, useClientFromAddress, type ChosenClient } from './ClientPicker.js';
import { fieldsOf, initialValues, issuesByField, toDicData, type FieldSpec, type FormValues } from './schemaForm.js';
import { AUTOMATION_STRINGS, type AutomationStrings } from './strings.js';

type Product = ProductList['data'][number];

/** A field the server found missing reads like any other missing field. */
const MISSING: ValidationIssue = { path: '', message: 'required', code: 'invalid_type', received: 'undefined' };

/** The problems of one field, in words for the person filling the form. */
function wordIssues(field: FieldSpec | undefined, issues: readonly ValidationIssue[], lang: Lang): string[] {
  return issues.map((issue) => describeIssue(issue, lang, { valueLabels: field?.optionLabels, example: field?.example }));
}

/** The field of the products' schemas that names the insured: a chosen client's name fills it when empty. */
const INSURED_NAME_FIELD = 'insured_name';

/**
 * /console/pricing: the client the quote is for (optional; ?client=<id> from the client's page),
 * an insurer and a product, the form generated from its schema; check it, price it.
 */
export function PricingPage({ lang, t }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  const insurerId = useId();
  const productId = useId();
  const [products, setProducts] = useState<Product[] | null>(null);
  const [compagnie, setCompagnie] = useState('');
  const [produit, setProduit] = useState('');
  const [doc, setDoc] = useState<ProductSchemaDocument | null>(null);
  const [values, setValues] = useState<FormValues>({});
  const [loadingForm, setLoadingForm] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [dryRun, setDryRun] = useState<ConsoleDryRun | null>(null);
  const [fieldIssues, setFieldIssues] = useState<Record<string, ValidationIssue[]>>({});
  const [busy, setBusy] = useState<'check' | 'price' | null>(null);
  const [client, setClient] = useClientFromAddress(lang);

  useEffect(() => {
    void (async () => {
      const result = await call(listConsoleProducts);
      if (!result.ok) return setError(result.error.message);
      setProducts(result.data.data);
      const insurers = uniqueInsurers(result.data.data);
      if (insurers.length === 1 && insurers[0]) setCompagnie(insurers[0].code);
    })();
  }, []);

  const insurers = useMemo(() => uniqueInsurers(products ?? []), [products]);
  const offered = useMemo(() => (products ?? []).filter((p) => p.insurers.some((i) => i.code === compagnie)), [products, compagnie]);
  const fields = useMemo(() => (doc ? fieldsOf(doc) : []), [doc]);

  useEffect(() => {
    setDoc(null);
    setDryRun(null);
    setFieldIssues({});
    if (!compagnie || !produit) return;
    let cancelled = false;
    setLoadingForm(true);
    void (async () => {
      const result = await call(getConsoleProductSchema, { params: { code: produit }, query: { compagnie } });
      if (cancelled) return;
      setLoadingForm(false);
      if (!result.ok) return setError(result.error.message);
      setError(null);
      setDoc(result.data);
      setValues(initialValues(fieldsOf(result.data)));
    })();
    return () => {
      cancelled = true;
    };
  }, [compagnie, produit]);

  // A client chosen (or read from the address) names the insured in a fresh form.
  useEffect(() => setValues((v) => withInsuredName(v, client)), [client, doc]);

  function chooseClient(chosen: ChosenClient | null) {
    setClient(chosen);
    setDryRun(null);
  }

  function changeInsurer(code: string) {
    setCompagnie(code);
    if (!(products ?? []).some((p) => p.code === produit && p.insurers.some((i) => i.code === code))) setProduit('');
  }

  function setValue(key: string, value: string | boolean) {
    setValues((v) => ({ ...v, [key]: value }));
    setDryRun(null);
    setFieldIssues((issues) => {
      if (!issues[key]) return issues;
      const next = { ...issues };
      delete next[key];
      return next;
    });
  }

  function body(dryRunFlag: boolean) {
    return {
      compagnie,
      produit,
      dicData: toDicData(fields, values),
      ...(client ? { client_id: client.client_id } : {}),
      ...(dryRunFlag ? { dry_run: true } : {}),
    };
  }

  async function check() {
    setBusy('check');
    setError(null);
    const result = await call(priceFromConsole, { body: body(true) });
    setBusy(null);
    if (!result.ok) return setError(result.error.message);
    // A dry run answers 200; a 202 would mean the server queued a job it was not asked for.
    if (result.status !== 200) return setError(t.unexpectedError(result.status));
    setDryRun(result.data);
    const issues: Record<string, ValidationIssue[]> = {};
    for (const key of result.data.validation.missing_required_fields) issues[key] = [MISSING];
    for (const issue of result.data.invalid_fields) (issues[issue.field] ??= []).push(issue);
    setFieldIssues(issues);
  }

  async function price(event: FormEvent) {
    event.preventDefault();
    setBusy('price');
    setError(null);
    const result = await call(priceFromConsole, { body: body(false) });
    if (result.ok && result.status === 202) return go(`/console/jobs?job=${encodeURIComponent(result.data.job_id)}`);
    setBusy(null);
    if (result.ok) return setError(t.unexpectedError(result.status));
    if (result.error.error !== 'validation_error') return setError(result.error.message);
    // Each problem of a dicData field is shown next to it; only the others go to the alert.
    const { '': others = [], ...byField } = issuesByField(result.error.details);
    setFieldIssues(byField);
    setError(others.length > 0 ? result.error.message : s.fixFields);
  }

  return (
    <section className="automation">
      <h1>{s.pricingTitle}</h1>
      <p className="muted">{s.pricingIntro}</p>
      {products === null && !error && <Loading t={t} />}
      {products && (
        <div className="automation-pickers">
          <ClientPicker lang={lang} s={s} chosen={client} onChoose={chooseClient} />
          <div className="field">
            <label htmlFor={insurerId}>{s.insurer}</label>
            <select id={insurerId} value={compagnie} onChange={(e) => changeInsurer(e.target.value)}>
              <option value="">{s.choose}</option>
              {insurers.map((i) => (
                <option key={i.code} value={i.code}>
                  {i.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={productId}>{s.product}</label>
            <select id={productId} value={produit} onChange={(e) => setProduit(e.target.value)} disabled={!compagnie}>
              <option value="">{s.choose}</option>
              {offered.map((p) => (
                <option key={p.code} value={p.code}>
                  {`${p.label} (${s.credits(p.cost_credits)})`}
                </option>
              ))}
            </select>
          </div>
        </div>
      )}
      {error && <Alert>{error}</Alert>}
      {loadingForm && (
        <p className="muted" role="status">
          {s.loadingForm}
        </p>
      )}
      {doc && (
        <form className="card automation-form" noValidate onSubmit={(e) => void price(e)} aria-label={doc.label}>
          <h2>{doc.label}</h2>
          <p className="muted small">{s.requiredNote}</p>
          <div className="automation-fields">
            {fields.map((field) => (
              <Field
                key={`${doc.compagnie}/${doc.produit}/${field.key}`}
                field={field}
                value={values[field.key] ?? field.initial}
                issues={wordIssues(field, fieldIssues[field.key] ?? [], lang)}
                s={s}
                lang={lang}
                onChange={setValue}
              />
            ))}
          </div>
          <DryRunResult result={dryRun} fields={fields} s={s} lang={lang} />
          <div className="automation-actions">
            <button type="button" className="button" disabled={busy !== null} onClick={() => void check()}>
              {busy === 'check' ? s.checking : s.check}
            </button>
            <button type="submit" className="button button-primary" disabled={busy !== null}>
              {busy === 'price' ? s.pricing : s.price}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** The insured's name from the chosen client, where the form has the field and it is still empty. */
function withInsuredName(values: FormValues, client: ChosenClient | null): FormValues {
  if (!client || !(INSURED_NAME_FIELD in values) || values[INSURED_NAME_FIELD] !== '') return values;
  return { ...values, [INSURED_NAME_FIELD]: client.name };
}

function uniqueInsurers(products: readonly Product[]): { code: string; name: string }[] {
  const byCode = new Map<string, { code: string; name: string }>();
  for (const p of products) for (const i of p.insurers) byCode.set(i.code, i);
  return [...byCode.values()];
}

interface FieldProps {
  field: FieldSpec;
  value: string | boolean;
  /** The field's problems, already in words. */
  issues: string[];
  s: AutomationStrings;
  lang: Lang;
  onChange: (key: string, value: string | boolean) => void;
}

function Field({ field, value, issues, s, lang, onChange }: FieldProps) {
  const id = `dic-${field.key}`;
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const invalid = issues.length > 0;
  // A date picker shows the browser's order of day, month and year: the hint says that order, not the wire format.
  const hint = field.kind === 'date' ? s.dateHint(datePickerPattern(lang, navigator.language)) : null;
  const describedBy = [hint !== null ? hintId : null, invalid ? errorId : null].filter((x) => x !== null).join(' ');
  const common = {
    id,
    name: field.key,
    'aria-required': field.required || undefined,
    'aria-invalid': invalid || undefined,
    'aria-describedby': describedBy === '' ? undefined : describedBy,
  };
  // The star is outside the label, so that the field's name is the schema's label alone; aria-required says it.
  const label = (
    <span className="automation-label">
      <label htmlFor={id}>{field.label}</label>
      {field.required && (
        <span className="automation-required" aria-hidden="true">
          *
        </span>
      )}
    </span>
  );
  let input;
  switch (field.kind) {
    case 'boolean':
      return (
        <div className="field automation-checkbox">
          <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(field.key, e.target.checked)} />
          {label}
          {invalid && <FieldError id={errorId} issues={issues} />}
        </div>
      );
    case 'enum':
      input = (
        <select {...common} value={String(value)} onChange={(e) => onChange(field.key, e.target.value)}>
          <option value="">{s.choose}</option>
          {field.options.map((o) => (
            <option key={o} value={o}>
              {field.optionLabels[o] ?? o}
            </option>
          ))}
        </select>
      );
      break;
    case 'number':
    case 'integer':
      input = (
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.min}
          max={field.max}
          value={String(value)}
          onChange={(e) => onChange(field.key, e.target.value)}
        />
      );
      break;
    case 'date':
      input = <input {...common} type="date" value={String(value)} onChange={(e) => onChange(field.key, e.target.value)} />;
      break;
    case 'datetime':
      input = <input {...common} type="datetime-local" value={String(value)} onChange={(e) => onChange(field.key, e.target.value)} />;
      break;
    default:
      input = <input {...common} type="text" maxLength={field.maxLength} value={String(value)} onChange={(e) => onChange(field.key, e.target.value)} />;
  }
  return (
    <div className="field">
      {label}
      {input}
      {hint !== null && (
        <span id={hintId} className="muted small">
          {hint}
        </span>
      )}
      {invalid && <FieldError id={errorId} issues={issues} />}
    </div>
  );
}

function FieldError({ id, issues }: { id: string; issues: string[] }) {
  return (
    <span id={id} className="automation-field-error">
      {issues.join(' · ')}
    </span>
  );
}

function DryRunResult({ result, fields, s, lang }: { result: ConsoleDryRun | null; fields: readonly FieldSpec[]; s: AutomationStrings; lang: Lang }) {
  if (!result) return <div role="status" aria-live="polite" />;
  const labelOf = (key: string) => fields.find((f) => f.key === key)?.label ?? key;
  const v = result.validation;
  const ready = v.schema_ok && v.credentials_configured && v.quota.remaining > 0 && result.balance >= v.would_cost_credits;
  return (
    <div role="status" aria-live="polite" className="automation-dryrun" aria-label={s.dryRunTitle}>
      <h3>{s.dryRunTitle}</h3>
      <dl className="automation-facts">
        <dt>{s.cost}</dt>
        <dd>{s.credits(v.would_cost_credits)}</dd>
        <dt>{s.balance}</dt>
        <dd>{s.credits(result.balance)}</dd>
        <dt>Quota</dt>
        <dd>{s.quotaLeft(v.quota.remaining, v.quota.limit)}</dd>
      </dl>
      <p className={v.credentials_configured ? 'automation-ok' : 'alert'}>{s.credentialsReady(v.credentials_configured)}</p>
      {v.missing_required_fields.length > 0 && (
        <p className="alert">
          {s.missingFields} {v.missing_required_fields.map(labelOf).join(', ')}
        </p>
      )}
      {result.invalid_fields.length > 0 && (
        <p className="alert">
          {s.invalidFields}{' '}
          {result.invalid_fields
            .map((i) => {
              const field = fields.find((f) => f.key === i.field);
              return `${labelOf(i.field)} (${wordIssues(field, [i], lang).join(' ').replace(/\.$/, '')})`;
            })
            .join(', ')}
        </p>
      )}
      {ready && <p className="automation-ok">{s.readyToPrice}</p>}
    </div>
  );
}
