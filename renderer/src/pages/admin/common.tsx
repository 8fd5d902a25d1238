import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import type { Endpoint } from '../../../../shared/endpoint.js';
import { call, type ApiFailure, type CallResult } from '../../api.js';
import { Field } from '../../components/Field.js';
import type { Resource } from '../../components/Resource.js';
import type { Lang } from '../../i18n.js';
import { Alert } from '../../Layout.js';
import { ADMIN_STRINGS } from './strings.js';

export type { Resource } from '../../components/Resource.js';

/** The message of a failed call, in the console's language for the codes of this slice's rules. */
export function errorMessage(result: ApiFailure, lang: Lang): string {
  const s = ADMIN_STRINGS[lang];
  const own: Record<string, string> = {
    admin_only: s.adminOnly,
    wrong_current_password: s.wrongCurrentPassword,
    own_account: s.ownAccount,
    last_admin: s.lastActiveAdmin,
    password_change_required: s.passwordChangeRequired,
  };
  return own[result.error.error] ?? result.error.message;
}

/** What a GET endpoint without parameters answers when it succeeds. */
type Answer<E extends Endpoint> = Extract<CallResult<E>, { ok: true }>['data'];

/** GETs a console resource (an endpoint without parameters) on mount; `reload` fetches it again (after a change). */
export function useResource<E extends Endpoint & { method: 'GET'; params?: undefined; query?: undefined }>(
  endpoint: E,
  lang: Lang,
): [Resource<Answer<E>>, () => Promise<void>] {
  const [state, setState] = useState<Resource<Answer<E>>>({ kind: 'loading' });
  const reload = useCallback(async () => {
    const result = await (call as (endpoint: Endpoint) => Promise<CallResult<E>>)(endpoint);
    setState(result.ok ? { kind: 'ready', data: result.data } : { kind: 'error', message: errorMessage(result, lang) });
  }, [endpoint, lang]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return [state, reload];
}

/** A polite status line (what just happened), read out by screen readers. */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="admin-notice" role="status">
      {children}
    </p>
  );
}

/**
 * A secret shown this once (a new API key, a temporary password): the value, read-only, with a copy
 * button; where the browser refuses the clipboard (an insecure origin on the LAN) the value is
 * selected for a manual copy.
 */
export function ShownOnce(props: {
  id: string;
  title: string;
  label: string;
  warning: string;
  value: string;
  doneLabel: string;
  lang: Lang;
  onDone: () => void;
}) {
  const { id, title, label, warning, value, doneLabel, lang, onDone } = props;
  const s = ADMIN_STRINGS[lang];
  const field = useRef<HTMLInputElement>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopyState('copied');
    } catch {
      field.current?.select();
      setCopyState('failed');
    }
  }
  return (
    <section className="card admin-secret" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p className="admin-warning" id={`${id}-warning`}>
        {warning}
      </p>
      <Field id={id} label={label}>
        <div className="admin-inline">
          <input
            id={id}
            ref={field}
            type="text"
            className="admin-mono"
            readOnly
            value={value}
            aria-describedby={`${id}-warning`}
            onFocus={(e) => e.target.select()}
          />
          <button type="button" className="button button-primary" onClick={() => void copy()}>
            {s.copy}
          </button>
        </div>
      </Field>
      {copyState === 'copied' && <Notice>{s.copied}</Notice>}
      {copyState === 'failed' && <Alert>{s.copyFailed}</Alert>}
      <div className="actions">
        <button type="button" className="button" onClick={onDone}>
          {doneLabel}
        </button>
      </div>
    </section>
  );
}
