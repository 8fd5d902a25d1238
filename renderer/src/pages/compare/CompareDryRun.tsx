import type { ConsoleComparisonDryRun } from '../../../../shared/console-comparaisons.js';
import type { CompareStrings } from './strings.js';

/** What a check of the comparison found: per insurer, ready (and its cost) or why not; the total against the wallet. */
export function CompareDryRun({
  result,
  names,
  s,
}: {
  result: ConsoleComparisonDryRun | null;
  names: readonly { compagnie: string; name: string }[];
  s: CompareStrings;
}) {
  if (!result) return <div role="status" aria-live="polite" />;
  const nameOf = (code: string) => names.find((n) => n.compagnie === code)?.name ?? code;
  const reason = (raison: string | null) =>
    raison !== null && raison in s.leftOut ? s.leftOut[raison as keyof CompareStrings['leftOut']] : (raison ?? '');
  return (
    <div role="status" aria-live="polite" className="automation-dryrun" aria-label={s.dryRunTitle}>
      <h2>{s.dryRunTitle}</h2>
      <ul className="compare-dryrun">
        {result.compagnies.map((c) => (
          <li key={c.compagnie}>
            <strong>{nameOf(c.compagnie)}</strong>
            {' · '}
            {c.would_run ? (
              <span className="automation-ok">{`${s.wouldRun} · ${s.cost(c.cost_credits)}`}</span>
            ) : (
              <span className="compare-not-run">{reason(c.raison)}</span>
            )}
          </li>
        ))}
      </ul>
      <p>{s.total(result.would_cost_credits, result.balance)}</p>
      {result.balance < result.would_cost_credits && (
        <p className="alert">
          {s.notEnough} <a href="/console/wallet">{s.walletLink}</a>
        </p>
      )}
    </div>
  );
}
