import { useEffect, useState } from 'react';
import { getConsentRequest } from '../../../shared/oauth-endpoints.js';
import type { ConsentRequest } from '../../../shared/oauth.js';
import { call, loginUrl } from '../api.js';
import { consentFormAction } from '../destinations.js';
import type { Lang, Strings } from '../i18n.js';
import { Alert, Layout, Loading } from '../Layout.js';
import { currentPath, go } from '../navigation.js';

type State = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; request: ConsentRequest; action: string };

/**
 * /console/consent?request_id=<id>: an MCP client asks for access. The answer is a real form post,
 * not fetch: the server answers 303 to the client's redirect URI and the browser must follow it.
 */
export function ConsentPage({ t, lang, requestId }: { t: Strings; lang: Lang; requestId: string | null }) {
  const [state, setState] = useState<State>(requestId ? { kind: 'loading' } : { kind: 'error', message: t.missingRequestId });

  useEffect(() => {
    if (!requestId) return;
    let cancelled = false;
    void call(getConsentRequest, { params: { request_id: requestId } }).then((result) => {
      if (cancelled) return;
      if (result.ok) {
        const action = consentFormAction(result.data.decision_url);
        setState(action ? { kind: 'ready', request: result.data, action } : { kind: 'error', message: t.badDecisionUrl });
      } else if (result.status === 401) {
        go(loginUrl(currentPath()));
      } else {
        setState({ kind: 'error', message: result.error.message });
      }
    });
    return () => {
      cancelled = true;
    };
  }, [requestId, t]);

  return (
    <Layout t={t}>
      {state.kind === 'loading' && <Loading t={t} />}
      {state.kind === 'error' && <Alert>{state.message}</Alert>}
      {state.kind === 'ready' && <ConsentForm t={t} lang={lang} request={state.request} action={state.action} />}
    </Layout>
  );
}

function ConsentForm({ t, lang, request, action }: { t: Strings; lang: Lang; request: ConsentRequest; action: string }) {
  return (
    <section className="card" aria-labelledby="consent-title">
      <h1 id="consent-title">{t.consentTitle(request.client_name)}</h1>
      <p>
        {t.returnsTo} <strong className="host">{request.redirect_host}</strong>
      </p>
      <p className="muted">
        {t.signedInAs} <strong>{request.user.email}</strong>
      </p>
      <h2>{t.itWillBeAbleTo}</h2>
      <ul className="scopes">
        {request.scopes.map((scope) => (
          <li key={scope.scope} className={scope.writes ? 'scope scope-writes' : 'scope'}>
            <span className="scope-text">{scope[lang]}</span>
            {scope.writes && <span className="badge badge-warning">{t.canModify}</span>}
            <code className="scope-code">{scope.scope}</code>
          </li>
        ))}
      </ul>
      <p className="muted small">{t.consentHint}</p>
      <form method="post" action={action} className="actions">
        <input type="hidden" name="request_id" value={request.request_id} />
        <input type="hidden" name="csrf_token" value={request.csrf_token} />
        <button type="submit" name="decision" value="deny" className="button">
          {t.deny}
        </button>
        <button type="submit" name="decision" value="allow" className="button button-primary">
          {t.allow}
        </button>
      </form>
    </section>
  );
}
