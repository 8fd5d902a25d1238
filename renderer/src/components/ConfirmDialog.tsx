import { useEffect, useId, useRef, useState } from 'react';

/**
 * A modal confirmation (the native dialog: focus is trapped, Escape cancels). The confirm button
 * says what it does; nothing happens until it is pressed.
 */
function ConfirmDialog(props: {
  title: string;
  text: string;
  confirmLabel: string;
  cancelLabel: string;
  busy?: boolean;
  tone?: 'danger' | 'primary';
  onConfirm: () => void;
  onCancel: () => void;
}) {
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
        <button
          type="button"
          className={props.tone === 'primary' ? 'button button-primary' : 'button button-danger'}
          onClick={props.onConfirm}
          disabled={props.busy}
          aria-busy={props.busy}
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export interface Confirmation<T> {
  /** The item awaiting the user's answer, if any. */
  pending: T | null;
  /** The action is under way. */
  busy: boolean;
  ask: (item: T) => void;
  cancel: () => void;
  confirm: (item: T) => Promise<void>;
}

/**
 * Something done to one item only once the user confirms it: `act` runs, the dialog closes, then
 * `settle` handles the outcome (a notice, an error, a reload).
 */
export function useConfirmation<T, R>(
  act: (item: T) => Promise<R>,
  settle: (item: T, outcome: R) => Promise<void> | void,
): Confirmation<T> {
  const [pending, setPending] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  async function confirm(item: T) {
    setBusy(true);
    const outcome = await act(item);
    setBusy(false);
    setPending(null);
    await settle(item, outcome);
  }
  return { pending, busy, ask: (item) => setPending(() => item), cancel: () => setPending(null), confirm };
}

/** The dialog of a confirmation, while an item awaits the answer. */
export function ConfirmStep<T>(props: {
  confirmation: Confirmation<T>;
  title: (item: T) => string;
  text: string | ((item: T) => string);
  confirmLabel: string;
  cancelLabel: string;
  busy?: boolean;
  /** danger (the default) for what cannot be undone; primary for what only costs something. */
  tone?: 'danger' | 'primary';
}) {
  const { confirmation, title, text, confirmLabel, cancelLabel, busy = confirmation.busy, tone } = props;
  const item = confirmation.pending;
  if (item === null) return null;
  return (
    <ConfirmDialog
      title={title(item)}
      text={typeof text === 'string' ? text : text(item)}
      tone={tone}
      confirmLabel={confirmLabel}
      cancelLabel={cancelLabel}
      busy={busy}
      onConfirm={() => void confirmation.confirm(item)}
      onCancel={confirmation.cancel}
    />
  );
}
