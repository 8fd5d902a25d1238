import { useState, type FormEvent } from 'react';
import { z } from 'zod';
import { consoleSessionSchema } from '../../../shared/oauth.js';
import { api } from '../api.js';
import { TextField } from '../components/Field.js';
import { afterSignIn } from '../destinations.js';
import type { Strings } from '../i18n.js';
import { Alert, Layout } from '../Layout.js';
import { go } from '../navigation.js';

const loginResponseSchema = z.object({ session: consoleSessionSchema, redirect_to: z.string() });

/** /console/login?return_to=<path>: email and password; the server says where to go next. */
export function LoginPage({ t, returnTo }: { t: Strings; returnTo: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (email.trim() === '' || password === '') {
      setError(t.fillBoth);
      return;
    }
    setBusy(true);
    setError(null);
    const result = await api('/api/v1/console/session', {
      method: 'POST',
      body: { email, password, ...(returnTo !== null ? { return_to: returnTo } : {}) },
      schema: loginResponseSchema,
    });
    if (result.ok) {
      // Only ever a path on this origin, whatever the server (or a tampered link) said.
      go(afterSignIn(result.data.redirect_to));
      return;
    }
    // 401 invalid_credentials, 429 too_many_login_attempts (its message says how long to wait), 400…
    setError(result.error.message);
    setBusy(false);
  }

  return (
    <Layout t={t}>
      <section className="card" aria-labelledby="login-title">
        <h1 id="login-title">{t.signInTitle}</h1>
        <p className="muted">{t.signInIntro}</p>
        <form className="form" onSubmit={(event) => void submit(event)} noValidate>
          <TextField
            id="login-email"
            label={t.email}
            name="email"
            type="text"
            inputMode="email"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            value={email}
            onValue={setEmail}
            aria-invalid={error !== null && email.trim() === '' ? true : undefined}
            autoFocus
          />
          <TextField
            id="login-password"
            label={t.password}
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onValue={setPassword}
            aria-invalid={error !== null && password === '' ? true : undefined}
          />
          {error !== null && <Alert>{error}</Alert>}
          <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
            {t.signIn}
          </button>
        </form>
      </section>
    </Layout>
  );
}
