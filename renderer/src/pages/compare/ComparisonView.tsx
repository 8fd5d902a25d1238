import { useCallback, useEffect, useMemo, useState } from 'react';
import { TERMINAL_STATUSES } from '../../../../shared/automation.js';
import type { Comparison, Conseil, RiskSchemaDocument } from '../../../../shared/comparaisons.js';
import type { ConsoleJob } from '../../../../shared/console-automation.js';
import { getConsoleComparison, getConsoleRiskSchema, listConsoleConseils } from '../../../../shared/console-comparaisons.js';
import { getConsoleClient } from '../../../../shared/console-records.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { subscribeToJobs, useFeedLive } from '../automation/jobFeed.js';
import { formatDateTime } from '../automation/strings.js';
import { clientName, clientPath } from '../records/common.js';
import { RECORDS_STRINGS } from '../records/strings.js';
import { AdviceList } from './AdviceList.js';
import { InsurerColumn } from './InsurerColumn.js';
import { guaranteesOffered, marks, type PlacedOffer } from './offers.js';
import { RecommendForm } from './RecommendForm.js';
import { COMPARE_STRINGS } from './strings.js';

type Loaded = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; comparison: Comparison };

/** A comparison and what its page needs beside it: the line's words, the client's name, the advice documents made. */
function useComparison(id: string) {
  const [state, setState] = useState<Loaded>({ kind: 'loading' });
  const [jobs, setJobs] = useState<ReadonlyMap<string, ConsoleJob>>(new Map());
  const refresh = useCallback(async () => {
    const result = await call(getConsoleComparison, { params: { comparaison_id: id } });
    setState(result.ok ? { kind: 'ready', comparison: result.data } : { kind: 'error', message: result.error.message });
  }, [id]);
  useEffect(() => void refresh(), [refresh]);

  // Each of its jobs' changes arrives on the live feed: the step shows at once, and the offers once it ends.
  const jobIds = state.kind === 'ready' ? state.comparison.resultats.map((r) => r.job_id).join(',') : '';
  useEffect(() => {
    const mine = new Set(jobIds.split(','));
    return subscribeToJobs({
      job(job) {
        if (!mine.has(job.job_id)) return;
        setJobs((current) => new Map(current).set(job.job_id, job));
        if (TERMINAL_STATUSES.includes(job.status)) void refresh();
      },
      ready: () => void refresh(),
    });
  }, [jobIds, refresh]);
  return { state, jobs, refresh };
}

/** /console/compare/<id>: a column per insurer filling in as its robot goes, the offers side by side, the recommendation. */
export function ComparisonView({ lang, t, comparisonId }: PageProps & { comparisonId: string }) {
  const s = COMPARE_STRINGS[lang];
  const live = useFeedLive();
  const { state, jobs } = useComparison(comparisonId);
  const [doc, setDoc] = useState<RiskSchemaDocument | null>(null);
  const [client, setClient] = useState<string | null>(null);
  const [wanted, setWanted] = useState<string[]>([]);
  const [recommending, setRecommending] = useState<PlacedOffer | null>(null);
  const [advices, setAdvices] = useState<Conseil[]>([]);

  const comparison = state.kind === 'ready' ? state.comparison : null;
  const ligne = comparison?.ligne;
  const clientId = comparison?.client_id ?? null;
  useEffect(() => {
    if (!ligne) return;
    void call(getConsoleRiskSchema, { params: { ligne } }).then((r) => r.ok && setDoc(r.data));
  }, [ligne]);
  const loadAdvices = useCallback(async () => {
    if (clientId === null) return;
    const result = await call(listConsoleConseils, { query: { client_id: clientId, limit: 100 } });
    if (result.ok) setAdvices(result.data.data.filter((c) => c.comparaison_id === comparisonId));
  }, [clientId, comparisonId]);
  useEffect(() => {
    if (clientId === null) return;
    void call(getConsoleClient, { params: { client_id: clientId } }).then(
      (r) => r.ok && setClient(clientName(r.data, RECORDS_STRINGS[lang])),
    );
    void loadAdvices();
  }, [clientId, lang, loadAdvices]);

  const results = comparison?.resultats ?? [];
  const order = useMemo(() => doc?.garanties.map((g) => g.code) ?? [], [doc]);
  const filterable = useMemo(() => guaranteesOffered(results, order), [results, order]);
  const marked = useMemo(() => marks(results, wanted), [results, wanted]);

  if (state.kind === 'loading') return <Loading t={t} />;
  const back = (
    <p>
      <a className="back-link" href="/console/compare">{`← ${s.allComparisons}`}</a>
    </p>
  );
  if (state.kind === 'error')
    return (
      <section className="automation compare">
        {back}
        <Alert>{state.message}</Alert>
      </section>
    );
  const c = state.comparison;
  const finished = !['pending', 'running'].includes(c.status);
  const nameOf = (code: string) => doc?.compagnies.find((x) => x.compagnie === code)?.name ?? code;
  const guaranteeLabel = (code: string) => doc?.garanties.find((g) => g.code === code)?.label[lang] ?? code;
  return (
    <section className="automation compare">
      {back}
      <h1>{s.comparisonTitle(s.lines[c.ligne])}</h1>
      <p role="status" aria-live="polite" className="compare-status">
        <strong>{s.statuses[c.status]}</strong>
      </p>
      <dl className="automation-facts">
        <dt>{s.forClient}</dt>
        <dd>{clientId ? <a href={clientPath(clientId)}>{client ?? '…'}</a> : s.noClient}</dd>
        <dt>{s.startedTitle}</dt>
        <dd>{formatDateTime(lang, c.created_at)}</dd>
        <dt>{s.creditsTitle}</dt>
        <dd>{s.creditsUsed(c.credits_consumed)}</dd>
      </dl>
      {!finished && <p className="muted small">{live ? s.live : s.reconnecting}</p>}
      {filterable.length > 0 && (
        <fieldset className="compare-filter">
          <legend>{s.filterTitle}</legend>
          <p className="muted small">{s.filterHint}</p>
          {filterable.map((code) => (
            <label key={code}>
              <input
                type="checkbox"
                checked={wanted.includes(code)}
                onChange={(e) => setWanted((w) => (e.target.checked ? [...w, code] : w.filter((x) => x !== code)))}
              />{' '}
              {guaranteeLabel(code)}
            </label>
          ))}
        </fieldset>
      )}
      <ul className="compare-columns" aria-label={s.insurersTitle}>
        {results.map((result) => (
          <InsurerColumn
            key={result.job_id}
            result={result}
            job={jobs.get(result.job_id) ?? null}
            name={nameOf(result.compagnie)}
            wanted={wanted}
            marked={marked}
            guaranteeLabel={guaranteeLabel}
            canRecommend={finished && clientId !== null}
            onRecommend={(offre) => setRecommending({ compagnie: result.compagnie, offre })}
            lang={lang}
          />
        ))}
      </ul>
      {finished && clientId === null && <p className="muted">{s.adviceNeedsClient}</p>}
      {recommending && (
        <RecommendForm
          comparisonId={c.comparaison_id}
          offer={recommending}
          insurerName={nameOf(recommending.compagnie)}
          lang={lang}
          onDone={() => (setRecommending(null), void loadAdvices())}
          onCancel={() => setRecommending(null)}
        />
      )}
      <AdviceList advices={advices} nameOf={nameOf} lang={lang} />
    </section>
  );
}
