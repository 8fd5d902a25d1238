import { useState } from 'react';
import { listConnectedApps, revokeConnectedApp, type ConnectedApp } from '../../../../shared/console-admin.js';
import { MCP_SCOPE_WORDING } from '../../../../shared/oauth.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { ResourceView } from '../../components/Resource.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** /console/apps (every user): the applications this user authorized over OAuth, each revocable. */
export function AppsPage({ lang, t }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [apps, reload] = useResource(listConnectedApps, lang);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const revocation = useConfirmation(
    (app: ConnectedApp) => call(revokeConnectedApp, { params: { grant_id: app.grant_id } }),
    async (app, result) => {
      if (!result.ok) return setError(errorMessage(result, lang));
      setError(null);
      setNotice(s.appRevoked(app.client_name));
      await reload();
    },
  );

  return (
    <div className="admin-page">
      <h1>{s.appsTitle}</h1>
      <p className="muted">{s.appsIntro}</p>
      {notice !== null && <Notice>{notice}</Notice>}
      {error !== null && <Alert>{error}</Alert>}
      <ResourceView resource={apps} t={t}>
        {(list) =>
          list.length === 0 ? (
            <p className="card muted">{s.noApps}</p>
          ) : (
            <ul className="admin-cards" aria-label={s.appsTitle}>
              {list.map((app) => (
                <li key={app.grant_id}>
                  <article className="card" aria-labelledby={`app-${app.grant_id}`}>
                    <div className="admin-card-head">
                      <h2 id={`app-${app.grant_id}`}>{app.client_name}</h2>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`${s.revoke} ${app.client_name}`}
                        onClick={() => revocation.ask(app)}
                      >
                        {s.revoke}
                      </button>
                    </div>
                    <dl className="admin-facts">
                      <dt>{s.authorizedOn}</dt>
                      <dd>{formatDateTime(lang, app.created_at)}</dd>
                      <dt>{s.lastUsed}</dt>
                      <dd>{app.last_used_at === null ? s.never : formatDateTime(lang, app.last_used_at)}</dd>
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
          )
        }
      </ResourceView>
      <ConfirmStep
        confirmation={revocation}
        title={(app) => s.revokeAppTitle(app.client_name)}
        text={s.revokeAppText}
        confirmLabel={s.revoke}
        cancelLabel={s.cancel}
      />
    </div>
  );
}
