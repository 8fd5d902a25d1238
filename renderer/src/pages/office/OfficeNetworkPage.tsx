import { useEffect, useState, type FormEvent } from 'react';
import { encode } from 'uqr';
import { changeLan, getLanStatus, liftLanBlock, listLanBlocks } from '../../../../shared/lan.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { DataTable } from '../../components/DataTable.js';
import { TextField } from '../../components/Field.js';
import { ResourceView } from '../../components/Resource.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, errorMessage, useResource } from '../admin/common.js';
import { formatDateTime } from '../admin/strings.js';
import { OFFICE_STRINGS } from './strings.js';

/** Plain HTTP's port: a browser sent there would not speak HTTPS. */
const HTTP_PORT = 80;

/** A QR code drawn from its modules (no markup injected): phones and tablets open the URL from it. */
function QrCode({ text, label }: { text: string; label: string }) {
  const { data, size } = encode(text, { ecc: 'M', border: 2 });
  const cells = data.flatMap((row, y) => row.map((dark, x) => (dark ? <rect key={`${x}-${y}`} x={x} y={y} width={1} height={1} /> : null)));
  return (
    <svg className="office-qr" viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shapeRendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <g fill="#000">{cells}</g>
    </svg>
  );
}

/**
 * /console/office-network (admins): LAN mode's state, the URLs to give colleagues (with a QR
 * code), the CA fingerprint to compare, the switch (only in a console opened on the machine
 * itself), and the addresses blocked after failed sign-ins.
 */
export function OfficeNetworkPage({ lang, t }: PageProps) {
  const s = OFFICE_STRINGS[lang];
  const [status, reload] = useResource(getLanStatus, lang);
  const [blocks, reloadBlocks] = useResource(listLanBlocks, lang);
  const [enabled, setEnabled] = useState(false);
  const [port, setPort] = useState('8443');
  const [names, setNames] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [portError, setPortError] = useState<string | null>(null);

  useEffect(() => {
    if (status.kind !== 'ready') return;
    setEnabled(status.data.enabled);
    setPort(String(status.data.port));
    setNames(status.data.names.join(', '));
  }, [status]);

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const n = Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) return setPortError(s.portInvalid);
    if (n === HTTP_PORT) return setPortError(s.portHttp);
    setPortError(null);
    // Turning sharing off cuts every colleague's console and assistant: asked first.
    if (!enabled && status.kind === 'ready' && status.data.enabled) return turningOff.ask(true);
    void send();
  }
  const turningOff = useConfirmation(
    () => send(),
    () => undefined,
  );

  async function send() {
    setBusy(true);
    setNotice(null);
    const extra = names
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    const result = await call(changeLan, { body: { enabled, port: Number(port), names: extra } });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    setError(null);
    setNotice(s.applied);
    await reload();
  }

  async function lift(address: string) {
    setBusy(true);
    const result = await call(liftLanBlock, { params: { address } });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    setNotice(s.lifted(address));
    await reloadBlocks();
  }

  if (status.kind === 'loading') return <Loading t={t} />;
  if (status.kind === 'error') return <Alert>{status.message}</Alert>;
  const lan = status.data;
  const consoleUrls = lan.urls.map((url) => `${url}/console/`);
  return (
    <div className="admin-page">
      <h1>{s.networkTitle}</h1>
      <p className="muted">{s.networkIntro}</p>
      <section className="card" aria-labelledby="lan-state-title">
        <h2 id="lan-state-title">{lan.enabled ? s.stateOn : s.stateOff}</h2>
        {!lan.allowed && <Alert>{s.forbidden}</Alert>}
        {lan.managed_by_policy && <p className="muted">{s.managed}</p>}
        {lan.enabled && consoleUrls.length > 0 && (
          <div className="office-share">
            <div>
              <h3>{s.urlsTitle}</h3>
              <ul className="office-urls">
                {consoleUrls.map((url) => (
                  <li key={url} className="admin-mono">
                    {url}
                  </li>
                ))}
              </ul>
              <p className="muted small">{s.urlsHint}</p>
            </div>
            <QrCode text={consoleUrls[0] ?? ''} label={s.qrLabel(consoleUrls[0] ?? '')} />
          </div>
        )}
        {lan.enabled && lan.ca_fingerprint_sha256 !== null && (
          <>
            <h3>{s.trustTitle}</h3>
            <p>{s.trustSteps.replace('{ca}', `${lan.urls[0] ?? ''}/ca.crt`)}</p>
            <p>
              <span className="muted small">{s.fingerprint}</span>
              <br />
              <code className="office-fingerprint">{lan.ca_fingerprint_sha256}</code>
            </p>
          </>
        )}
        {lan.certificate && (
          <p className="muted small">
            {lan.certificate.source === 'provided' ? `${s.providedCertificate} ` : ''}
            {s.certificate(
              [...lan.certificate.names, ...lan.certificate.addresses].join(', '),
              formatDateTime(lang, lan.certificate.not_after),
            )}
          </p>
        )}
        {lan.problems.length > 0 && (
          <Alert>
            {s.problems}: {lan.problems.join(' ')}
          </Alert>
        )}
      </section>

      <section className="card" aria-labelledby="lan-switch-title">
        <h2 id="lan-switch-title">{s.switchTitle}</h2>
        {lan.changeable_here && lan.allowed && !lan.managed_by_policy ? (
          <form className="form" onSubmit={apply} noValidate>
            <div className="admin-check">
              <input id="lan-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
              <label htmlFor="lan-enabled">{s.enabled}</label>
            </div>
            <div className="admin-grid admin-grid-3">
              <TextField id="lan-port" label={s.port} type="number" min={1} max={65535} value={port} onValue={setPort} error={portError} />
              <TextField
                id="lan-names"
                label={s.names}
                hint={s.namesHint}
                type="text"
                autoCapitalize="none"
                spellCheck={false}
                value={names}
                onValue={setNames}
              />
            </div>
            {notice !== null && <Notice>{notice}</Notice>}
            {error !== null && <Alert>{error}</Alert>}
            <div>
              <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
                {s.apply}
              </button>
            </div>
          </form>
        ) : (
          <p className="muted">{s.onlyHere}</p>
        )}
        <ConfirmStep
          confirmation={turningOff}
          title={() => s.turnOffTitle}
          text={s.turnOffText}
          confirmLabel={s.turnOff}
          cancelLabel={s.keepOn}
        />
      </section>

      <section className="card" aria-labelledby="lan-blocks-title">
        <h2 id="lan-blocks-title">{s.blocksTitle}</h2>
        <p className="muted">{s.blocksIntro}</p>
        <ResourceView resource={blocks} t={t}>
          {({ data }) => (
            <DataTable
              label={s.blocksTitle}
              columns={[{ header: s.address }, { header: s.failures }, { header: s.blockedUntil }, { header: '' }]}
              items={data}
              rowKey={(block) => block.address}
              empty={s.noBlocks}
              row={(block) => (
                <>
                  <th scope="row" className="admin-mono">
                    {block.address}
                  </th>
                  <td>{block.failures}</td>
                  <td>{formatDateTime(lang, block.blocked_until)}</td>
                  <td>
                    <button
                      type="button"
                      className="button button-small"
                      disabled={busy}
                      aria-label={`${s.lift}: ${block.address}`}
                      onClick={() => void lift(block.address)}
                    >
                      {s.lift}
                    </button>
                  </td>
                </>
              )}
            />
          )}
        </ResourceView>
      </section>
    </div>
  );
}
