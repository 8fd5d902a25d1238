import { useEffect, useState, type FormEvent } from 'react';
import { getSettings, updateSettings } from '../../../../shared/console-admin.js';
import { cabinetAddressSchema, oriasSchema, UNATTENDED_HUMAN_STEPS, type UnattendedHumanSteps } from '../../../../shared/tenancy.js';
import { call } from '../../api.js';
import { TextField } from '../../components/Field.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { Notice, errorMessage, useResource } from './common.js';
import { ADMIN_STRINGS } from './strings.js';

/** /console/settings (admins): LLM data sharing with what masking does, what integrations' jobs do with nobody there; the base URL and data dir, read-only. */
export function SettingsPage({ lang, t }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [settings, reload] = useResource(getSettings, lang);
  const [sharing, setSharing] = useState(false);
  const [unattended, setUnattended] = useState<UnattendedHumanSteps>('wait');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [orias, setOrias] = useState('');
  const [address, setAddress] = useState('');
  const [identityErrors, setIdentityErrors] = useState<{ orias?: string; address?: string }>({});
  const [identityNotice, setIdentityNotice] = useState<string | null>(null);
  const [identityError, setIdentityError] = useState<string | null>(null);

  useEffect(() => {
    if (settings.kind !== 'ready') return;
    setSharing(settings.data.llm_data_sharing);
    setUnattended(settings.data.unattended_human_steps);
    setOrias(settings.data.orias ?? '');
    setAddress(settings.data.address ?? '');
  }, [settings]);

  async function saveIdentity(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    // Checked here with the contract's own rules, so that each message stands beside its field.
    const errors = {
      ...(orias.trim() && !oriasSchema.safeParse(orias).success ? { orias: s.oriasInvalid } : {}),
      ...(address.trim() && !cabinetAddressSchema.safeParse(address).success ? { address: s.addressInvalid } : {}),
    };
    setIdentityErrors(errors);
    setIdentityNotice(null);
    if (Object.keys(errors).length > 0) return;
    setBusy(true);
    const result = await call(updateSettings, { body: { orias: orias.trim() || null, address: address.trim() || null } });
    setBusy(false);
    if (!result.ok) return setIdentityError(errorMessage(result, lang));
    setIdentityError(null);
    setIdentityNotice(s.saved);
    await reload();
  }

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setNotice(null);
    const result = await call(updateSettings, { body: { llm_data_sharing: sharing, unattended_human_steps: unattended } });
    setBusy(false);
    if (!result.ok) return setError(errorMessage(result, lang));
    setError(null);
    setNotice(s.saved);
    await reload();
  }

  if (settings.kind === 'loading') return <Loading t={t} />;
  if (settings.kind === 'error') return <Alert>{settings.message}</Alert>;
  const data = settings.data;
  return (
    <div className="admin-page">
      <h1>{s.settingsTitle}</h1>
      <section className="card" aria-labelledby="privacy-title">
        <h2 id="privacy-title">{s.privacy}</h2>
        <form className="form" onSubmit={(event) => void save(event)}>
          <div className="admin-check">
            <input
              id="llm-sharing"
              type="checkbox"
              checked={sharing}
              onChange={(e) => setSharing(e.target.checked)}
              aria-describedby="llm-sharing-off llm-sharing-on"
            />
            <label htmlFor="llm-sharing">{s.llmSharing}</label>
          </div>
          <p id="llm-sharing-off">{s.llmSharingOff}</p>
          <p id="llm-sharing-on" className="admin-warning">
            {s.llmSharingOn}
          </p>
          <fieldset className="admin-choices" aria-describedby="unattended-hint">
            <legend>
              <strong>{s.unattendedTitle}</strong> — {s.unattendedLabel}
            </legend>
            {UNATTENDED_HUMAN_STEPS.map((value) => (
              <div className="admin-check" key={value}>
                <input
                  id={`unattended-${value}`}
                  type="radio"
                  name="unattended"
                  value={value}
                  checked={unattended === value}
                  onChange={() => setUnattended(value)}
                />
                <label htmlFor={`unattended-${value}`}>{value === 'wait' ? s.unattendedWait : s.unattendedStop}</label>
              </div>
            ))}
            <p id="unattended-hint">{s.unattendedHint}</p>
          </fieldset>
          <SaveRow busy={busy} notice={notice} error={error} label={s.save} />
        </form>
      </section>

      <section className="card" aria-labelledby="identity-title">
        <h2 id="identity-title">{s.identity}</h2>
        <p>{s.identityHint}</p>
        <form className="form" onSubmit={(event) => void saveIdentity(event)} noValidate>
          <TextField
            id="orias"
            label={s.orias}
            hint={s.oriasHint}
            type="text"
            inputMode="numeric"
            autoComplete="off"
            value={orias}
            onValue={setOrias}
            error={identityErrors.orias}
          />
          <TextField
            id="address"
            label={s.address}
            type="text"
            autoComplete="street-address"
            value={address}
            onValue={setAddress}
            error={identityErrors.address}
          />
          <SaveRow busy={busy} notice={identityNotice} error={identityError} label={s.save} />
        </form>
      </section>

      <section className="card" aria-labelledby="service-title">
        <h2 id="service-title">{s.service}</h2>
        <div className="form">
          <TextField
            id="public-base-url"
            label={s.publicBaseUrl}
            hint={data.public_base_url_source === 'configured' ? s.publicBaseUrlConfigured : s.publicBaseUrlDefault}
            type="text"
            className="admin-mono"
            readOnly
            value={data.public_base_url}
          />
          <TextField
            id="data-dir"
            label={s.dataDir}
            hint={s.dataDirHint}
            type="text"
            className="admin-mono"
            readOnly
            value={data.data_dir}
          />
        </div>
      </section>
    </div>
  );
}

/** The end of a settings form: what its last save said, then its Save button. */
function SaveRow({ busy, notice, error, label }: { busy: boolean; notice: string | null; error: string | null; label: string }) {
  return (
    <>
      {notice !== null && <Notice>{notice}</Notice>}
      {error !== null && <Alert>{error}</Alert>}
      <div>
        <button type="submit" className="button button-primary" disabled={busy} aria-busy={busy}>
          {label}
        </button>
      </div>
    </>
  );
}
