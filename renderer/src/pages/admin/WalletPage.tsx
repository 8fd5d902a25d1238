import { useState, type FormEvent } from 'react';
import { automationStatusSchema, walletSchema } from '../../../../shared/console-admin.js';
import { api } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, TableFrame, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS, formatDateTime } from './strings.js';

/** /console/wallet (every user reads; admins switch the robots): credits and ledger, quota, breakers, kill switch. */
export function WalletPage({ lang, t, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const isAdmin = session.user.role === 'admin';
  const [wallet] = useResource('/api/v1/console/wallet', walletSchema, lang);
  const [status, reloadStatus] = useResource('/api/v1/console/status', automationStatusSchema, lang);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function setRobots(event: FormEvent<HTMLFormElement>, disabled: boolean) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setNotice(null);
    const body = disabled && reason.trim() !== '' ? { disabled, reason: reason.trim() } : { disabled };
    const result = await api('/api/v1/console/robots/kill-switch', { method: 'PUT', body, schema: automationStatusSchema });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    setError(null);
    setReason('');
    setNotice(result.data.robots_enabled ? s.switchedOn : s.switchedOff);
    await reloadStatus();
  }

  return (
    <div className="admin-page">
      <h1>{s.walletTitle}</h1>
      <div className="admin-columns">
        <section className="card" aria-labelledby="credits-title">
          <h2 id="credits-title">{s.credits}</h2>
          {wallet.kind === 'loading' && <Loading t={t} />}
          {wallet.kind === 'error' && <Alert>{wallet.message}</Alert>}
          {wallet.kind === 'ready' && (
            <>
              <p className="admin-figure">
                <span className="muted">{s.balance} </span>
                <strong data-testid="wallet-balance">{s.creditsUnit(wallet.data.balance)}</strong>
              </p>
              <h3 className="admin-subtitle">{s.ledger}</h3>
              {wallet.data.ledger.length === 0 ? (
                <p className="muted">{s.noLedger}</p>
              ) : (
                <TableFrame label={s.ledger}>
                  <table className="admin-table">
                    <thead>
                      <tr>
                        <th scope="col">{s.date}</th>
                        <th scope="col">{s.kind}</th>
                        <th scope="col" className="admin-number">
                          {s.amount}
                        </th>
                        <th scope="col">{s.note}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {wallet.data.ledger.map((entry) => (
                        <tr key={entry.id}>
                          <td>{formatDateTime(entry.created_at, lang)}</td>
                          <td>{s.kinds[entry.kind] ?? entry.kind}</td>
                          <td className="admin-number">{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</td>
                          <td>{entry.note ?? (entry.job_id !== null ? <span className="admin-mono small">{entry.job_id}</span> : '')}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableFrame>
              )}
            </>
          )}
        </section>

        <section className="card" aria-labelledby="robots-title">
          <h2 id="robots-title">{s.robots}</h2>
          {status.kind === 'loading' && <Loading t={t} />}
          {status.kind === 'error' && <Alert>{status.message}</Alert>}
          {status.kind === 'ready' && (
            <>
              <p className={status.data.robots_enabled ? 'admin-state admin-state-ok' : 'admin-state admin-state-off'} data-testid="robots-state">
                {status.data.robots_enabled ? s.robotsOn : s.robotsOff}
              </p>
              {status.data.kill_switch && <p>{s.offSince(formatDateTime(status.data.kill_switch.since, lang), status.data.kill_switch.reason)}</p>}
              {notice !== null && <Notice>{notice}</Notice>}
              {error !== null && <Alert>{error}</Alert>}
              {isAdmin && (
                <form className="form" onSubmit={(event) => void setRobots(event, status.data.robots_enabled)}>
                  {status.data.robots_enabled && (
                    <div className="field">
                      <label htmlFor="kill-reason">{s.reason}</label>
                      <input id="kill-reason" type="text" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
                    </div>
                  )}
                  <p className="muted small">{s.killSwitchScope}</p>
                  <div>
                    <button type="submit" className={status.data.robots_enabled ? 'button button-danger' : 'button button-primary'} disabled={busy} aria-busy={busy}>
                      {status.data.robots_enabled ? s.switchOff : s.switchOn}
                    </button>
                  </div>
                </form>
              )}

              <h3 className="admin-subtitle">{s.quota}</h3>
              <p>{s.quotaLeft(status.data.quota.remaining, status.data.quota.limit)}</p>
              {status.data.quota.reset_at !== null && <p className="muted small">{s.quotaReset(formatDateTime(status.data.quota.reset_at, lang))}</p>}
              <p className="muted small">{s.workers(status.data.workers.running, status.data.workers.concurrency)}</p>

              <h3 className="admin-subtitle">{s.breakers}</h3>
              {status.data.breakers.length === 0 ? (
                <p className="muted">{s.noBreakers}</p>
              ) : (
                <TableFrame label={s.breakers}>
                  <table className="admin-table">
                    <thead>
                      <tr>
                        <th scope="col">{s.insurer}</th>
                        <th scope="col">{s.state}</th>
                        <th scope="col" className="admin-number">
                          {s.failures}
                        </th>
                        <th scope="col">{s.openUntil}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {status.data.breakers.map((b) => (
                        <tr key={b.compagnie}>
                          <th scope="row">{b.compagnie}</th>
                          <td>{s.breakerStates[b.state] ?? b.state}</td>
                          <td className="admin-number">{b.consecutive_failures}</td>
                          <td>{b.open_until === null ? '—' : formatDateTime(b.open_until, lang)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableFrame>
              )}
            </>
          )}
        </section>
      </div>
    </div>
  );
}
