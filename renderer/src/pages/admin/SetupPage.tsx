import { useEffect, useState, type FormEvent } from 'react';
import { getSetupState, runSetup } from '../../../../shared/console-session.js';
import { call } from '../../api.js';
import { TextField } from '../../components/Field.js';
import { afterSignIn } from '../../destinations.js';
import type { Lang, Strings } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import { ADMIN_STRINGS } from './strings.js';

const MIN_PASSWORD = 10;

/** /console/setup: the first run of an install with no cabinet. Creates the cabinet and its admin, signed in. */
export function SetupPage({ lang, t }: { lang: Lang; t: Strings }) {
  const s = ADMIN_STRINGS[lang];
  const [checking, setChecking] = useState(true);
  // Setup is accepted only from the machine that runs Courtier: elsewhere, say where to do it.
  const [allowedHere, setAllowedHere] = useState(true);
  const [cabinet, setCabinet] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      const state = await call(getSetupState);
      if (cancelled) return;
      // Already set up: this page has nothing to offer but the sign-in.
      if (state.ok && !state.data.needed) return go('/console/login');
      if (state.ok) setAllowedHere(state.data.allowed_here);
      setChecking(false);
    })();
    return () => {
      cancelled = true;
    };
  }, []);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (cabinet.trim() === '' || email.trim() === '' || password === '') return setError(s.setupFillAll);
    if (password.length < MIN_PASSWORD) return setError(s.passwordTooShort);
    if (password !== confirm) return setError(s.passwordsDiffer);
    setBusy(true);
    setError(null);
    const result = await call(runSetup, { body: { cabinet: cabinet.trim(), email: email.trim(), password } });
    if (result.ok) return go(afterSignIn(result.data.redirect_to));
    if (result.error.error === 'setup_local_only') return setAllowedHere(false);
    setError(result.error.error === 'setup_already_done' ? s.setupAlreadyDone : result.error.message);
    setBusy(false);
  }

  if (checking) return <Loading t={t} />;
  if (!allowedHere) {
    return (
      <section className="card" aria-labelledby="setup-title">
        <h1 id="setup-title">{s.setupTitle}</h1>
        <Alert>{s.setupLocalOnly}</Alert>
      </section>
    );
  }
  return (
    <section className="card" aria-labelledby="setup-title">
      <h1 id="setup-title">{s.setupTitle}</h1>
      <p className="muted">{s.setupIntro}</p>
      <form className="form" onSubmit={(event) => void submit(event)} noValidate>
        <TextField id="setup-cabinet" label={s.cabinetName} type="text" autoComplete="organization" value={cabinet} onValue={setCabinet} maxLength={200} autoFocus />
        <TextField id="setup-email" label={s.adminEmail} type="email" autoComplete="username" autoCapitalize="none" spellCheck={false} value={email} onValue={setEmail} />
        <TextField id="setup-password" label={s.password} hint={s.passwordHint} type="password" autoComplete="new-password" value={password} onValue={setPassword} />
        <TextField id="setup-confirm" label={s.confirmPassword} type="password" autoComplete="new-password" value={confirm} onValue={setConfirm} />
        {error !== null && <Alert>{error}</Alert>}
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {s.createCabinet}
        </button>
      </form>
    </section>
  );
}
