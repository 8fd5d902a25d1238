import { useState, type FormEvent } from 'react';
import { signIn } from '../../../shared/console-session.js';
import { cabinetChoicesSchema, type CabinetChoices } from '../../../shared/oauth.js';
import { call } from '../api.js';
import { TextField } from '../components/Field.js';
import { afterSignIn } from '../destinations.js';
import type { Strings } from '../i18n.js';
import { Alert, Layout } from '../Layout.js';
import { go } from '../navigation.js';

/**
 * /console/login?return_to=<path>: email and password; the server says where to go next. When they
 * open accounts in several cabinets, the server lists them and the person picks one.
 */
export function LoginPage({ t, returnTo }: { t: Strings; returnTo: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [cabinets, setCabinets] = useState<CabinetChoices | null>(null);
  const [cabinetId, setCabinetId] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // The choice belongs to this email and password: changing either asks the server again.
  function changeCredentials(set: (value: string) => void) {
    return (value: string) => {
      set(value);
      setCabinets(null);
      setCabinetId('');
    };
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (email.trim() === '' || password === '') {
      setError(t.fillBoth);
      return;
    }
    if (cabinets !== null && cabinetId === '') {
      setError(t.pickCabinet);
      return;
    }
    setBusy(true);
    setError(null);
    const result = await call(signIn, {
      body: {
        email,
        password,
        ...(cabinetId !== '' ? { cabinet_id: cabinetId } : {}),
        ...(returnTo !== null ? { return_to: returnTo } : {}),
      },
    });
    if (result.ok) {
      // Only ever a path on this origin, whatever the server (or a tampered link) said.
      go(afterSignIn(result.data.redirect_to));
      return;
    }
    const choices = result.error.error === 'cabinet_choice_required' ? cabinetChoicesSchema.safeParse(result.error.details) : null;
    if (choices?.success) {
      setCabinets(choices.data);
    } else {
      // 401 invalid_credentials, 429 too_many_login_attempts (its message says how long to wait), 400…
      setError(result.error.error === 'account_disabled' ? t.accountDisabled : result.error.message);
    }
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
            onValue={changeCredentials(setEmail)}
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
            onValue={changeCredentials(setPassword)}
            aria-invalid={error !== null && password === '' ? true : undefined}
          />
          {cabinets !== null && (
            <fieldset className="choices" aria-describedby="login-cabinet-hint">
              <legend>{t.cabinet}</legend>
              <p id="login-cabinet-hint" className="muted small">
                {t.chooseCabinet}
              </p>
              {cabinets.map((cabinet) => (
                <label key={cabinet.cabinet_id} className="choice">
                  <input
                    type="radio"
                    name="cabinet_id"
                    value={cabinet.cabinet_id}
                    checked={cabinetId === cabinet.cabinet_id}
                    onChange={() => setCabinetId(cabinet.cabinet_id)}
                  />
                  {cabinet.name}
                </label>
              ))}
            </fieldset>
          )}
          {error !== null && <Alert>{error}</Alert>}
          <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
            {t.signIn}
          </button>
        </form>
      </section>
    </Layout>
  );
}
