import { useId, useRef, useState } from 'react';
import type { WebhookStrings } from './strings.js';

/** A secret shown this once: read-only, Copy, the warning, and a button to put it away. */
export function SecretReveal({
  s,
  label,
  secret,
  note,
  onDone,
}: {
  s: WebhookStrings;
  label: string;
  secret: string;
  note?: string;
  onDone: () => void;
}) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copyState, setCopyState] = useState<'idle' | 'copied' | 'failed'>('idle');

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopyState('copied');
    } catch {
      // No clipboard (permissions, an unfocused window): leave it selected for Ctrl+C.
      input.current?.focus();
      input.current?.select();
      setCopyState('failed');
    }
  }

  return (
    <div className="wh-secret">
      <p className="wh-warning" id={`${id}-warning`}>
        {s.secretWarning}
      </p>
      <div className="field">
        <label htmlFor={`${id}-input`}>{label}</label>
        <div className="wh-secret-row">
          <input
            ref={input}
            id={`${id}-input`}
            type="text"
            className="wh-code"
            readOnly
            value={secret}
            spellCheck={false}
            autoComplete="off"
            aria-describedby={`${id}-warning`}
            onFocus={(e) => e.target.select()}
          />
          <button type="button" className="button" onClick={() => void copy()}>
            {s.copy}
          </button>
        </div>
      </div>
      {note && <p className="small">{note}</p>}
      <p className="small muted" role="status">
        {copyState === 'copied' ? s.copied : copyState === 'failed' ? s.copyFailed : ''}
      </p>
      <div className="actions">
        <button type="button" className="button" onClick={onDone}>
          {s.secretStored}
        </button>
      </div>
    </div>
  );
}
