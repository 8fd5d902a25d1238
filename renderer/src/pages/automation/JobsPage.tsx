import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { ACTIVE_STATUSES, JOB_STATUSES, type Job, type JobStatus } from '../../../../shared/automation.js';
import { cancelConsoleJob, getConsoleDevisPdf, getConsoleJobArtifact, listConsoleJobs } from '../../../../shared/console-automation.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { call } from '../../api.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { subscribeToJobs, useFeedLive } from './jobFeed.js';
import { AUTOMATION_STRINGS, formatDateTime, formatEuros, shortId, type AutomationStrings } from './strings.js';

interface Filters {
  status: JobStatus | '';
  from: string;
  to: string;
}

const PAGE_SIZE = 50;
const CANCELLABLE: readonly JobStatus[] = ['pending', ...ACTIVE_STATUSES];

/** A local calendar date (the date input's value) as the instant it starts, optionally a day later. */
function localDayStart(date: string, plusDays = 0): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + plusDays).toISOString();
}

function matches(job: Job, filters: Filters): boolean {
  if (filters.status && job.status !== filters.status) return false;
  if (filters.from && job.created_at < localDayStart(filters.from)) return false;
  if (filters.to && job.created_at >= localDayStart(filters.to, 1)) return false;
  return true;
}

function newestFirst(a: Job, b: Job): number {
  return a.created_at === b.created_at ? b.job_id.localeCompare(a.job_id) : b.created_at.localeCompare(a.created_at);
}

/** The later of two versions of a job (the feed and a list answer can cross). */
function later(a: Job | undefined, b: Job): Job {
  return a && a.updated_at > b.updated_at ? a : b;
}

