import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import {
  deleteInsurerCredentials,
  listInsurers,
  setInsurerCredentials,
  testInsurerLogin,
  type ConsoleInsurer,
} from '../../../../shared/console-insurers.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { JOB_STRINGS } from './jobStrings.js';
import { AUTOMATION_STRINGS, formatDateTime, type AutomationStrings } from './strings.js';

type Status = { kind: 'ok' | 'error'; text: string } | null;

/** /console/insurers: the insurers and products, each insurer's credentials, set/replace and "Test login". */
export function InsurersPage({ lang, t, session }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  const [insurers, setInsurers] = useState<ConsoleInsurer[] | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const isAdmin = session.user.role === 'admin';

  const load = useCallback(async () => {
    const result = await call(listInsurers);
    if (!result.ok) return setError(result.error.message);
    setInsurers(result.data.data);
    setProblems(result.data.problems);
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section className="automation">
      <h1>{s.insurersTitle}</h1>
      <p className="muted">{s.insurersIntro}</p>
      {!isAdmin && <p className="muted small">{s.adminOnlyCredentials}</p>}
      {error && <Alert>{error}</Alert>}
      {isAdmin && problems.length > 0 && <PackageProblems problems={problems} s={s} />}
      {insurers === null && !error && <Loading t={t} />}
      {insurers?.map((insurer) => (
        <InsurerCard key={insurer.code} insurer={insurer} s={s} lang={lang} isAdmin={isAdmin} onChanged={load} />
      ))}
    </section>
  );
}

/** The packages that did not load (administrators only): the other insurers work without them. */
function PackageProblems({ problems, s }: { problems: string[]; s: AutomationStrings }) {
  return (
    <div className="automation-problems" role="status">
      <p>{s.packagesNotLoaded}</p>
      <ul>
        {problems.map((problem) => (
          <li key={problem}>{problem}</li>
        ))}
      </ul>
      <p className="small">{s.packagesNotLoadedHint}</p>
    </div>
  );
}

/** Under the insurer's name: which adapter package prices for it, where it comes from, who signed it. */
function AdapterOrigin({ insurer, s }: { insurer: ConsoleInsurer; s: AutomationStrings }) {
  const { signed, source } = insurer;
  // A built-in insurer is vouched for by the application's own signature: "not signed" would mislead.
  const signature = signed ? (signed.trusted ? 'trusted' : 'untrusted') : source === 'built-in' ? null : 'unsigned';
  return (
    <p className="muted small automation-origin" data-source={source} data-signature={signature ?? undefined}>
      {`${s.adapterVersion(insurer.version)} · ${source === 'built-in' ? s.builtIn : s.installed}`}
      {signature !== null && (
        <>
          {' · '}
          <span className={`automation-signature-${signature}`}>{signed ? s.signedBy(signed.by, signed.trusted) : s.notSigned}</span>
        </>
      )}
    </p>
  );
}

function InsurerCard({
  insurer,
  s,
  lang,
  isAdmin,
  onChanged,
}: {
  insurer: ConsoleInsurer;
  s: AutomationStrings;
  lang: PageProps['lang'];
  isAdmin: boolean;
  onChanged: () => Promise<void>;
}) {
  const headingId = useId();
  const loginId = useId();
  const passwordId = useId();
  const hintId = useId();
  const [login, setLogin] = useState(insurer.credentials.login ?? '');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState<'save' | 'remove' | 'test' | null>(null);
  const [saveStatus, setSaveStatus] = useState<Status>(null);
  const [testStatus, setTestStatus] = useState<Status>(null);
  const { configured } = insurer.credentials;
  const j = JOB_STRINGS[lang];

  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy('save');
    setSaveStatus(null);
    const result = await call(setInsurerCredentials, { params: { code: insurer.code }, body: { login, password } });
    setBusy(null);
    if (!result.ok) return setSaveStatus({ kind: 'error', text: result.error.message });
    setPassword('');
    setTestStatus(null);
    setSaveStatus({ kind: 'ok', text: s.credentialsSaved });
    await onChanged();
  }

  async function remove() {
    setBusy('remove');
    setSaveStatus(null);
    const result = await call(deleteInsurerCredentials, { params: { code: insurer.code } });
    setBusy(null);
    if (!result.ok) return setSaveStatus({ kind: 'error', text: result.error.message });
    setLogin('');
    setTestStatus(null);
    setSaveStatus({ kind: 'ok', text: s.credentialsRemoved });
    await onChanged();
  }

  async function testLogin() {
    setBusy('test');
    setTestStatus({ kind: 'ok', text: s.testingLogin });
    const result = await call(testInsurerLogin, { params: { code: insurer.code } });
    setBusy(null);
    if (!result.ok) return setTestStatus({ kind: 'error', text: result.error.message });
    const r = result.data;
    setTestStatus(r.ok ? { kind: 'ok', text: s.loginOk(r.mfa_required) } : { kind: 'error', text: j.jobError(r.code, r.message) });
    // The insurer's status line shows the test from now on, after a reload too.
    await onChanged();
  }

  const test = insurer.last_login_test;
  const state = !configured ? 'missing' : test === null ? 'untested' : test.ok ? 'works' : 'refused';
  const stateText =
    test === null || !configured
      ? configured
        ? j.loginUntested(insurer.credentials.login ?? '')
        : s.notConfigured
      : test.ok
        ? j.loginWorks(insurer.credentials.login ?? '', formatDateTime(lang, test.tested_at))
        : j.loginRefused(formatDateTime(lang, test.tested_at));

  return (
    <section className="card automation-card" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {insurer.name} <span className="muted small automation-code">{insurer.code}</span>
      </h2>
      <AdapterOrigin insurer={insurer} s={s} />
      {insurer.portal_changed && (
        <p className="alert automation-portal-changed" role="status" data-portal-changed-step={insurer.portal_changed.step}>
          {s.portalChanged(insurer.portal_changed.step, formatDateTime(lang, insurer.portal_changed.at))}
        </p>
      )}
      <table className="automation-table">
        <caption className="automation-sr-only">{`${s.products} — ${insurer.name}`}</caption>
        <thead>
          <tr>
            <th scope="col">{s.product}</th>
            <th scope="col">Code</th>
            <th scope="col">Type</th>
            <th scope="col">{s.cost}</th>
          </tr>
        </thead>
        <tbody>
          {insurer.products.map((p) => (
            <tr key={p.code}>
              <td>{p.label}</td>
              <td className="automation-code">{p.code}</td>
              <td>{p.kind === 'quote' ? s.kindQuote : s.kindRoutine}</td>
              <td>{s.credits(p.cost_credits)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h3>{s.credentials}</h3>
      <p>
        <span className={`badge automation-login-${state}`} data-login-state={state}>
          {stateText}
        </span>
      </p>
      {state === 'refused' && test && !testStatus && <p className="alert">{j.jobError(test.code ?? '', test.message ?? '')}</p>}
      {insurer.demo_login && (
        <p className="muted small automation-demo-login">
          {s.demoLogin(insurer.demo_login.login, insurer.demo_login.password)}
          {isAdmin && (
            <>
              {' '}
              <button
                type="button"
                className="button"
                onClick={() => {
                  setLogin(insurer.demo_login?.login ?? '');
                  setPassword(insurer.demo_login?.password ?? '');
                }}
              >
                {s.useDemoLogin}
              </button>
            </>
          )}
        </p>
      )}

      {isAdmin && (
        <form className="automation-credentials" onSubmit={(e) => void save(e)} aria-label={`${s.credentials} — ${insurer.name}`}>
          <div className="field">
            <label htmlFor={loginId}>{s.login}</label>
            <input id={loginId} type="text" autoComplete="off" value={login} onChange={(e) => setLogin(e.target.value)} required />
          </div>
          <div className="field">
            <label htmlFor={passwordId}>{s.password}</label>
            <input
              id={passwordId}
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-describedby={hintId}
              required
            />
            <span id={hintId} className="muted small">
              {s.passwordHint(configured)}
            </span>
          </div>
          <div className="automation-actions">
            <button type="submit" className="button button-primary" disabled={busy !== null || login.trim() === '' || password === ''}>
              {configured ? s.replaceCredentials : s.saveCredentials}
            </button>
            {configured && (
              <button type="button" className="button" disabled={busy !== null} onClick={() => void remove()}>
                {s.removeCredentials}
              </button>
            )}
            {configured && insurer.can_test_login && (
              <button type="button" className="button" disabled={busy !== null} onClick={() => void testLogin()}>
                {s.testLogin}
              </button>
            )}
          </div>
          <div role="status" aria-live="polite" className="automation-status">
            {saveStatus && <p className={saveStatus.kind === 'ok' ? 'automation-ok' : 'alert'}>{saveStatus.text}</p>}
            {testStatus && <p className={testStatus.kind === 'ok' ? 'automation-ok' : 'alert'}>{testStatus.text}</p>}
          </div>
        </form>
      )}
    </section>
  );
}
