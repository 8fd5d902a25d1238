import { useId, useState, type FormEvent } from 'react';
import type { z } from 'zod';
import { CLIENT_TYPES, type Client, type createClientBody, type updateClientBody } from '../../../../shared/crm.js';
import { createConsoleClient, updateConsoleClient } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import { Alert } from '../../Layout.js';
import { formError, type FormError } from './common.js';
import type { Lang } from '../../i18n.js';
import type { RecordsStrings } from './strings.js';

type ClientType = Client['type'];
type CreateBody = z.input<typeof createClientBody>;
type UpdateBody = z.input<typeof updateClientBody>;

const ADDRESS_FIELDS = ['line1', 'line2', 'postcode', 'city', 'country'] as const;
const CONTACT_FIELDS = ['last_name', 'first_name', 'company_name', 'siret', 'email', 'phone', 'birth_date'] as const;
/** The form's text fields: a client's contact fields, the address spread out. */
type TextField = (typeof CONTACT_FIELDS)[number] | (typeof ADDRESS_FIELDS)[number];
type Values = Record<TextField, string>;

function valuesOf(client: Client | undefined): Values {
  const address = client?.address;
  return {
    last_name: client?.last_name ?? '',
    first_name: client?.first_name ?? '',
    company_name: client?.company_name ?? '',
    siret: client?.siret ?? '',
    email: client?.email ?? '',
    phone: client?.phone ?? '',
    birth_date: client?.birth_date ?? '',
    line1: address?.line1 ?? '',
    line2: address?.line2 ?? '',
    postcode: address?.postcode ?? '',
    city: address?.city ?? '',
    country: address?.country ?? '',
  };
}

/** The address as the API takes it, or null when every address field is empty. */
function addressOf(v: Values): NonNullable<CreateBody['address']> | null {
  if (ADDRESS_FIELDS.every((field) => v[field].trim() === '')) return null;
  return {
    line1: v.line1,
    postcode: v.postcode,
    city: v.city,
    ...(v.line2.trim() ? { line2: v.line2 } : {}),
    ...(v.country.trim() ? { country: v.country.trim().toUpperCase() } : {}),
  };
}

/** A creation's body: the type and the fields filled in. */
function creationBody(type: ClientType, v: Values): CreateBody {
  const body: CreateBody = { type };
  for (const field of CONTACT_FIELDS) if (v[field].trim() !== '') body[field] = v[field];
  const address = addressOf(v);
  if (address) body.address = address;
  return body;
}

/** A PATCH's body: the fields that changed, an emptied one as null (the API clears it), the address whole. */
function changesBody(before: Values, v: Values): UpdateBody {
  const body: UpdateBody = {};
  for (const field of CONTACT_FIELDS) if (v[field].trim() !== before[field]) body[field] = v[field].trim() === '' ? null : v[field];
  if (ADDRESS_FIELDS.some((field) => v[field].trim() !== before[field])) body.address = addressOf(v);
  return body;
}

/** Which fields a type shows, in order; the first is required. */
const FIELDS_OF: Record<ClientType, readonly TextField[]> = {
  person: ['last_name', 'first_name', 'birth_date', 'email', 'phone'],
  company: ['company_name', 'siret', 'last_name', 'email', 'phone'],
};

/**
 * Creates a client (a person or a company), or edits one (its type stays). The server checks
 * everything (the REST API's rules); its answer names the fields to fix.
 */
export function ClientForm({
  s,
  lang,
  client,
  onDone,
  onCancel,
}: {
  s: RecordsStrings;
  lang: Lang;
  client?: Client;
  onDone: (client: Client | null) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const [type, setType] = useState<ClientType>(client?.type ?? 'person');
  const initial = valuesOf(client);
  const [values, setValues] = useState<Values>(initial);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  const labels: Record<TextField, string> = {
    last_name: s.lastName,
    first_name: s.firstName,
    company_name: s.companyName,
    siret: s.siret,
    email: s.email,
    phone: s.phone,
    birth_date: s.birthDate,
    line1: s.addressLine1,
    line2: s.addressLine2,
    postcode: s.postcode,
    city: s.city,
    country: s.country,
  };

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    if (client) {
      const body = changesBody(initial, values);
      if (Object.keys(body).length === 0) return onDone(null);
      const result = await call(updateConsoleClient, { params: { client_id: client.client_id }, body });
      setBusy(false);
      return result.ok ? onDone(result.data) : setError(formError(result, lang));
    }
    const result = await call(createConsoleClient, { body: creationBody(type, values) });
    setBusy(false);
    return result.ok ? onDone(result.data) : setError(formError(result, lang));
  }

  const field = (name: TextField, required = false) => {
    const fieldId = `${id}-${name}`;
    const problem =
      error?.fields[name] ?? (ADDRESS_FIELDS.includes(name as (typeof ADDRESS_FIELDS)[number]) ? error?.fields.address : undefined);
    return (
      <div className="field" key={name}>
        <label htmlFor={fieldId}>
          {labels[name]}
          {!required && <span className="muted small">{` (${s.optional})`}</span>}
        </label>
        <input
          id={fieldId}
          type={name === 'email' ? 'email' : name === 'birth_date' ? 'date' : name === 'phone' ? 'tel' : 'text'}
          value={values[name]}
          required={required}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? `${fieldId}-error` : undefined}
          onChange={(e) => setValues({ ...values, [name]: e.target.value })}
        />
        {problem && (
          <span id={`${fieldId}-error`} className="records-field-error small">
            {problem}
          </span>
        )}
      </div>
    );
  };

  const shown = FIELDS_OF[type];
  return (
    <form className="records-form" onSubmit={(e) => void submit(e)} aria-label={client ? s.edit : s.newClient} noValidate>
      {!client && (
        <fieldset className="records-choices">
          <legend>{s.clientType}</legend>
          {CLIENT_TYPES.map((option) => (
            <label key={option} className="choice">
              <input type="radio" name={`${id}-type`} value={option} checked={type === option} onChange={() => setType(option)} />
              {option === 'person' ? s.person : s.company}
            </label>
          ))}
        </fieldset>
      )}
      <div className="records-fields">{shown.map((name, index) => field(name, index === 0))}</div>
      <div className="records-fields">{ADDRESS_FIELDS.map((name) => field(name))}</div>
      {error && <Alert>{error.message}</Alert>}
      <div className="actions">
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          {s.cancel}
        </button>
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {client ? (busy ? s.saving : s.save) : busy ? s.creating : s.create}
        </button>
      </div>
    </form>
  );
}
