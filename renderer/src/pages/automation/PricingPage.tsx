import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import type { ProductList, ProductSchemaDocument } from '../../../../shared/products.js';
import {
  getConsoleProductSchema,
  listConsoleProducts,
  priceFromConsole,
  type ConsoleDryRun,
} from '../../../../shared/console-automation.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { ActionError, type ShownError } from './ActionError.js';
import { DryRunResult, Field, wordIssues } from './PricingFields.js';
import { ClientPicker, findOrCreateClient, useClientFromAddress, type ChosenClient } from './ClientPicker.js';
import { fieldsOf, initialValues, issuesByField, toDicData, type FormValues } from './schemaForm.js';
import { AUTOMATION_STRINGS } from './strings.js';

type Product = ProductList['data'][number];

/** A field the server found missing reads like any other missing field. */
const MISSING: ValidationIssue = { path: '', message: 'required', code: 'invalid_type', received: 'undefined' };

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
  /** A refusal of the check or the pricing, shown beside the buttons. */
  const [refusal, setRefusal] = useState<ShownError | null>(null);
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

  function body(dryRunFlag: boolean, clientId = client?.client_id) {
    return {
      compagnie,
      produit,
      dicData: toDicData(fields, values),
      ...(clientId ? { client_id: clientId } : {}),
      ...(dryRunFlag ? { dry_run: true } : {}),
    };
  }

  /**
   * The client the quote is for: the one chosen, else the cabinet's client named as the insured (or
   * a new one of that name), so that every quote priced here can be signed. Null when neither is known.
   */
  async function clientForQuote(): Promise<ChosenClient | null> {
    if (client) return client;
    const insured = typeof values[INSURED_NAME_FIELD] === 'string' ? values[INSURED_NAME_FIELD].trim() : '';
    if (insured === '') return null;
    const found = await findOrCreateClient(insured, lang);
    if (found) setClient(found);
    return found;
  }

  function refused(failure: { error: { error: string; message: string; details?: unknown } }) {
    setRefusal({ message: failure.error.message, code: failure.error.error, details: failure.error.details });
  }

  async function check() {
    setBusy('check');
    setRefusal(null);
    const result = await call(priceFromConsole, { body: body(true) });
    setBusy(null);
    if (!result.ok) return refused(result);
    // A dry run answers 200; a 202 would mean the server queued a job it was not asked for.
    if (result.status !== 200) return setRefusal({ message: t.unexpectedError(result.status) });
    showCheck(result.data);
  }

  function showCheck(checked: ConsoleDryRun) {
    setDryRun(checked);
    const issues: Record<string, ValidationIssue[]> = {};
    for (const key of checked.validation.missing_required_fields) issues[key] = [MISSING];
    for (const issue of checked.invalid_fields) (issues[issue.field] ??= []).push(issue);
    setFieldIssues(issues);
  }

  /**
   * Before a client is made for a pricing without one: 'refused' when the form's data is (shown
   * beside its fields), 'cannot go' when the pricing cannot (no login, credits or quota: its own
   * refusal says so, and nobody is made a client for nothing), else 'go'.
   */
  async function checkBeforeClient(): Promise<'refused' | 'cannot go' | 'go'> {
    const checked = await call(priceFromConsole, { body: body(true) });
    if (!checked.ok || checked.status !== 200) return 'go';
    const v = checked.data.validation;
    if (!v.schema_ok) {
      showCheck(checked.data);
      setRefusal({ message: s.fixFields });
      return 'refused';
    }
    return v.credentials_configured && v.quota.remaining > 0 && checked.data.balance >= v.would_cost_credits ? 'go' : 'cannot go';
  }

  async function price(event: FormEvent) {
    event.preventDefault();
    setBusy('price');
    setRefusal(null);
    let forQuote = client;
    if (!forQuote) {
      const before = await checkBeforeClient();
      if (before === 'refused') return setBusy(null);
      if (before === 'go') {
        forQuote = await clientForQuote();
        if (!forQuote) {
          setBusy(null);
          return setRefusal({ message: s.clientRequired });
        }
      }
    }
    const result = await call(priceFromConsole, { body: body(false, forQuote?.client_id) });
    if (result.ok && result.status === 202) return go(`/console/jobs?job=${encodeURIComponent(result.data.job_id)}`);
    setBusy(null);
    if (result.ok) return setRefusal({ message: t.unexpectedError(result.status) });
    if (result.error.error !== 'validation_error') return refused(result);
    // Each problem of a dicData field is shown next to it; only the others go beside the buttons.
    const { '': others = [], ...byField } = issuesByField(result.error.details);
    setFieldIssues(byField);
    setRefusal({ message: others.length > 0 ? result.error.message : s.fixFields });
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
          <ActionError error={refusal} lang={lang} />
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
