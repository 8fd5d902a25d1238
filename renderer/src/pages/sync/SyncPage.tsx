import { useState, type FormEvent } from 'react';
import { connectSync, disconnectSync, pauseSync, resumeSync, type SyncStatus } from '../../../../shared/console-sync.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { TextField, hintId } from '../../components/Field.js';
import type { Lang } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { absoluteTime, connectProblem, problemOf, relativeTime, type ConnectField } from './format.js';
import { RefusedByHub } from './RefusedByHub.js';
import { SetAside } from './SetAside.js';
import { SYNC_STRINGS, type SyncStrings } from './strings.js';
import { syncFeed, useSyncStatus } from './useSyncStatus.js';

/** The page refreshes the status this often while it is open. */
const PAGE_POLL_MS = 5000;

const STATE_TONE = { idle: 'ok', syncing: 'busy', offline: 'warning', error: 'danger' } as const;

/** A polite status line (what just happened), read out by screen readers. */
function Notice({ text }: { text: string }) {
  return (
    <p className="sync-notice" role="status">
      {text}
    </p>
  );
}

/**
 * /console/sync (administrators; a broker who opens it reads the status, without the controls):
 * with no hub, the connect form; once linked, the state in words (a catch-up after a restored
 * backup included), the hub and this device, the changes waiting, the last exchanges and problem,
 * the changes set aside with what to do about each, pause/resume and disconnect. Refreshed every
 * few seconds while open.
 */
export function SyncPage({ lang, t, session }: PageProps) {
  const s = SYNC_STRINGS[lang];
  const isAdmin = session.user.role === 'admin';
  const { status, failure } = useSyncStatus(PAGE_POLL_MS);
  const [notice, setNotice] = useState<string | null>(null);

  let body;
  if (status === null) body = failure ? <Alert>{failure.error.message}</Alert> : <Loading t={t} />;
  else if (status.state === 'off') {
    body = isAdmin ? (
      <ConnectForm
        s={s}
        cabinetId={session.cabinet.id}
        onConnected={(connected) => {
          setNotice(s.connected);
          syncFeed.publish(connected);
        }}
        onStart={() => setNotice(null)}
      />
    ) : (
      <section className="card" aria-labelledby="sync-off-title">
        <h2 id="sync-off-title">{s.statusTitle}</h2>
        <p>{s.offForBroker}</p>
      </section>
    );
  } else body = <LinkedStatus status={status} s={s} lang={lang} isAdmin={isAdmin} onNotice={setNotice} />;

  return (
    <div className="sync-page">
      <h1>{s.title}</h1>
      <p className="sync-intro">{s.intro}</p>
      {notice !== null && <Notice text={notice} />}
      {status !== null && failure !== null && <Alert>{s.refreshFailed(failure.error.message)}</Alert>}
      {body}
    </div>
  );
}

type Problem = { field: ConnectField | null; text: string; detail: string | null };

const PROBLEM_ID = 'sync-connect-problem';

/** A problem of the form, beside the field it is about (or above the button). */
function ProblemText({ problem }: { problem: Problem }) {
  return (
    <p id={PROBLEM_ID} className="alert" role="alert">
      {problem.text}
      {problem.detail !== null && <span className="sync-problem-detail small">{problem.detail}</span>}
    </p>
  );
}

function ConnectForm({
  s,
  cabinetId,
  onConnected,
  onStart,
}: {
  s: SyncStrings;
  cabinetId: string;
  onConnected: (status: SyncStatus) => void;
  onStart: () => void;
}) {
  const [hubUrl, setHubUrl] = useState('');
  const [code, setCode] = useState('');
  const [deviceName, setDeviceName] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  async function connect(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    onStart();
    const body = { hub_url: hubUrl.trim(), code: code.trim(), ...(deviceName.trim() !== '' ? { device_name: deviceName.trim() } : {}) };
    if (body.hub_url === '') return setProblem({ field: 'hub_url', text: s.hubUrlMissing, detail: null });
    if (body.code === '') return setProblem({ field: 'code', text: s.codeMissing, detail: null });
    setBusy(true);
    setProblem(null);
    const result = await call(connectSync, { body });
    setBusy(false);
    if (!result.ok) return setProblem(connectProblem(result.error, s));
    onConnected(result.data);
  }

  /** The attributes that tie a field to the problem shown beside it. */
  const about = (field: ConnectField) =>
    problem?.field === field ? { 'aria-invalid': true, 'aria-describedby': `${hintId(`sync-${field}`)} ${PROBLEM_ID}` } : {};
  const beside = (field: ConnectField) => (problem !== null && problem.field === field ? <ProblemText problem={problem} /> : null);

  return (
    <section className="card" aria-labelledby="sync-connect-title">
      <h2 id="sync-connect-title">{s.connectTitle}</h2>
      <p className="muted">{s.connectIntro}</p>
      <dl className="sync-facts">
        <dt>{s.cabinetId}</dt>
        <dd className="sync-mono" data-testid="sync-cabinet-id">
          {cabinetId}
        </dd>
      </dl>
      <form className="form" onSubmit={(event) => void connect(event)} noValidate>
        <TextField
          id="sync-hub_url"
          label={s.hubUrl}
          hint={s.hubUrlHint}
          type="text"
          inputMode="url"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={2000}
          placeholder="https://"
          value={hubUrl}
          onValue={setHubUrl}
          {...about('hub_url')}
        />
        {beside('hub_url')}
        <TextField
          id="sync-code"
          label={s.code}
          hint={s.codeHint}
          type="text"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={64}
          value={code}
          onValue={setCode}
          {...about('code')}
        />
        {beside('code')}
        <TextField
          id="sync-device_name"
          label={s.deviceName}
          hint={s.deviceNameHint}
          type="text"
          maxLength={200}
          value={deviceName}
          onValue={setDeviceName}
          {...about('device_name')}
        />
        {beside('device_name')}
        {problem !== null && problem.field === null && <ProblemText problem={problem} />}
        <div>
          <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
            {busy ? s.connecting : s.connect}
          </button>
        </div>
      </form>
    </section>
  );
}

