import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { JOB_STATUSES, type JobStatus } from '../../../../shared/automation.js';
import { cancelConsoleJob, listConsoleJobs, type ConsoleJob } from '../../../../shared/console-automation.js';
import { call } from '../../api.js';
import { ConfirmStep, useConfirmation } from '../../components/ConfirmDialog.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { DASHBOARD_STRINGS } from './dashboardStrings.js';
import { JobDetail } from './JobDetail.js';
import { JobRow } from './JobRow.js';
import { subscribeToJobs, useFeedLive } from './jobFeed.js';
import { JOB_STRINGS } from './jobStrings.js';
import { insuredOf, jobIdInPath } from './jobView.js';
import { AUTOMATION_STRINGS } from './strings.js';

interface Filters {
  status: JobStatus | '';
  from: string;
  to: string;
  q: string;
}

const PAGE_SIZE = 50;
/** One word for a job that waits for a code: the filter offers it once. */
const FILTER_STATUSES = JOB_STATUSES.filter((s) => s !== 'awaiting_mfa');
const SEARCH_DELAY_MS = 300;
const DASHBOARD_PATH = '/console/dashboard';

/** A local calendar date (the date input's value) as the instant it starts, optionally a day later. */
function localDayStart(date: string, plusDays = 0): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + plusDays).toISOString();
}

/** Whether a job from the live feed belongs in the list as filtered (the server decides for the list itself). */
function matches(job: ConsoleJob, filters: Filters): boolean {
  if (filters.status && job.status !== filters.status) return false;
  if (filters.from && job.created_at < localDayStart(filters.from)) return false;
  if (filters.to && job.created_at >= localDayStart(filters.to, 1)) return false;
  const q = filters.q.trim().toLowerCase();
  if (q && !(job.insured ?? '').toLowerCase().includes(q) && !job.job_id.startsWith(q) && !job.devis_id.startsWith(q)) return false;
  return true;
}

function newestFirst(a: ConsoleJob, b: ConsoleJob): number {
  return a.created_at === b.created_at ? b.job_id.localeCompare(a.job_id) : b.created_at.localeCompare(a.created_at);
}

/** The later of two versions of a job (the feed and a list answer can cross). */
function later(a: ConsoleJob | undefined, b: ConsoleJob): ConsoleJob {
  return a && a.updated_at > b.updated_at ? a : b;
}

/** /console/jobs and /console/jobs/<id>: the list, or one job. */
export function JobsPage(props: PageProps) {
  const jobId = jobIdInPath(window.location.pathname);
  return jobId === null ? <JobList {...props} /> : <JobDetail {...props} jobId={jobId} />;
}

/** The cabinet's jobs, found by name, filtered by status and dates, updated live by the event feed (no polling). */
function JobList({ lang, t }: PageProps) {
  const s = AUTOMATION_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const searchId = useId();
  const statusId = useId();
  const fromId = useId();
  const toId = useId();
  const highlight = new URLSearchParams(window.location.search).get('job');
  const [typed, setTyped] = useState('');
  const [filters, setFilters] = useState<Filters>({ status: '', from: '', to: '', q: '' });
  const [jobs, setJobs] = useState<Map<string, ConsoleJob>>(new Map());
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const live = useFeedLive();

  // The search waits for a pause in the typing.
  useEffect(() => {
    const timer = window.setTimeout(() => setFilters((f) => (f.q === typed.trim() ? f : { ...f, q: typed.trim() })), SEARCH_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [typed]);

  const list = useCallback(
    (f: Filters, cursor?: string) =>
      call(listConsoleJobs, {
        // pathTo leaves out what is undefined.
        query: {
          limit: PAGE_SIZE,
          status: f.status || undefined,
          from: f.from ? localDayStart(f.from) : undefined,
          to: f.to ? localDayStart(f.to, 1) : undefined,
          q: f.q || undefined,
          cursor,
        },
      }),
    [],
  );

  const merge = useCallback((incoming: readonly ConsoleJob[], replace: boolean) => {
    setJobs((current) => {
      const next = new Map(replace ? [] : current);
      for (const job of incoming) next.set(job.job_id, later(current.get(job.job_id), job));
      return next;
    });
  }, []);

  useEffect(() => {
    let cancelled = false;
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

  const cancelling = useConfirmation(
    (job: ConsoleJob) => call(cancelConsoleJob, { params: { job_id: job.job_id } }),
    (_job, result) => {
      if (!result.ok) return setError(result.error.message);
      merge([result.data], false);
    },
  );

  const rows = [...jobs.values()].sort(newestFirst);
  const filtered = filters.status !== '' || filters.from !== '' || filters.to !== '' || filters.q !== '';

  return (
    <section className="automation">
      <div className="automation-heading">
        <h1>{s.jobsTitle}</h1>
        <span className={live ? 'badge automation-badge-ok' : 'badge badge-warning'} role="status">
          {live ? s.live : s.reconnecting}
        </span>
        <a href={DASHBOARD_PATH}>{DASHBOARD_STRINGS[lang].title}</a>
      </div>
      <p className="muted">{s.jobsIntro}</p>
      <form className="automation-filters" onSubmit={(e) => e.preventDefault()} aria-label={s.filters}>
        <div className="field automation-search">
          <label htmlFor={searchId}>{j.search}</label>
          <input
            id={searchId}
            type="search"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            aria-describedby={`${searchId}-hint`}
            autoComplete="off"
          />
          <span id={`${searchId}-hint`} className="muted small">
            {j.searchHint}
          </span>
        </div>
        <div className="field">
          <label htmlFor={statusId}>{s.filterStatus}</label>
          <select
            id={statusId}
            value={filters.status}
            onChange={(e) => setFilters({ ...filters, status: e.target.value as JobStatus | '' })}
          >
            <option value="">{s.allStatuses}</option>
            {FILTER_STATUSES.map((status) => (
              <option key={status} value={status}>
                {s.statuses[status]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={fromId}>{s.from}</label>
          <input
            id={fromId}
            type="date"
            value={filters.from}
            max={filters.to || undefined}
            onChange={(e) => setFilters({ ...filters, from: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor={toId}>{s.to}</label>
          <input
            id={toId}
            type="date"
            value={filters.to}
            min={filters.from || undefined}
            onChange={(e) => setFilters({ ...filters, to: e.target.value })}
          />
        </div>
        <button
          type="button"
          className="button"
          disabled={!filtered && typed === ''}
          onClick={() => {
            setTyped('');
            setFilters({ status: '', from: '', to: '', q: '' });
          }}
        >
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
              <th scope="col">{j.insured}</th>
              <th scope="col">{s.created}</th>
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
                j={j}
                lang={lang}
                highlighted={job.job_id === highlight}
                rowRef={job.job_id === highlight ? highlightedRow : undefined}
                onCancel={() => cancelling.ask(job)}
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
      <ConfirmStep
        confirmation={cancelling}
        title={() => j.cancelTitle}
        text={(job) => j.cancelBody(insuredOf(job, j))}
        confirmLabel={j.cancelConfirm}
        cancelLabel={j.keepRunning}
      />
    </section>
  );
}
