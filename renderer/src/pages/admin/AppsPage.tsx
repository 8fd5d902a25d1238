import { useState } from 'react';
import { connectedAppListSchema, type ConnectedApp } from '../../../../shared/console-admin.js';
import { MCP_SCOPE_WORDING } from '../../../../shared/oauth.js';
import { api } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { ConfirmDialog, Notice, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** /console/apps (every user): the applications this user authorized over OAuth, each revocable. */
export function AppsPage({ lang, t }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [apps, reload] = useResource('/api/v1/console/connected-apps', connectedAppListSchema, lang);
  const [confirming, setConfirming] = useState<ConnectedApp | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function revoke(app: ConnectedApp) {
    setBusy(true);
    const result = await api(`/api/v1/console/connected-apps/${encodeURIComponent(app.grant_id)}`, { method: 'DELETE' });
    setBusy(false);
    setConfirming(null);
    if (!result.ok) return setError(errorMessage(result, lang));
    setError(null);
    setNotice(s.appRevoked(app.client_name));
    await reload();
  }

  return (
    <div className="admin-page">
      <h1>{s.appsTitle}</h1>
      <p className="muted">{s.appsIntro}</p>
      {notice !== null && <Notice>{notice}</Notice>}
      {error !== null && <Alert>{error}</Alert>}
      {apps.kind === 'loading' && <Loading t={t} />}
      {apps.kind === 'error' && <Alert>{apps.message}</Alert>}
      {apps.kind === 'ready' && apps.data.length === 0 && <p className="card muted">{s.noApps}</p>}
      {apps.kind === 'ready' && apps.data.length > 0 && (
        <ul className="admin-cards" aria-label={s.appsTitle}>
          {apps.data.map((app) => (
            <li key={app.grant_id}>
              <article className="card" aria-labelledby={`app-${app.grant_id}`}>
              <div className="admin-card-head">
                <h2 id={`app-${app.grant_id}`}>{app.client_name}</h2>
                <button type="button" className="button button-small" aria-label={`${s.revoke} ${app.client_name}`} onClick={() => setConfirming(app)}>
                  {s.revoke}
                </button>
              </div>
              <dl className="admin-facts">
                <dt>{s.authorizedOn}</dt>
                <dd>{formatDateTime(app.created_at, lang)}</dd>
                <dt>{s.lastUsed}</dt>
                <dd>{app.last_used_at === null ? s.never : formatDateTime(app.last_used_at, lang)}</dd>
                <dt>{s.clientId}</dt>
                <dd className="admin-mono small">{app.client_id}</dd>
              </dl>
              <h3 className="admin-subtitle">{s.canDo}</h3>
              <ul className="admin-scope-list">
                {app.scopes.map((scope) => (
                  <li key={scope}>
                    {MCP_SCOPE_WORDING[scope][lang]} <span className="admin-mono muted small">{scope}</span>
                  </li>
                ))}
              </ul>
              </article>
            </li>
          ))}
        </ul>
      )}
      {confirming && (
        <ConfirmDialog
          title={s.revokeAppTitle(confirming.client_name)}
          text={s.revokeAppText}
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
