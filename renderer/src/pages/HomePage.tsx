import { useEffect, useState } from 'react';
import { consoleSessionSchema, type ConsoleSession } from '../../../shared/oauth.js';
import { api, loginUrl } from '../api.js';
import { CONSOLE_HOME } from '../destinations.js';
import type { Strings } from '../i18n.js';
import { Alert, Layout, Loading } from '../Layout.js';
import { currentPath, go } from '../navigation.js';

type State = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; session: ConsoleSession };

/** /console/ (and any console path without its own page yet): who is signed in, and sign out. */
export function HomePage({ t }: { t: Strings }) {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [signingOut, setSigningOut] = useState(false);

  useEffect(() => {
    let cancelled = false;
    void api('/api/v1/console/session', { schema: consoleSessionSchema }).then((result) => {
      if (cancelled) return;
      if (result.ok) setState({ kind: 'ready', session: result.data });
      else if (result.status === 401) {
        const here = currentPath();
        go(here === CONSOLE_HOME ? loginUrl() : loginUrl(here));
      } else setState({ kind: 'error', message: result.error.message });
    });
    return () => {
      cancelled = true;
    };
  }, []);

  async function signOut() {
    setSigningOut(true);
    const result = await api('/api/v1/console/session', { method: 'DELETE' });
    // Signed out, or not signed in any more (401): either way, the login page.
    if (result.ok || result.status === 401) {
      go(loginUrl());
      return;
    }
    setSigningOut(false);
    setState({ kind: 'error', message: result.error.message });
  }

  return (
    <Layout t={t}>
      {state.kind === 'loading' && <Loading t={t} />}
      {state.kind === 'error' && <Alert>{state.message}</Alert>}
      {state.kind === 'ready' && (
        <section className="card" aria-labelledby="home-title">
          <h1 id="home-title">{t.homeTitle}</h1>
          <p>
            {t.signedInAsAt} <strong>{state.session.user.email}</strong> — {state.session.cabinet.name}
          </p>
          <p className="muted">{t.homeNext}</p>
          <div className="actions">
            <button type="button" className="button" onClick={() => void signOut()} disabled={signingOut} aria-busy={signingOut}>
              {t.signOut}
            </button>
          </div>
        </section>
      )}
    </Layout>
  );
}
