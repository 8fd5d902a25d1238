import { useId, useState } from 'react';
import {
  deleteConsoleWebhook,
  rotateConsoleWebhookSecret,
  ROTATION_OVERLAP_CHOICES,
  testConsoleWebhook,
  updateConsoleWebhook,
  type ConsoleWebhook,
} from '../../../../shared/console-webhooks.js';
import { DEFAULT_ROTATION_OVERLAP_SECONDS } from '../../../../shared/webhooks.js';
import { call, type ApiError } from '../../api.js';
import { STRINGS, type Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { DeliveryHistory } from './DeliveryHistory.js';
import { describeAttempt, errorText, formatTime, lastFailure, subscriptionHealth } from './format.js';
import { SecretReveal } from './SecretReveal.js';
import type { WebhookStrings } from './strings.js';
import { WebhookForm, type WebhookFormValue } from './WebhookForm.js';

interface SubscriptionCardProps {
  s: WebhookStrings;
  lang: Lang;
  webhook: ConsoleWebhook;
  /** Read the list again (after any change). */
  onChanged: () => void;
  onDeleted: (url: string) => void;
}

type Dialog = 'delete' | 'rotate' | null;

/** One subscription: what it receives, its state and last delivery, its actions and its history. */
export function SubscriptionCard({ s, lang, webhook, onChanged, onDeleted }: SubscriptionCardProps) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [overlap, setOverlap] = useState<number>(DEFAULT_ROTATION_OVERLAP_SECONDS);
  const [busy, setBusy] = useState<'test' | 'pause' | 'dialog' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [rotated, setRotated] = useState<{ secret: string; note: string } | null>(null);
  const [historyOpen, setHistoryOpen] = useState(false);
  const [historyKey, setHistoryKey] = useState(0);

  const params = { id: webhook.id };
  const status = subscriptionHealth(webhook);
  const last = webhook.last_delivery;
  const failure = lastFailure(webhook);
  const failureText = failure === null ? null : describeAttempt(lang, webhook.url, failure);

  function start(kind: 'test' | 'pause' | 'dialog'): boolean {
    if (busy !== null) return false;
    setBusy(kind);
    setError(null);
    setNotice('');
    return true;
  }

  async function save(value: WebhookFormValue): Promise<ApiError | null> {
    const result = await call(updateConsoleWebhook, {
      params,
      body: { url: value.url, description: value.description === '' ? null : value.description, events: value.events },
    });
    if (!result.ok) return result.error;
    setEditing(false);
    setNotice(s.saved_notice);
    onChanged();
    return null;
  }

  async function togglePause() {
    if (!start('pause')) return;
    const resume = !webhook.active;
    const result = await call(updateConsoleWebhook, { params, body: { active: resume } });
    setBusy(null);
    if (!result.ok) return setError(errorText(s, result.error));
    setNotice(resume ? s.resumed_notice : s.paused_notice);
    onChanged();
  }

  async function sendTest() {
    if (!start('test')) return;
    const result = await call(testConsoleWebhook, { params });
    setBusy(null);
    if (!result.ok) return setError(errorText(s, result.error));
    const attempt = result.data.delivery.attempts.at(-1);
    if (result.data.succeeded) setNotice(s.testSucceeded(attempt?.http_status ?? null, attempt?.duration_ms ?? 0));
    else setNotice(s.testFailed((attempt && describeAttempt(lang, webhook.url, attempt)) ?? STRINGS[lang].unexpectedError(result.status)));
    // Show the delivery it made, with its attempt.
    setHistoryOpen(true);
    setHistoryKey((k) => k + 1);
    onChanged();
  }

  async function rotate() {
    if (!start('dialog')) return;
    const result = await call(rotateConsoleWebhookSecret, { params, body: { overlap_seconds: overlap } });
    setBusy(null);
    setDialog(null);
    if (!result.ok) return setError(errorText(s, result.error));
    // secret null is an idempotent replay's answer: never here, as the console sends no Idempotency-Key.
    if (result.data.secret === null) return setError(STRINGS[lang].unexpectedError(result.status));
    setRotated({
      secret: result.data.secret,
      note: overlap === 0 ? s.rotatedNoOverlap : s.rotationUntil(formatTime(lang, result.data.previous_secret_expires_at)),
    });
    onChanged();
  }

  async function remove() {
    if (!start('dialog')) return;
    const result = await call(deleteConsoleWebhook, { params });
    setBusy(null);
    if (!result.ok) {
      setDialog(null);
      return setError(errorText(s, result.error));
    }
    onDeleted(webhook.url);
  }

  const events = webhook.events.includes('*') ? [s.everyEvent] : webhook.events;

  return (
    <section className="card wh-card" aria-labelledby={`${id}-title`}>
      <div className="wh-card-head">
        <h3 id={`${id}-title`} className="wh-url">
          {webhook.url}
        </h3>
        <span className={`badge wh-badge-${status}`}>{s[status]}</span>
      </div>
      {webhook.description && <p>{webhook.description}</p>}
      <dl className="wh-facts">
        <div>
          <dt>{s.events}</dt>
          <dd>
            <ul className="wh-chips">
              {events.map((e) => (
                <li key={e} className="wh-code">
                  {e}
                </li>
              ))}
            </ul>
          </dd>
        </div>
        <div>
          <dt>{s.lastDelivery}</dt>
          <dd>
            {last === null ? (
              <span className="muted">{s.noDeliveryYet}</span>
            ) : (
              <>
                <span className="wh-code">{last.event_type}</span> ·{' '}
                <span className={`badge wh-badge-${last.status}`}>{s.deliveryStatus[last.status]}</span> ·{' '}
                {formatTime(lang, last.created_at)}
              </>
            )}
          </dd>
        </div>
      </dl>
      {status === 'deactivated' && webhook.failing_since !== null && (
        <p className="wh-warning">{s.deactivatedBecause(formatTime(lang, webhook.failing_since))}</p>
      )}
      {status === 'failing' && failureText !== null && <p className="wh-failure">{s.lastFailed(failureText)}</p>}
      {webhook.failing_since !== null && webhook.active && (
        <p className="small muted">{s.failingSince(formatTime(lang, webhook.failing_since))}</p>
      )}
      {webhook.secret_rotation_ends_at !== null && (
        <p className="small muted">{s.rotationEndsAt(formatTime(lang, webhook.secret_rotation_ends_at))}</p>
      )}

      {error !== null && <Alert>{error}</Alert>}
      <p className="small wh-notice" role="status">
        {notice}
      </p>

      {rotated && (
        <SecretReveal s={s} label={s.newSecretLabel} secret={rotated.secret} note={rotated.note} onDone={() => setRotated(null)} />
      )}

      {editing ? (
        <section className="wh-edit" aria-labelledby={`${id}-edit`}>
          <h4 id={`${id}-edit`}>{s.editTitle}</h4>
          <WebhookForm
            s={s}
            lang={lang}
            initial={{ url: webhook.url, description: webhook.description ?? '', events: webhook.events }}
            submitLabel={s.save}
            busyLabel={s.save}
            onSubmit={save}
            onCancel={() => setEditing(false)}
          />
        </section>
      ) : (
        <div className="wh-actions" role="group" aria-label={s.subscriptionActions}>
          <button
            type="button"
            className="button button-primary"
            onClick={() => void sendTest()}
            disabled={busy !== null}
            aria-busy={busy === 'test'}
          >
            {busy === 'test' ? s.sending : s.sendTest}
          </button>
          <button type="button" className="button" onClick={() => setEditing(true)} disabled={busy !== null}>
            {s.edit}
          </button>
          <button type="button" className="button" onClick={() => void togglePause()} disabled={busy !== null} aria-busy={busy === 'pause'}>
            {webhook.active ? s.pause : s.resume}
          </button>
          <button type="button" className="button" onClick={() => setDialog('rotate')} disabled={busy !== null}>
            {s.rotate}
          </button>
          <button type="button" className="button wh-button-danger" onClick={() => setDialog('delete')} disabled={busy !== null}>
            {s.delete}
          </button>
          <button
            type="button"
            className="button"
            aria-expanded={historyOpen}
            aria-controls={`${id}-history`}
            onClick={() => setHistoryOpen(!historyOpen)}
          >
            {historyOpen ? s.hideHistory : s.showHistory}
          </button>
        </div>
      )}

      <div id={`${id}-history`}>
        {historyOpen && (
          <DeliveryHistory
            s={s}
            lang={lang}
            webhookId={webhook.id}
            webhookUrl={webhook.url}
            refreshKey={historyKey}
            onChanged={onChanged}
          />
        )}
      </div>

      {dialog === 'delete' && (
        <ConfirmDialog
          title={s.deleteTitle}
          confirmLabel={s.confirmDelete}
          cancelLabel={s.cancel}
          danger
          busy={busy === 'dialog'}
          onConfirm={() => void remove()}
          onCancel={() => setDialog(null)}
        >
          <p>{s.deleteText(webhook.url)}</p>
        </ConfirmDialog>
      )}
      {dialog === 'rotate' && (
        <ConfirmDialog
          title={s.rotateTitle}
          confirmLabel={s.confirmRotate}
          cancelLabel={s.cancel}
          busy={busy === 'dialog'}
          onConfirm={() => void rotate()}
          onCancel={() => setDialog(null)}
        >
          <p>{s.rotateText}</p>
          <div className="field">
            <label htmlFor={`${id}-overlap`}>{s.overlapLabel}</label>
            <select id={`${id}-overlap`} value={overlap} onChange={(e) => setOverlap(Number(e.target.value))}>
              {ROTATION_OVERLAP_CHOICES.map((seconds) => (
                <option key={seconds} value={seconds}>
                  {s.overlapChoice(seconds)}
                </option>
              ))}
            </select>
          </div>
        </ConfirmDialog>
      )}
    </section>
  );
}
