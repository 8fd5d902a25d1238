import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { ZodType } from 'zod';
import { api, type ApiResult } from '../../api.js';
import type { Resource } from '../../components/Resource.js';
import type { Lang } from '../../i18n.js';
import { ADMIN_STRINGS } from './strings.js';

export type { Resource } from '../../components/Resource.js';

/** The message of a failed call, in the console's language when it is the role check. */
export function errorMessage(result: Extract<ApiResult<unknown>, { ok: false }>, lang: Lang): string {
  return result.error.error === 'admin_only' ? ADMIN_STRINGS[lang].adminOnly : result.error.message;
}

/** GETs a console resource on mount; `reload` fetches it again (after a change). */
export function useResource<T>(path: string, schema: ZodType<T>, lang: Lang): [Resource<T>, () => Promise<void>] {
  const [state, setState] = useState<Resource<T>>({ kind: 'loading' });
  const reload = useCallback(async () => {
    const result = await api(path, { schema });
    setState(result.ok ? { kind: 'ready', data: result.data } : { kind: 'error', message: errorMessage(result, lang) });
  }, [path, schema, lang]);
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