/** /console/jobs: the cabinet's jobs, filtered by status and dates, updated live by the event feed (no polling). */
export function JobsPage({ lang, t, session }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  // A failed run's screenshot and trace show the portal's pages with the client's data: admins only.
  const showArtifacts = session.user.role === 'admin';
  const statusId = useId();
  const fromId = useId();
  const toId = useId();
  const highlight = new URLSearchParams(window.location.search).get('job');
  const [filters, setFilters] = useState<Filters>({ status: '', from: '', to: '' });
  const [jobs, setJobs] = useState<Map<string, Job>>(new Map());
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const live = useFeedLive();

  const list = useCallback(
    (f: Filters, cursor?: string) =>
      call(listConsoleJobs, {
        // pathTo leaves out what is undefined.
        query: {
          limit: PAGE_SIZE,
          status: f.status || undefined,
          from: f.from ? localDayStart(f.from) : undefined,
          to: f.to ? localDayStart(f.to, 1) : undefined,
          cursor,
        },
      }),
    [],
  );

  const merge = useCallback((incoming: readonly Job[], replace: boolean) => {
    setJobs((current) => {
      const next = new Map(replace ? [] : current);
      for (const job of incoming) next.set(job.job_id, later(current.get(job.job_id), job));
      return next;
    });
  }, []);

  useEffect(() => {
    let cancelled = false;
    setLoaded(false);
    void (async () => {
      const result = await list(filters);
      if (cancelled) return;
      setLoaded(true);
      if (!result.ok) return setError(result.error.message);
      setError(null);
      merge(result.data.data, true);
      setNextCursor(result.data.next_cursor);
    })();
    return () => {
      cancelled = true;
    };
  }, [filters, list, merge]);

  useEffect(
    () =>
      subscribeToJobs({
        job(job) {
          setJobs((current) => {
            if (!current.has(job.job_id) && !matches(job, filtersRef.current)) return current;
            const next = new Map(current);
            next.set(job.job_id, later(current.get(job.job_id), job));
            return next;
          });
        },
      }),
    [],
  );

  const highlightedRow = useRef<HTMLTableRowElement | null>(null);
  const scrolled = useRef(false);
  useEffect(() => {
    if (!scrolled.current && highlightedRow.current) {
      scrolled.current = true;
      highlightedRow.current.scrollIntoView({ block: 'center' });
    }
  });

  async function loadMore() {
    if (!nextCursor) return;
    const result = await list(filters, nextCursor);
    if (!result.ok) return setError(result.error.message);
    merge(result.data.data, false);
    setNextCursor(result.data.next_cursor);
  }

  async function cancel(job: Job) {
    const result = await call(cancelConsoleJob, { params: { job_id: job.job_id } });
    if (!result.ok) return setError(result.error.message);
    merge([result.data], false);
  }

  const rows = [...jobs.values()].sort(newestFirst);

  return (
    <section className="automation">
      <div className="automation-heading">
        <h1>{s.jobsTitle}</h1>
        <span className={live ? 'badge automation-badge-ok' : 'badge badge-warning'} role="status">
          {live ? s.live : s.reconnecting}
        </span>
      </div>
      <p className="muted">{s.jobsIntro}</p>
      <form className="automation-filters" onSubmit={(e) => e.preventDefault()} aria-label={s.filters}>
        <div className="field">
          <label htmlFor={statusId}>{s.filterStatus}</label>
          <select id={statusId} value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.target.value as JobStatus | '' })}>
            <option value="">{s.allStatuses}</option>
            {JOB_STATUSES.map((status) => (
              <option key={status} value={status}>
                {s.statuses[status]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={fromId}>{s.from}</label>
          <input id={fromId} type="date" value={filters.from} max={filters.to || undefined} onChange={(e) => setFilters({ ...filters, from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={toId}>{s.to}</label>
          <input id={toId} type="date" value={filters.to} min={filters.from || undefined} onChange={(e) => setFilters({ ...filters, to: e.target.value })} />
        </div>
        <button type="button" className="button" disabled={!filters.status && !filters.from && !filters.to} onClick={() => setFilters({ status: '', from: '', to: '' })}>
          {s.clearFilters}
        </button>
      </form>
      {error && <Alert>{error}</Alert>}
      {!loaded && <Loading t={t} />}
      {loaded && rows.length === 0 && !error && <p className="muted">{s.noJobs}</p>}
      {rows.length > 0 && (
        <table className="automation-table automation-jobs">
          <caption className="automation-sr-only">{s.jobsTitle}</caption>
          <thead>
            <tr>
              <th scope="col">{s.created}</th>
              <th scope="col">{s.job}</th>
              <th scope="col">{s.status}</th>
              <th scope="col">{s.progress}</th>
              <th scope="col">{s.creditsCol}</th>
              <th scope="col">{s.result}</th>
              <th scope="col">
                <span className="automation-sr-only">{s.cancel}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((job) => (
              <JobRow
                key={job.job_id}
                job={job}
                s={s}
                lang={lang}
                showArtifacts={showArtifacts}
                highlighted={job.job_id === highlight}
                rowRef={job.job_id === highlight ? highlightedRow : undefined}
                onCancel={() => void cancel(job)}
              />
            ))}
          </tbody>
        </table>
      )}
      {nextCursor && (
        <div className="automation-actions">
          <button type="button" className="button" onClick={() => void loadMore()}>
            {s.loadMore}
          </button>
        </div>
      )}
    </section>
  );
}

function JobRow({
  job,
  s,
  lang,
  showArtifacts,
  highlighted,
  rowRef,
  onCancel,
}: {
  job: Job;
  s: AutomationStrings;
  lang: PageProps['lang'];
  showArtifacts: boolean;
  highlighted: boolean;
  rowRef?: React.RefObject<HTMLTableRowElement | null>;
  onCancel: () => void;
}) {
  const id = shortId(job.job_id);
  const failed = job.status === 'failed';
  return (
    <tr ref={rowRef} className={highlighted ? 'automation-highlight' : undefined} aria-current={highlighted ? 'true' : undefined} data-status={job.status}>
      <td>{formatDateTime(lang, job.created_at)}</td>
      <td>
        <span className="automation-code">{`${job.produit} · ${job.compagnie}`}</span>
        <br />
        <span className="muted small" title={job.job_id}>
          {id}
        </span>
      </td>
      <td>
        <span className={`automation-status-${job.status}`}>{s.statuses[job.status]}</span>
      </td>
      <td className="automation-progress-cell">
        <progress max={100} value={job.progress.percent} aria-valuenow={job.progress.percent} aria-label={s.progressOf(id)} />
        <span className="small">{`${job.progress.percent} % · ${job.progress.step}`}</span>
      </td>
      <td>{job.credits_consumed}</td>
      <td>
        {job.result && (
          <p className="automation-result">
            <strong>{s.premium(formatEuros(lang, job.result.tarif_eur))}</strong>
            {job.result.suspens && <span className="muted small">{` · ${job.result.suspens}`}</span>}
            {job.result.pdf_url && (
              <>
                <br />
                <a href={pathTo(getConsoleDevisPdf, { devis_id: job.devis_id })} download={`devis-${job.devis_id}.pdf`}>
                  {s.downloadPdf}
                </a>
              </>
            )}
          </p>
        )}
        {job.error && (
          <p className={failed ? 'automation-error' : 'muted small'}>
            <span>{s.errorLine(job.error.code, job.error.message)}</span>
            {showArtifacts && job.artifacts?.screenshot_url && (
              <>
                <br />
                <a href={pathTo(getConsoleJobArtifact, { job_id: job.job_id, name: 'screenshot.png' })} target="_blank" rel="noreferrer">
                  {s.screenshot}
                </a>
              </>
            )}
            {showArtifacts && job.artifacts?.trace_url && (
              <>
                {' · '}
                <a href={pathTo(getConsoleJobArtifact, { job_id: job.job_id, name: 'trace.zip' })} download={`${job.job_id}-trace.zip`}>
                  {s.trace}
                </a>
              </>
            )}
          </p>
        )}
      </td>
      <td>
        {CANCELLABLE.includes(job.status) && (
          <button type="button" className="button" aria-label={s.cancelJob(id)} onClick={onCancel}>
            {s.cancel}
          </button>
        )}
      </td>
    </tr>
  );
}
