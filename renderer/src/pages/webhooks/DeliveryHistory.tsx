import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { listConsoleDeliveries, replayConsoleDelivery } from '../../../../shared/console-webhooks.js';
import type { Delivery } from '../../../../shared/webhooks.js';
import { call } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { describeAttempt, errorText, formatTime } from './format.js';
import type { WebhookStrings } from './strings.js';

/** After a replay, the history is read again a few times until the new delivery has its attempt. */
const FOLLOW_UP_MS = 700;
const FOLLOW_UPS = 6;

interface DeliveryHistoryProps {
  s: WebhookStrings;
  lang: Lang;
  webhookId: string;
  webhookUrl: string;
  /** Bumped by the card after a test: read the history again. */
  refreshKey: number;
  /** Something changed (a replay): the card's "last delivery" may too. */
  onChanged: () => void;
}

/** A subscription's deliveries, newest first, each with every attempt and a Replay button. */
export function DeliveryHistory({ s, lang, webhookId, webhookUrl, refreshKey, onChanged }: DeliveryHistoryProps) {
  const id = useId();
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const followUps = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const alive = useRef(true);
  const changed = useRef(onChanged);
  changed.current = onChanged;

  const load = useCallback(async () => {
    const result = await call(listConsoleDeliveries, { params: { id: webhookId } });
    if (!alive.current) return;
    if (!result.ok) return setError(errorText(s, result.error));
    setError(null);
    setDeliveries(result.data.data);
    setNextCursor(result.data.next_cursor);
  }, [s, webhookId]);

  useEffect(() => {
    alive.current = true;
    void load();
    return () => {
      alive.current = false;
      clearTimeout(timer.current);
    };
  }, [load, refreshKey]);

  // A replay is due at once and goes out within moments: read again until it has its first attempt.
  useEffect(() => {
    if (!deliveries || followUps.current <= 0) return;
    const waiting = deliveries.some((d) => d.status === 'pending' && d.attempt_count === 0 && d.replay_of !== null);
    if (!waiting) {
      followUps.current = 0;
      return;
    }
    followUps.current -= 1;
    timer.current = setTimeout(() => {
      void load().then(() => changed.current());
    }, FOLLOW_UP_MS);
    return () => clearTimeout(timer.current);
  }, [deliveries, load]);

  async function replay(delivery: Delivery) {
    if (busy) return;
    setBusy(true);
    setNotice('');
    const result = await call(replayConsoleDelivery, { params: { id: webhookId, delivery_id: delivery.id } });
    if (!alive.current) return;
    setBusy(false);
    if (!result.ok) return setError(errorText(s, result.error));
    setNotice(s.replayed);
    followUps.current = FOLLOW_UPS;
    await load();
    changed.current();
  }

  async function older() {
    if (!nextCursor || busy) return;
    setBusy(true);
    const result = await call(listConsoleDeliveries, { params: { id: webhookId }, query: { cursor: nextCursor } });
    if (!alive.current) return;
    setBusy(false);
    if (!result.ok) return setError(errorText(s, result.error));
    setDeliveries([...(deliveries ?? []), ...result.data.data]);
    setNextCursor(result.data.next_cursor);
  }

  return (
    <section className="wh-history" aria-labelledby={`${id}-title`}>
      <div className="wh-history-head">
        <h3 id={`${id}-title`}>
          {s.history}
          <span className="wh-sr-only"> — {webhookUrl}</span>
        </h3>
        <button
          type="button"
          className="button wh-button-small"
          onClick={() => void load()}
          aria-label={`${s.refresh} — ${s.historyOf(webhookUrl)}`}
        >
          {s.refresh}
        </button>
      </div>
      {error !== null && <Alert>{error}</Alert>}
      <p className="small muted" role="status">
        {notice}
      </p>
      {deliveries === null ? null : deliveries.length === 0 ? (
        <p className="muted">{s.noDeliveries}</p>
      ) : (
        <table className="wh-table">
          <caption className="wh-sr-only">{s.historyOf(webhookUrl)}</caption>
          <thead>
            <tr>
              <th scope="col">{s.colEvent}</th>
              <th scope="col">{s.colStatus}</th>
              <th scope="col">{s.colCreated}</th>
              <th scope="col">{s.colAttempts}</th>
              <th scope="col">
                <span className="wh-sr-only">{s.colActions}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => {
              const created = formatTime(lang, delivery.created_at);
              return (
                <tr key={delivery.id}>
                  <td data-label={s.colEvent}>
                    <span className="wh-code">{delivery.event_type}</span>
                    {delivery.replay_of !== null && <span className="badge wh-badge-muted">{s.replayOf}</span>}
                  </td>
                  <td data-label={s.colStatus}>
                    <span className={`badge wh-badge-${delivery.status}`}>{s.deliveryStatus[delivery.status]}</span>
                  </td>
                  <td data-label={s.colCreated}>{created}</td>
                  <td data-label={s.colAttempts}>
                    {delivery.attempts.length === 0 ? (
                      <span className="muted small">{s.noAttempt}</span>
                    ) : (
                      <ol className="wh-attempts" aria-label={s.attemptsOf(`${delivery.event_type} (${created})`)}>
                        {delivery.attempts.map((attempt, i) => {
                          const problem = describeAttempt(lang, webhookUrl, attempt);
                          return (
                            <li key={i}>
                              <span>{s.attemptLine(formatTime(lang, attempt.attempted_at), attempt.http_status, attempt.duration_ms)}</span>
                              {/* The service's own words stay at hand for whoever looks after the receiver. */}
                              {problem !== null && (
                                <span className="wh-attempt-error" title={attempt.error ?? undefined}>
                                  {problem}
                                </span>
                              )}
                            </li>
                          );
                        })}
                      </ol>
                    )}
                    {delivery.next_attempt_at !== null && delivery.attempts.length > 0 && (
                      <span className="muted small">{s.nextAttempt(formatTime(lang, delivery.next_attempt_at))}</span>
                    )}
                  </td>
                  <td>
                    <button
                      type="button"
                      className="button wh-button-small"
                      onClick={() => void replay(delivery)}
                      disabled={busy}
                      aria-label={s.replayLabel(delivery.event_type, created)}
                    >
                      {s.replay}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {nextCursor !== null && (
        <button type="button" className="button wh-button-small" onClick={() => void older()} disabled={busy}>
          {s.olderDeliveries}
        </button>
      )}
    </section>
  );
}
