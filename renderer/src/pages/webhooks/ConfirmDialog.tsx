import { useEffect, useId, useRef, type ReactNode } from 'react';

interface ConfirmDialogProps {
  title: string;
  confirmLabel: string;
  cancelLabel: string;
  danger?: boolean;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}

/** A modal <dialog> (focus trapped, Escape cancels) asking to confirm an action. */
export function ConfirmDialog({
  title,
  confirmLabel,
  cancelLabel,
  danger = false,
  busy,
  onConfirm,
  onCancel,
  children,
}: ConfirmDialogProps) {
  const id = useId();
  const ref = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      if (dialog?.open) dialog.close();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className="wh-dialog"
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onCancel();
      }}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!busy) onConfirm();
        }}
      >
        <h2 id={`${id}-title`}>{title}</h2>
        {children}
        <div className="actions">
          <button type="button" className="button" onClick={onCancel} disabled={busy}>
            {cancelLabel}
          </button>
          <button type="submit" className={danger ? 'button wh-button-danger' : 'button button-primary'} disabled={busy} aria-busy={busy}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