/** A moment as "3 minutes ago (24 Nov 2026, 10:42:05)", or "Never". */
function When({ iso, now, lang, never }: { iso: string | null; now: number; lang: Lang; never: string }) {
  if (iso === null) return <>{never}</>;
  const absolute = absoluteTime(iso, lang);
  return (
    <time dateTime={iso} title={absolute}>
      {relativeTime(iso, now, lang)} <span className="muted">({absolute})</span>
    </time>
  );
}

function LinkedStatus(props: {
  status: SyncStatus;
  s: SyncStrings;
  lang: Lang;
  isAdmin: boolean;
  onNotice: (text: string | null) => void;
}) {
  const { status, s, lang, isAdmin, onNotice } = props;
  const problem = problemOf(status, s, lang);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const disconnection = useConfirmation(
    (_: SyncStatus) => call(disconnectSync),
    (_, result) => {
      if (!result.ok) return setError(result.error.message);
      setError(null);
      onNotice(result.data.left_hub ? s.disconnectedNotice : s.disconnectedHubNotTold(result.data.left_device_id));
      syncFeed.publish(result.data);
    },
  );
  const working = busy || disconnection.busy;
  const state = status.state === 'off' ? 'idle' : status.state;

  async function setPaused(paused: boolean) {
    if (working) return;
    setBusy(true);
    onNotice(null);
    const result = await call(paused ? pauseSync : resumeSync);
    setBusy(false);
    if (!result.ok) return setError(result.error.message);
    setError(null);
    onNotice(paused ? s.pausedNotice : s.resumedNotice);
    syncFeed.publish(result.data);
  }

  const now = Date.now();
  return (
    <section className="card" aria-labelledby="sync-status-title">
      <div className="sync-card-head">
        <h2 id="sync-status-title">{s.statusTitle}</h2>
        <span className={`badge sync-tone-${STATE_TONE[state]}`} data-testid="sync-state">
          {s.stateBadges[state]}
        </span>
        {status.paused && (
          <span className="badge sync-tone-warning" data-testid="sync-paused">
            {s.pausedBadge}
          </span>
        )}
        {status.resyncing && <span className="badge sync-tone-busy">{s.resyncingBadge}</span>}
      </div>
      <p>{status.paused ? s.pausedSentence : s.stateSentences[state]}</p>
      {status.resyncing && <p data-testid="sync-resyncing">{s.resyncingSentence}</p>}
      {problem !== null && (
        <p className="sync-problem" data-testid="sync-last-error">
          <strong>{s.lastProblem}</strong> {problem}
        </p>
      )}
      <dl className="sync-facts">
        <dt>{s.hub}</dt>
        <dd className="sync-mono">{status.hub_url}</dd>
        <dt>{s.device}</dt>
        <dd>
          {status.device_name} <span className="muted small sync-mono">{status.device_id}</span>
        </dd>
        <dt>{s.pending}</dt>
        <dd data-testid="sync-pending">{s.pendingCount(status.pending_changes)}</dd>
        <dt>{s.lastPush}</dt>
        <dd>
          <When iso={status.last_push_at} now={now} lang={lang} never={s.never} />
        </dd>
        <dt>{s.lastPull}</dt>
        <dd>
          <When iso={status.last_pull_at} now={now} lang={lang} never={s.never} />
        </dd>
        <dt>{s.setAside}</dt>
        <dd data-testid="sync-set-aside">{s.setAsideCount(status.set_aside_changes)}</dd>
        <dt>{s.refusedByHub}</dt>
        <dd data-testid="sync-refused">{s.refusedCount(status.refused_by_hub)}</dd>
      </dl>
      {/* Brokers see the count only: the list is for administrators (a change's fields may hold personal data). */}
      {isAdmin && <SetAside s={s} lang={lang} count={status.set_aside_changes} />}
      {isAdmin && <RefusedByHub s={s} lang={lang} count={status.refused_by_hub} />}
      {error !== null && <Alert>{error}</Alert>}
      {isAdmin && (
        <div className="actions">
          <button type="button" className="button" disabled={working} aria-busy={busy} onClick={() => void setPaused(!status.paused)}>
            {status.paused ? s.resume : s.pause}
          </button>
          <button type="button" className="button button-danger" disabled={working} onClick={() => disconnection.ask(status)}>
            {s.disconnect}
          </button>
        </div>
      )}
      <ConfirmStep
        confirmation={disconnection}
        title={() => s.disconnectTitle}
        text={s.disconnectText}
        confirmLabel={s.disconnect}
        cancelLabel={s.cancel}
      />
    </section>
  );
}
