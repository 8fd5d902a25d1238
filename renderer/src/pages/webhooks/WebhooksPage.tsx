import { useCallback, useEffect, useRef, useState } from 'react';
import { createConsoleWebhook, listConsoleWebhooks, type ConsoleWebhook } from '../../../../shared/console-webhooks.js';
import { call, type ApiError } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { errorText } from './format.js';
import { SecretReveal } from './SecretReveal.js';
import { WEBHOOK_STRINGS } from './strings.js';
import { SubscriptionCard } from './SubscriptionCard.js';
import { WebhookForm, type WebhookFormValue } from './WebhookForm.js';

const EMPTY_FORM: WebhookFormValue = { url: '', description: '', events: [] };

/** /console/webhooks (admins): subscriptions, the secret once, tests, and each delivery with its attempts. */
export function WebhooksPage({ lang, t }: PageProps) {
  const s = WEBHOOK_STRINGS[lang];
  const [webhooks, setWebhooks] = useState<ConsoleWebhook[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  // The list comes first; the create form opens on demand.
  const [creating, setCreating] = useState(false);
  const alive = useRef(true);

  const load = useCallback(async () => {
    const result = await call(listConsoleWebhooks);
    if (!alive.current) return;
    if (!result.ok) return setError(errorText(s, result.error));
    setError(null);
    setWebhooks(result.data.data);
    setNextCursor(result.data.next_cursor);
  }, [s]);

  useEffect(() => {
    alive.current = true;
    void load();
    return () => {
      alive.current = false;
    };
  }, [load]);

  const reload = useCallback(() => void load(), [load]);

  async function more() {
    if (!nextCursor) return;
    const result = await call(listConsoleWebhooks, { query: { cursor: nextCursor } });
    if (!result.ok) return setError(errorText(s, result.error));
    setWebhooks([...(webhooks ?? []), ...result.data.data]);
    setNextCursor(result.data.next_cursor);
  }

  async function create(value: WebhookFormValue): Promise<ApiError | null> {
    setNotice('');
    const result = await call(createConsoleWebhook, {
      body: { url: value.url, events: value.events, ...(value.description !== '' ? { description: value.description } : {}) },
    });
    if (!result.ok) return result.error;
    // A 200 is an idempotent replay, without the secret: never here, as the console sends no Idempotency-Key.
    if (result.status !== 201) return { error: 'unexpected_response', message: t.unexpectedError(result.status) };
    setCreated({ url: result.data.url, secret: result.data.secret });
    await load();
    return null;
  }

  const onDeleted = useCallback(
    (url: string) => {
      setNotice(s.deleted(url));
      void load();
    },
    [load, s],
  );

  return (
    <div className="wh-page">
      <div className="wh-page-head">
        <h1>{s.title}</h1>
        {!creating && (
          <button
            type="button"
            className="button button-primary"
            aria-controls="wh-new"
            aria-expanded={false}
            onClick={() => setCreating(true)}
          >
            {s.newWebhook}
          </button>
        )}
      </div>
      <p className="muted wh-intro">{s.intro}</p>
      {error !== null && <Alert>{error}</Alert>}
      <p className="small wh-notice" role="status">
        {notice}
      </p>

      <div id="wh-new">
        {creating && (
          <section className="card wh-new" aria-labelledby="wh-new-title">
            <h2 id="wh-new-title">{s.newWebhook}</h2>
            {created ? (
              <section aria-labelledby="wh-secret-title">
                <h3 id="wh-secret-title">{s.createdTitle}</h3>
                <p>{s.createdFor(created.url)}</p>
                <SecretReveal
                  s={s}
                  label={s.secretLabel}
                  secret={created.secret}
                  onDone={() => {
                    setCreated(null);
                    setCreating(false);
                  }}
                />
              </section>
            ) : (
              <WebhookForm
                s={s}
                lang={lang}
                initial={EMPTY_FORM}
                submitLabel={s.create}
                busyLabel={s.creating}
                onSubmit={create}
                onCancel={() => setCreating(false)}
                resetOnSuccess
                focusFirst
              />
            )}
          </section>
        )}
      </div>

      <section className="wh-list" aria-labelledby="wh-list-title">
        <h2 id="wh-list-title">{s.subscriptions}</h2>
        {webhooks === null ? (
          error === null && <Loading t={t} />
        ) : webhooks.length === 0 ? (
          <p className="muted">{s.none}</p>
        ) : (
          webhooks.map((webhook) => (
            <SubscriptionCard key={webhook.id} s={s} lang={lang} webhook={webhook} onChanged={reload} onDeleted={onDeleted} />
          ))
        )}
        {nextCursor !== null && (
          <button type="button" className="button" onClick={() => void more()}>
            {s.moreWebhooks}
          </button>
        )}
      </section>
    </div>
  );
}
