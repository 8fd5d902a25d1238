import { useEffect, useState } from 'react';
import type { Comparison, Conseil } from '../../../../shared/comparaisons.js';
import { getConsoleConseilPdf, listConsoleComparisons, listConsoleConseils } from '../../../../shared/console-comparaisons.js';
import { listInsurers } from '../../../../shared/console-insurers.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { formatDateTime } from '../automation/strings.js';
import { COMPARE_STRINGS, comparisonPath } from './strings.js';

type Loaded =
  | { kind: 'loading' }
  | { kind: 'error'; message: string }
  | { kind: 'ready'; comparisons: Comparison[]; advices: Conseil[]; names: ReadonlyMap<string, string> };

/** On a client's page: their comparisons (each linked to its page) and the advice documents made for them. */
export function ClientComparisons({ clientId, lang, t }: Pick<PageProps, 'lang' | 't'> & { clientId: string }) {
  const s = COMPARE_STRINGS[lang];
  const [state, setState] = useState<Loaded>({ kind: 'loading' });
  useEffect(() => {
    let cancelled = false;
    void Promise.all([
      call(listConsoleComparisons, { query: { client_id: clientId, limit: 50 } }),
      call(listConsoleConseils, { query: { client_id: clientId, limit: 50 } }),
      call(listInsurers),
    ]).then(([comparisons, advices, insurers]) => {
      if (cancelled) return;
      if (!comparisons.ok) return setState({ kind: 'error', message: comparisons.error.message });
      if (!advices.ok) return setState({ kind: 'error', message: advices.error.message });
      // An insurer this install no longer has keeps its code.
      const names = new Map(insurers.ok ? insurers.data.data.map((i) => [i.code, i.name]) : []);
      setState({ kind: 'ready', comparisons: comparisons.data.data, advices: advices.data.data, names });
    });
    return () => {
      cancelled = true;
    };
  }, [clientId]);

  const start = (
    <p className="records-price-link">
      <a className="button" href={`/console/compare?client=${encodeURIComponent(clientId)}`}>
        {s.compareForClient}
      </a>
    </p>
  );
  if (state.kind === 'loading') return <Loading t={t} />;
  if (state.kind === 'error') return <Alert>{state.message}</Alert>;
  return (
    <>
      {start}
      {state.comparisons.length === 0 ? (
        <p className="muted">{s.noComparisons}</p>
      ) : (
        <ul className="records-simple-list" aria-label={s.clientComparisons}>
          {state.comparisons.map((c) => (
            <li key={c.comparaison_id}>
              <a href={comparisonPath(c.comparaison_id)}>{`${s.lines[c.ligne]} · ${formatDateTime(lang, c.created_at)}`}</a>
              <span className="muted">{` · ${s.statuses[c.status]} · ${s.creditsUsed(c.credits_consumed)}`}</span>
            </li>
          ))}
        </ul>
      )}
      {state.advices.length > 0 && (
        <>
          <h3>{s.advices}</h3>
          <ul className="records-simple-list" aria-label={s.advices}>
            {state.advices.map((a) => (
              <li key={a.conseil_id}>
                {`${s.adviceOf(state.names.get(a.compagnie) ?? a.compagnie, a.formule, formatDateTime(lang, a.created_at))} `}
                <a href={pathTo(getConsoleConseilPdf, { conseil_id: a.conseil_id })} download>
                  {s.downloadAdvice}
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
