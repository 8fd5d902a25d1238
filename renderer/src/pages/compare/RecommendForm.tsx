import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { createConsoleConseil } from '../../../../shared/console-comparaisons.js';
import { call } from '../../api.js';
import { Alert } from '../../Layout.js';
import type { Lang } from '../../i18n.js';
import { describeIssue } from '../../issues.js';
import type { PlacedOffer } from './offers.js';
import { COMPARE_STRINGS } from './strings.js';

/**
 * "Recommend this offer": the client's needs and the reason, then the advice document is made
 * (createConsoleConseil) and listed below the comparison, ready to download.
 */
export function RecommendForm({
  comparisonId,
  offer,
  insurerName,
  lang,
  onDone,
  onCancel,
}: {
  comparisonId: string;
  offer: PlacedOffer;
  insurerName: string;
  lang: Lang;
  onDone: () => void;
  onCancel: () => void;
}) {
  const s = COMPARE_STRINGS[lang];
  const needsId = useId();
  const reasonId = useId();
  const [besoins, setBesoins] = useState('');
  const [motif, setMotif] = useState('');
  const [issues, setIssues] = useState<Record<'besoins' | 'motif', string | null>>({ besoins: null, motif: null });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const title = s.recommendTitle(`${insurerName}, ${offer.offre.libelle}`);

  // Opened from an offer far above: the focus comes here, so that a keyboard or screen reader follows.
  useEffect(() => headingRef.current?.focus(), [offer]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const result = await call(createConsoleConseil, {
      params: { comparaison_id: comparisonId },
      body: { compagnie: offer.compagnie, formule: offer.offre.formule, besoins, motif },
    });
    setBusy(false);
    if (result.ok) return onDone();
    if (result.error.error === 'validation_error' && Array.isArray(result.error.details)) {
      const byField = { besoins: null as string | null, motif: null as string | null };
      for (const issue of result.error.details) {
        const field = String(issue.path).split('.')[1];
        if (field === 'besoins' || field === 'motif') byField[field] = describeIssue(issue, lang);
      }
      setIssues(byField);
    }
    setError(result.error.message);
  }

  const area = (id: string, field: 'besoins' | 'motif', label: string, hint: string, value: string, set: (v: string) => void) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={4}
        maxLength={field === 'besoins' ? 4000 : 2000}
        required
        aria-invalid={issues[field] !== null || undefined}
        aria-describedby={`${id}-hint${issues[field] !== null ? ` ${id}-error` : ''}`}
        value={value}
        onChange={(e) => (set(e.target.value), setIssues((i) => ({ ...i, [field]: null })))}
      />
      <span id={`${id}-hint`} className="muted small">
        {hint}
      </span>
      {issues[field] !== null && (
        <span id={`${id}-error`} className="automation-field-error">
          {issues[field]}
        </span>
      )}
    </div>
  );

  return (
    <form className="card compare-recommend" noValidate onSubmit={(e) => void submit(e)} aria-label={title}>
      <h2 ref={headingRef} tabIndex={-1}>
        {title}
      </h2>
      {area(needsId, 'besoins', s.needs, s.needsHint, besoins, setBesoins)}
      {area(reasonId, 'motif', s.reason, s.reasonHint, motif, setMotif)}
      {error && <Alert>{error}</Alert>}
      <div className="automation-actions">
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          {s.cancel}
        </button>
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? s.makingAdvice : s.makeAdvice}
        </button>
      </div>
    </form>
  );
}
