import { useEffect, useState, type FormEvent } from 'react';
import { getSetupState, runSetup } from '../../../../shared/console-session.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import { call } from '../../api.js';
import { TextField } from '../../components/Field.js';
import { afterSignIn } from '../../destinations.js';
import type { Lang, Strings } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import { Alert, Loading } from '../../Layout.js';
import { go } from '../../navigation.js';
import { ADMIN_STRINGS } from './strings.js';

const MIN_PASSWORD = 10;

type SetupField = 'cabinet' | 'email' | 'password' | 'confirm';
type FieldErrors = Partial<Record<SetupField, string>>;

/** The service's validation problems, each worded under its field (body.cabinet, body.email, body.password). */
function fieldErrorsOf(details: unknown, lang: Lang): FieldErrors {
  const errors: FieldErrors = {};
  if (!Array.isArray(details)) return errors;
  for (const issue of details as ValidationIssue[]) {
    const field = (['cabinet', 'email', 'password'] as const).find((f) => issue.path === `body.${f}`);
    if (field) errors[field] ??= describeIssue(issue, lang);
  }
  return errors;
}

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
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
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
    setFieldErrors({});
    if (cabinet.trim() === '' || email.trim() === '' || password === '') return setError(s.setupFillAll);
    if (password.length < MIN_PASSWORD) return setFieldErrors({ password: s.passwordTooShort });
    if (password !== confirm) return setFieldErrors({ confirm: s.passwordsDiffer });
    setBusy(true);
    setError(null);
    const result = await call(runSetup, { body: { cabinet: cabinet.trim(), email: email.trim(), password } });
    if (result.ok) return go(afterSignIn(result.data.redirect_to));
    if (result.error.error === 'setup_local_only') return setAllowedHere(false);
    setBusy(false);
    const byField = result.error.error === 'validation_error' ? fieldErrorsOf(result.error.details, lang) : {};
    setFieldErrors(byField);
    // Problems shown under their fields need no second telling; anything else goes to the alert.
    if (Object.keys(byField).length > 0) return setError(null);
    setError(result.error.error === 'setup_already_done' ? s.setupAlreadyDone : result.error.message);
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
        <TextField
          id="setup-cabinet"
          label={s.cabinetName}
          type="text"
          autoComplete="organization"
          value={cabinet}
          onValue={setCabinet}
          maxLength={200}
          autoFocus
          error={fieldErrors.cabinet}
        />
        <TextField
          id="setup-email"
          label={s.adminEmail}
          type="email"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          value={email}
          onValue={setEmail}
          error={fieldErrors.email}
        />
        <TextField
          id="setup-password"
          label={s.password}
          hint={s.passwordHint}
          type="password"
          autoComplete="new-password"
          value={password}
          onValue={setPassword}
          error={fieldErrors.password}
        />
        <TextField
          id="setup-confirm"
          label={s.confirmPassword}
          type="password"
          autoComplete="new-password"
          value={confirm}
          onValue={setConfirm}
          error={fieldErrors.confirm}
        />
        {error !== null && <Alert>{error}</Alert>}
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {s.createCabinet}
        </button>
      </form>
    </section>
  );
}
