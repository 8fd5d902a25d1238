import { useState, type FormEvent } from 'react';
import type { ApiKeyEnvironment, ApiKeySummary, CreatedApiKey } from '../../../../shared/api-keys.js';
import { createKey, listKeys, revokeKey } from '../../../../shared/console-admin.js';
import { validationIssueSchema } from '../../../../shared/errors.js';
import { SCOPE_NAMES, type Scope } from '../../../../shared/scopes.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { DataTable } from '../../components/DataTable.js';
import { Field, SelectField, TextField, hintId } from '../../components/Field.js';
import { ResourceView } from '../../components/Resource.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, ShownOnce, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** The end of the chosen day, in the browser's time zone, as an ISO instant. */
function endOfDay(date: string): string {
  return new Date(`${date}T23:59:59`).toISOString();
}

function tomorrow(): string {
  const d = new Date();
  d.setDate(d.getDate() + 1);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

type KeyField = 'name' | 'scopes' | 'ips' | 'expiry';
const FIELD_OF: Record<string, KeyField> = { name: 'name', scopes: 'scopes', ip_allowlist: 'ips', expires_at: 'expiry' };

/** The problems a validation_error names, by field of the form, in words; an address of the allow-list is named with its problem. */
function keyFieldErrors(details: unknown, ips: readonly string[], lang: Lang): Partial<Record<KeyField, string>> {
  const out: Partial<Record<KeyField, string>> = {};
  const issues = validationIssueSchema.array().safeParse(details);
  if (!issues.success) return out;
  for (const issue of issues.data) {
    const [, name, index] = issue.path.split('.');
    const field = name === undefined ? undefined : FIELD_OF[name];
    if (field === undefined || out[field] !== undefined) continue;
    const words = describeIssue(issue, lang);
    const ip = field === 'ips' && index !== undefined ? ips[Number(index)] : undefined;
    out[field] = ip === undefined ? words : `${ip}${lang === 'fr' ? ' : ' : ': '}${words}`;
  }
  return out;
}

/**
 * /console/keys (admins): the list with last use first, revoke; the create form opens on demand
 * ("New key"), and the new key's value is shown once.
 */
export function KeysPage({ lang, t }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [keys, reload] = useResource(listKeys, lang);
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<ApiKeyEnvironment>('prod');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [ipList, setIpList] = useState('');
  const [expiry, setExpiry] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<KeyField, string>>>({});
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [formOpen, setFormOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const revocation = useConfirmation(
    (key: ApiKeySummary) => call(revokeKey, { params: { key_id: key.key_id } }),
    async (key, result) => {
      if (!result.ok) return setListError(errorMessage(result, lang));
      setListError(null);
      setNotice(s.keyRevoked(key.name));
      await reload();
    },
  );
  // A revocation under way holds the create form too, as one action at a time.
  const working = busy || revocation.busy;

  function toggleScope(scope: Scope, on: boolean) {
    setScopes((current) =>
      on ? SCOPE_NAMES.filter((name) => name === scope || current.includes(name)) : current.filter((name) => name !== scope),
    );
  }

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (working) return;
    const missing: Partial<Record<KeyField, string>> = {
      ...(name.trim() === '' ? { name: s.keyNameMissing } : {}),
      ...(scopes.length === 0 ? { scopes: s.scopeMissing } : {}),
    };
    setFieldErrors(missing);
    if (Object.keys(missing).length > 0) return setFormError(s.fieldsMarked);
    const ips = ipList.split(/[\s,]+/).filter((ip) => ip !== '');
    setBusy(true);
    setFormError(null);
    setNotice(null);
    const result = await call(createKey, {
      body: {
        name: name.trim(),
        environment,
        scopes,
        ...(ips.length > 0 ? { ip_allowlist: ips } : {}),
        ...(expiry !== '' ? { expires_at: endOfDay(expiry) } : {}),
      },
    });
    setBusy(false);
    if (!result.ok) {
      const byField = result.error.error === 'validation_error' ? keyFieldErrors(result.error.details, ips, lang) : {};
      setFieldErrors(byField);
      return setFormError(Object.keys(byField).length > 0 ? s.fieldsMarked : errorMessage(result, lang));
    }
    setCreated(result.data);
    setFormOpen(false);
    setName('');
    setScopes([]);
    setIpList('');
    setExpiry('');
    await reload();
  }

  const now = Date.now();
  return (
    <div className="admin-page">
      <h1>{s.keysTitle}</h1>
      <p className="muted">{s.keysIntro}</p>

      {created && (
        <ShownOnce
          id="new-key-value"
          title={s.yourNewKey}
          label={s.newKeyValue}
          warning={s.notShownAgain}
          value={created.key}
          doneLabel={s.done}
          lang={lang}
          onDone={() => setCreated(null)}
        />
      )}

      {!formOpen && (
        <div className="admin-toolbar">
          <button type="button" className="button button-primary" onClick={() => setFormOpen(true)}>
            {s.newKeyButton}
          </button>
        </div>
      )}

      {formOpen && (
        <section className="card" id="create-key" aria-labelledby="create-key-title">
          <h2 id="create-key-title">{s.newKey}</h2>
          <form className="form" onSubmit={(event) => void create(event)} noValidate>
            <div className="admin-grid">
              {/* Opened by "New key": the person goes straight to the first field. */}
              <TextField
                id="key-name"
                label={s.keyName}
                hint={s.keyNameHint}
                type="text"
                maxLength={100}
                value={name}
                onValue={setName}
                error={fieldErrors.name ?? null}
                autoFocus
              />
              <SelectField
                id="key-environment"
                label={s.environment}
                value={environment}
                options={[
                  { value: 'prod', label: s.envProd },
                  { value: 'test', label: s.envTest },
                ]}
                onValue={setEnvironment}
              />
            </div>
            <fieldset className="admin-fieldset" aria-describedby={fieldErrors.scopes ? 'scopes-hint scopes-error' : 'scopes-hint'}>
              <legend>{s.scopes}</legend>
              <p id="scopes-hint" className="muted small">
                {s.scopesHint}
              </p>
              {fieldErrors.scopes && (
                <p id="scopes-error" className="field-error">
                  {fieldErrors.scopes}
                </p>
              )}
              <ul className="admin-checklist">
                {SCOPE_NAMES.map((scope) => (
                  <li key={scope}>
                    <input
                      id={`scope-${scope}`}
                      type="checkbox"
                      checked={scopes.includes(scope)}
                      onChange={(e) => toggleScope(scope, e.target.checked)}
                      aria-describedby={`scope-${scope}-text`}
                    />
                    <label htmlFor={`scope-${scope}`} className="admin-mono">
                      {scope}
                    </label>
                    <span id={`scope-${scope}-text`} className="muted">
                      {s.scopeDescriptions[scope]}
                    </span>
                  </li>
                ))}
              </ul>
            </fieldset>
            <div className="admin-grid">
              <Field id="key-ips" label={s.ipAllowlist} hint={s.ipAllowlistHint} error={fieldErrors.ips}>
                <textarea
                  id="key-ips"
                  rows={3}
                  value={ipList}
                  onChange={(e) => setIpList(e.target.value)}
                  aria-describedby={fieldErrors.ips ? `${hintId('key-ips')} key-ips-error` : hintId('key-ips')}
                  aria-invalid={fieldErrors.ips ? true : undefined}
                  spellCheck={false}
                />
              </Field>
              <TextField
                id="key-expiry"
                label={s.expiry}
                hint={s.expiryHint}
                type="date"
                min={tomorrow()}
                value={expiry}
                onValue={setExpiry}
                error={fieldErrors.expiry ?? null}
              />
            </div>
            {formError !== null && <Alert>{formError}</Alert>}
            <div>
              <button type="submit" className="button button-primary" disabled={working} aria-busy={working}>
                {s.createKey}
              </button>{' '}
              <button type="button" className="button" onClick={() => setFormOpen(false)}>
                {s.cancel}
              </button>
            </div>
          </form>
        </section>
      )}

      {/* Not a named region: the table's own scrolling frame is one, with this name (axe: landmark-unique). */}
      <section className="card">
        <h2>{s.existingKeys}</h2>
        {notice !== null && <Notice>{notice}</Notice>}
        {listError !== null && <Alert>{listError}</Alert>}
        <ResourceView resource={keys} t={t}>
          {(list) => (
            <DataTable
              label={s.existingKeys}
              empty={s.noKeys}
              columns={[
                { header: s.keyName },
                { header: s.prefix },
                { header: s.scopes },
                { header: s.lastUsed },
                { header: s.expires },
                { header: s.status },
                { header: <span className="admin-visually-hidden">{s.actions}</span> },
              ]}
              items={list}
              rowKey={(key) => key.key_id}
              row={(key) => {
                const expired = key.expires_at !== null && Date.parse(key.expires_at) <= now;
                return (
                  <>
                    <th scope="row">{key.name}</th>
                    <td className="admin-mono">{key.key_prefix}…</td>
                    <td>
                      <ul className="admin-tags">
                        {key.scopes.map((scope) => (
                          <li key={scope} className="admin-mono">
                            {scope}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>{key.last_used_at === null ? s.never : formatDateTime(lang, key.last_used_at)}</td>
                    <td>{key.expires_at === null ? s.never : formatDateTime(lang, key.expires_at)}</td>
                    <td>{key.revoked_at !== null ? s.revokedOn(formatDateTime(lang, key.revoked_at)) : expired ? s.expired : s.active}</td>
                    <td>
                      {key.revoked_at === null && (
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`${s.revoke} ${key.name}`}
                          onClick={() => revocation.ask(key)}
                        >
                          {s.revoke}
                        </button>
                      )}
                    </td>
                  </>
                );
              }}
            />
          )}
        </ResourceView>
      </section>

      <ConfirmStep
        confirmation={revocation}
        title={(key) => s.revokeKeyTitle(key.name)}
        text={s.revokeKeyText}
        confirmLabel={s.revoke}
        cancelLabel={s.cancel}
        busy={working}
      />
    </div>
  );
}
