import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import type { ZodType } from 'zod';
import { api, type ApiResult } from '../../api.js';
import type { Lang } from '../../i18n.js';
import { ADMIN_STRINGS } from './strings.js';

export type Resource<T> = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; data: T };

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

/**
 * A modal confirmation (the native dialog: focus is trapped, Escape cancels). The confirm button
 * says what it does; nothing happens until it is pressed.
 */
export function ConfirmDialog(props: { title: string; text: string; confirmLabel: string; cancelLabel: string; busy?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const textId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog ref={ref} className="admin-dialog" aria-labelledby={titleId} aria-describedby={textId} onClose={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      <p id={textId}>{props.text}</p>
      <div className="actions">
        <button type="button" className="button" onClick={props.onCancel} autoFocus>
          {props.cancelLabel}
        </button>
        <button type="button" className="button button-danger" onClick={props.onConfirm} disabled={props.busy} aria-busy={props.busy}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A table that scrolls sideways on a narrow screen instead of overflowing the page. */
export function TableFrame({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="admin-table-frame" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
