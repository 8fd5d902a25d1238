import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { Endpoint } from '../../../../shared/endpoint.js';
import { call, type ApiFailure, type CallResult } from '../../api.js';
import type { Resource } from '../../components/Resource.js';
import type { Lang } from '../../i18n.js';
import { ADMIN_STRINGS } from './strings.js';

export type { Resource } from '../../components/Resource.js';

/** The message of a failed call, in the console's language when it is the role check. */
export function errorMessage(result: ApiFailure, lang: Lang): string {
  return result.error.error === 'admin_only' ? ADMIN_STRINGS[lang].adminOnly : result.error.message;
}

/** What a GET endpoint without parameters answers when it succeeds. */
type Answer<E extends Endpoint> = Extract<CallResult<E>, { ok: true }>['data'];

/** GETs a console resource (an endpoint without parameters) on mount; `reload` fetches it again (after a change). */
export function useResource<E extends Endpoint & { method: 'GET'; params?: undefined; query?: undefined }>(endpoint: E, lang: Lang): [Resource<Answer<E>>, () => Promise<void>] {
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
