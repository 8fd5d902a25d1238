import { useRef, useState, type FormEvent } from 'react';
import { apiKeyListSchema, createdApiKeySchema } from '../../../../shared/console-admin.js';
import type { ApiKeySummary, CreatedApiKey } from '../../../../shared/api-keys.js';
import { SCOPE_NAMES, type Scope } from '../../../../shared/scopes.js';
import { api } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { ConfirmDialog, Notice, TableFrame, errorMessage, useResource } from './common.js';
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

/** /console/keys (admins): create a key (its value shown once), the list with last use, revoke. */
export function KeysPage({ lang, t }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [keys, reload] = useResource('/api/v1/console/keys', apiKeyListSchema, lang);
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<'prod' | 'test'>('prod');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [ipList, setIpList] = useState('');
  const [expiry, setExpiry] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const [confirming, setConfirming] = useState<ApiKeySummary | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const keyField = useRef<HTMLInputElement>(null);

  function toggleScope(scope: Scope, on: boolean) {
    setScopes((current) => (on ? SCOPE_NAMES.filter((name) => name === scope || current.includes(name)) : current.filter((name) => name !== scope)));
  }

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (name.trim() === '') return setFormError(s.keyNameMissing);
    if (scopes.length === 0) return setFormError(s.scopeMissing);
    const ips = ipList.split(/[\s,]+/).filter((ip) => ip !== '');
    setBusy(true);
    setFormError(null);
    setNotice(null);
    const result = await api('/api/v1/console/keys', {
      method: 'POST',
      body: { name: name.trim(), environment, scopes, ...(ips.length > 0 ? { ip_allowlist: ips } : {}), ...(expiry !== '' ? { expires_at: endOfDay(expiry) } : {}) },
      schema: createdApiKeySchema,
    });
    setBusy(false);
    if (!result.ok) return setFormError(errorMessage(result, lang));
    setCreated(result.data);
    setCopyState('idle');
    setName('');
    setScopes([]);
    setIpList('');
    setExpiry('');
    await reload();
  }

  async function copy() {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.key);
      setCopyState('copied');
    } catch {
      // No clipboard permission (an insecure origin on the LAN): select the text for a manual copy.
      keyField.current?.select();
      setCopyState('failed');
    }
  }

  async function revoke(key: ApiKeySummary) {
    setBusy(true);
    const result = await api(`/api/v1/console/keys/${encodeURIComponent(key.key_id)}`, { method: 'DELETE' });
    setBusy(false);
    setConfirming(null);
    if (!result.ok) return setListError(errorMessage(result, lang));
    setListError(null);
    setNotice(s.keyRevoked(key.name));
    await reload();
  }

  const now = Date.now();
  return (
    <div className="admin-page">
      <h1>{s.keysTitle}</h1>
      <p className="muted">{s.keysIntro}</p>

      {created && (
        <section className="card admin-secret" aria-labelledby="new-key-title">
          <h2 id="new-key-title">{s.yourNewKey}</h2>
          <p className="admin-warning" id="new-key-warning">
            {s.notShownAgain}
          </p>
          <div className="field">
            <label htmlFor="new-key-value">{s.newKeyValue}</label>
            <div className="admin-inline">
              <input
                id="new-key-value"
                ref={keyField}
                type="text"
                className="admin-mono"
                readOnly
                value={created.key}
                aria-describedby="new-key-warning"
                onFocus={(e) => e.target.select()}
              />
              <button type="button" className="button button-primary" onClick={() => void copy()}>
                {s.copy}
              </button>
            </div>
          </div>
          {copyState === 'copied' && <Notice>{s.copied}</Notice>}
          {copyState === 'failed' && <Alert>{s.copyFailed}</Alert>}
          <div className="actions">
            <button type="button" className="button" onClick={() => setCreated(null)}>
              {s.done}
            </button>
          </div>
        </section>
      )}

      <section className="card" aria-labelledby="create-key-title">
        <h2 id="create-key-title">{s.newKey}</h2>
        <form className="form" onSubmit={(event) => void create(event)} noValidate>
          <div className="admin-grid">
            <div className="field">
              <label htmlFor="key-name">{s.keyName}</label>
              <input id="key-name" type="text" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} aria-describedby="key-name-hint" />
              <span id="key-name-hint" className="muted small">
                {s.keyNameHint}
              </span>
            </div>
            <div className="field">
              <label htmlFor="key-environment">{s.environment}</label>
              <select id="key-environment" value={environment} onChange={(e) => setEnvironment(e.target.value === 'test' ? 'test' : 'prod')}>
                <option value="prod">{s.envProd}</option>
                <option value="test">{s.envTest}</option>
              </select>
            </div>
          </div>
          <fieldset className="admin-fieldset" aria-describedby="scopes-hint">
            <legend>{s.scopes}</legend>
            <p id="scopes-hint" className="muted small">
              {s.scopesHint}
            </p>
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
            <div className="field">
              <label htmlFor="key-ips">{s.ipAllowlist}</label>
              <textarea id="key-ips" rows={3} value={ipList} onChange={(e) => setIpList(e.target.value)} aria-describedby="key-ips-hint" spellCheck={false} />
              <span id="key-ips-hint" className="muted small">
                {s.ipAllowlistHint}
              </span>
            </div>
            <div className="field">
              <label htmlFor="key-expiry">{s.expiry}</label>
              <input id="key-expiry" type="date" min={tomorrow()} value={expiry} onChange={(e) => setExpiry(e.target.value)} aria-describedby="key-expiry-hint" />
              <span id="key-expiry-hint" className="muted small">
                {s.expiryHint}
              </span>
            </div>
          </div>
          {formError !== null && <Alert>{formError}</Alert>}
          <div>
            <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
              {s.createKey}
            </button>
          </div>
        </form>
      </section>

      <section className="card" aria-labelledby="keys-list-title">
        <h2 id="keys-list-title">{s.existingKeys}</h2>
        {notice !== null && <Notice>{notice}</Notice>}
        {listError !== null && <Alert>{listError}</Alert>}
        {keys.kind === 'loading' && <Loading t={t} />}
        {keys.kind === 'error' && <Alert>{keys.message}</Alert>}
        {keys.kind === 'ready' && keys.data.length === 0 && <p className="muted">{s.noKeys}</p>}
        {keys.kind === 'ready' && keys.data.length > 0 && (
          <TableFrame label={s.existingKeys}>
            <table className="admin-table">
              <thead>
                <tr>
                  <th scope="col">{s.keyName}</th>
                  <th scope="col">{s.prefix}</th>
                  <th scope="col">{s.scopes}</th>
                  <th scope="col">{s.lastUsed}</th>
                  <th scope="col">{s.expires}</th>
                  <th scope="col">{s.status}</th>
                  <th scope="col">
                    <span className="admin-visually-hidden">{s.actions}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => {
                  const expired = key.expires_at !== null && Date.parse(key.expires_at) <= now;
                  return (
                    <tr key={key.key_id}>
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
                      <td>{key.last_used_at === null ? s.never : formatDateTime(key.last_used_at, lang)}</td>
                      <td>{key.expires_at === null ? s.never : formatDateTime(key.expires_at, lang)}</td>
                      <td>{key.revoked_at !== null ? s.revokedOn(formatDateTime(key.revoked_at, lang)) : expired ? s.expired : s.active}</td>
                      <td>
                        {key.revoked_at === null && (
                          <button type="button" className="button button-small" aria-label={`${s.revoke} ${key.name}`} onClick={() => setConfirming(key)}>
                            {s.revoke}
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableFrame>
        )}
      </section>

      {confirming && (
        <ConfirmDialog
          title={s.revokeKeyTitle(confirming.name)}
          text={s.revokeKeyText}
          confirmLabel={s.revoke}
          cancelLabel={s.cancel}
          busy={busy}
          onConfirm={() => void revoke(confirming)}
          onCancel={() => setConfirming(null)}
        />
      )}
    </div>
  );
}
