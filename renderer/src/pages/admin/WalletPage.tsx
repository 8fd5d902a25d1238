import { useState, type FormEvent } from 'react';
import { getConsoleStatus, getConsoleWallet, setRobotPause } from '../../../../shared/console-admin.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { DataTable } from '../../components/DataTable.js';
import { TextField } from '../../components/Field.js';
import { ResourceView } from '../../components/Resource.js';
import { Alert } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { CreditGrant } from './CreditGrant.js';
import { Ledger } from './Ledger.js';
import { announceRobotPause } from './RobotsPaused.js';
import { Notice, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** /console/wallet (every user reads; admins add credits and pause their cabinet's robots): credits and ledger, quota, breakers, robot switches. */
export function WalletPage({ lang, t, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const isAdmin = session.user.role === 'admin';
  const [wallet, reloadWallet] = useResource(getConsoleWallet, lang);
  const [status, reloadStatus] = useResource(getConsoleStatus, lang);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function applyPause(paused: boolean) {
    setBusy(true);
    setNotice(null);
    const body = paused && reason.trim() !== '' ? { paused, reason: reason.trim() } : { paused };
    const result = await call(setRobotPause, { body });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    setError(null);
    setReason('');
    setNotice(result.data.cabinet_pause === null ? s.resumed : s.paused);
    announceRobotPause();
    await reloadStatus();
  }
  // Pausing stops the cabinet's pricing: asked first. Resuming is not.
  const pausing = useConfirmation(
    async () => applyPause(true),
    () => undefined,
  );

  function setPaused(event: FormEvent<HTMLFormElement>, paused: boolean) {
    event.preventDefault();
    if (busy) return;
    if (paused) pausing.ask(true);
    else void applyPause(false);
  }

  return (
    <div className="admin-page">
      <h1>{s.walletTitle}</h1>
      <div className="admin-columns">
        <section className="card" aria-labelledby="credits-title">
          <h2 id="credits-title">{s.credits}</h2>
          <ResourceView resource={wallet} t={t}>
            {(data) => (
              <>
                <p className="admin-figure">
                  <span className="muted">{s.balance} </span>
                  <strong data-testid="wallet-balance">{s.creditsUnit(data.balance)}</strong>
                </p>
                <h3 className="admin-subtitle">{s.ledger}</h3>
                <Ledger entries={data.ledger} lang={lang} />
                {isAdmin ? (
                  <CreditGrant lang={lang} synced={data.synced} onGranted={reloadWallet} />
                ) : (
                  <p className="muted small">{s.grantAdminsOnly}</p>
                )}
              </>
            )}
          </ResourceView>
        </section>

        <section className="card" aria-labelledby="robots-title">
          <h2 id="robots-title">{s.robots}</h2>
          <ResourceView resource={status} t={t}>
            {(robots) => (
              <>
                <p
                  className={robots.robots_enabled ? 'admin-state admin-state-ok' : 'admin-state admin-state-off'}
                  data-testid="robots-state"
                >
                  {robots.kill_switch ? s.robotsOffInstall : robots.cabinet_pause ? s.robotsPaused : s.robotsOn}
                </p>
                {robots.kill_switch && <p>{s.offSince(formatDateTime(lang, robots.kill_switch.since), robots.kill_switch.reason)}</p>}
                {robots.cabinet_pause && <p>{s.offSince(formatDateTime(lang, robots.cabinet_pause.since), robots.cabinet_pause.reason)}</p>}
                {notice !== null && <Notice>{notice}</Notice>}
                {error !== null && <Alert>{error}</Alert>}
                {isAdmin && (
                  <form className="form" onSubmit={(event) => setPaused(event, robots.cabinet_pause === null)}>
                    {robots.cabinet_pause === null && (
                      <TextField id="pause-reason" label={s.reason} type="text" maxLength={500} value={reason} onValue={setReason} />
                    )}
                    <p className="muted small">{s.pauseScope}</p>
                    <div>
                      <button
                        type="submit"
                        className={robots.cabinet_pause === null ? 'button button-danger' : 'button button-primary'}
                        disabled={busy}
                        aria-busy={busy}
                      >
                        {robots.cabinet_pause === null ? s.pause : s.resume}
                      </button>
                    </div>
                  </form>
                )}

                <h3 className="admin-subtitle">{s.quota}</h3>
                <p>{s.quotaLeft(robots.quota.remaining, robots.quota.limit)}</p>
                {robots.quota.reset_at !== null && (
                  <p className="muted small">{s.quotaReset(formatDateTime(lang, robots.quota.reset_at))}</p>
                )}
                <p className="muted small">{s.workers(robots.workers.running, robots.workers.concurrency)}</p>

                <h3 className="admin-subtitle">{s.breakers}</h3>
                <DataTable
                  label={s.breakers}
                  empty={s.noBreakers}
                  columns={[
                    { header: s.insurer },
                    { header: s.state },
                    { header: s.failures, className: 'admin-number' },
                    { header: s.openUntil },
                  ]}
                  items={robots.breakers}
                  rowKey={(b) => b.compagnie}
                  row={(b) => (
                    <>
                      <th scope="row">{b.compagnie}</th>
                      <td>{s.breakerStates[b.state]}</td>
                      <td className="admin-number">{b.consecutive_failures}</td>
                      <td>{b.open_until === null ? '—' : formatDateTime(lang, b.open_until)}</td>
                    </>
                  )}
                />
              </>
            )}
          </ResourceView>
        </section>
      </div>
      <ConfirmStep
        confirmation={pausing}
        title={() => s.pauseConfirmTitle}
        text={s.pauseConfirmText}
        confirmLabel={s.pause}
        cancelLabel={s.cancel}
      />
    </div>
  );
}
