import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A list of changes on the Sync page, its columns named by `columns`. The frame scrolls sideways on
 * a narrow screen; focusable so that a keyboard can scroll it.
 */
export function ChangesTable({
  title,
  testId,
  columns,
  children,
}: {
  title: string;
  testId: string;
  columns: string[];
  children: ReactNode;
}) {
  return (
    <div className="admin-table-frame" role="region" aria-label={title} tabIndex={0}>
      <table className="admin-table" data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A change's two actions: one that tries it (busy while it runs), and Discard; both off while any action runs. */
export function RowActions(props: {
  working: boolean;
  busy: boolean;
  label: string;
  ariaLabel: string;
  onAct: () => void;
  discardLabel: string;
  discardAriaLabel: string;
  onDiscard: () => void;
}) {
  return (
    <div className="sync-row-actions">
      <button
        type="button"
        className="button button-small"
        disabled={props.working}
        aria-busy={props.busy}
        aria-label={props.ariaLabel}
        onClick={props.onAct}
      >
        {props.label}
      </button>
      <button
        type="button"
        className="button button-small button-danger-quiet"
        disabled={props.working}
        aria-label={props.discardAriaLabel}
        onClick={props.onDiscard}
      >
        {props.discardLabel}
      </button>
    </div>
  );
}

/** What an action came to: a status line or an error. `id` tells two alike apart. */
export interface Said {
  id: number;
  tone: 'notice' | 'error';
  text: string;
}

/** A status line or an error about a change, focused when it appears: the row's button may have gone with the row. */
export function FeedbackLine({ feedback, testId = 'sync-set-aside-feedback' }: { feedback: Said; testId?: string }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => ref.current?.focus(), [feedback.id]);
  const error = feedback.tone === 'error';
  return (
    <p ref={ref} tabIndex={-1} className={error ? 'alert' : 'sync-notice'} role={error ? 'alert' : 'status'} data-testid={testId}>
      {feedback.text}
    </p>
  );
}
