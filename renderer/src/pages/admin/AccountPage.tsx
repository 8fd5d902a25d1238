import { useEffect, useState, type FormEvent } from 'react';
import { changeOwnPassword, CONSOLE_ACCOUNT_PAGE } from '../../../../shared/console-account.js';
import { CONSOLE_HOME } from '../../../../shared/console-pages.js';
import { call } from '../../api.js';
import { TextField } from '../../components/Field.js';
import { Alert } from '../../Layout.js';
import { go } from '../../navigation.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, errorMessage } from './common.js';
import { ADMIN_STRINGS, type AdminStrings } from './strings.js';

/** The shortest password the contract accepts (shared/tenancy.ts), said before sending. */
const MIN_PASSWORD = 10;

/** What is wrong with the form before anything is sent, or null. */
function formProblem(s: AdminStrings, current: string, next: string, confirm: string): string | null {
  if (current === '') return s.currentMissing;
  if (next === '') return s.newMissing;
  if (next.length < MIN_PASSWORD) return s.passwordTooShort;
  if (next !== confirm) return s.passwordsDiffer;
  if (next === current) return s.sameAsCurrent;
  return null;
}

/** /console/account (every user): who they are here, and the change of their own password. */
export function AccountPage({ lang, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const mustChange = session.user.must_change_password;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const problem = formProblem(s, current, next, confirm);
    if (problem !== null) return setError(problem);
    setBusy(true);
    setError(null);
    setDone(false);
    const result = await call(changeOwnPassword, { body: { current_password: current, new_password: next } });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    // A full load, so that the console reads the session again (it no longer must change anything).
    if (mustChange) return window.location.assign(CONSOLE_HOME);
    setDone(true);
    setCurrent('');
    setNext('');
    setConfirm('');
  }

  return (
    <div className="admin-page">
      <h1>{s.accountTitle}</h1>
      <p className="muted">{s.accountIntro}</p>
      {mustChange && (
        <p className="admin-warning" role="alert">
          {s.passwordChangeRequired}
        </p>
      )}
      <section className="card" aria-labelledby="account-who-title">
        <h2 id="account-who-title" className="admin-visually-hidden">
          {s.accountTitle}
        </h2>
        <dl className="admin-facts">
          <dt>{s.email}</dt>
          <dd>{session.user.email}</dd>
          <dt>{s.role}</dt>
          <dd>{session.user.role === 'admin' ? s.roleAdmin : s.roleBroker}</dd>
          <dt>{s.cabinet}</dt>
          <dd>{session.cabinet.name}</dd>
        </dl>
      </section>
      <section className="card" aria-labelledby="change-password-title">
        <h2 id="change-password-title">{s.changePassword}</h2>
        {done && <Notice>{s.passwordChanged}</Notice>}
        <form className="form" onSubmit={(event) => void submit(event)} noValidate>
          <TextField
            id="current-password"
            label={s.currentPassword}
            type="password"
            autoComplete="current-password"
            value={current}
            onValue={setCurrent}
          />
          <TextField
            id="new-password"
            label={s.newPassword}
            hint={s.passwordHint}
            type="password"
            autoComplete="new-password"
            value={next}
            onValue={setNext}
          />
          <TextField
            id="confirm-password"
            label={s.confirmNewPassword}
            type="password"
            autoComplete="new-password"
            value={confirm}
            onValue={setConfirm}
          />
          {error !== null && <Alert>{error}</Alert>}
          <div>
            <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
              {s.savePassword}
            </button>
          </div>
        </form>
      </section>
    </div>
  );
}

/**
 * Over every page: someone whose password was reset is sent to My account (the server refuses
 * every other console route until the password is changed: 403 password_change_required).
 */
export function PasswordChangeGate({ session }: PageProps) {
  const elsewhere = session.user.must_change_password && window.location.pathname.replace(/\/+$/, '') !== CONSOLE_ACCOUNT_PAGE;
  useEffect(() => {
    if (elsewhere) go(CONSOLE_ACCOUNT_PAGE);
  }, [elsewhere]);
  return null;
}
