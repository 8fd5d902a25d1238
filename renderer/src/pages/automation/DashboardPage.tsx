import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { TERMINAL_STATUSES } from '../../../../shared/automation.js';
import {
  DASHBOARD_PERIODS,
  getJobsDashboard,
  type DashboardDay,
  type DashboardPeriod,
  type JobsDashboard,
} from '../../../../shared/console-dashboard.js';
import { call } from '../../api.js';
import { formatDateTime, formatNumber } from '../../format.js';
import type { Lang } from '../../i18n.js';
import { Alert, Loading } from '../../Layout.js';
import type { PageProps } from '../../slices/types.js';
import { DASHBOARD_STRINGS, formatChartDay, formatRate, formatSeconds, type DashboardStrings } from './dashboardStrings.js';
import { subscribeToJobs } from './jobFeed.js';
import { errorReason } from './jobStrings.js';
import { jobPath } from './jobView.js';

/** After a job ends, the figures are asked again once the burst of ends is over (one request, not one per job). */
const REFRESH_DELAY_MS = 1_000;
const JOBS_PATH = '/console/jobs';
const PRICING_PATH = '/console/pricing';

type Loaded = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; board: JobsDashboard };

/** /console/dashboard: the cabinet's jobs over 7, 30 or 90 days, refreshed when the live feed says a job ended. */
export function DashboardPage({ lang, t }: PageProps) {
  const d = DASHBOARD_STRINGS[lang];
  const periodId = useId();
  const [days, setDays] = useState<DashboardPeriod>(7);
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [refreshing, setRefreshing] = useState(false);
  const daysRef = useRef(days);
  daysRef.current = days;

  const load = useCallback(async (period: DashboardPeriod) => {
    setRefreshing(true);
    const result = await call(getJobsDashboard, { query: { days: String(period) as `${DashboardPeriod}` } });
    setRefreshing(false);
    // An answer for a period no longer chosen is dropped.
    if (period !== daysRef.current) return;
    setLoaded(result.ok ? { kind: 'ready', board: result.data } : { kind: 'error', message: result.error.message });
  }, []);

  useEffect(() => void load(days), [days, load]);

  useEffect(() => {
    let timer: number | undefined;
    const later = () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => void load(daysRef.current), REFRESH_DELAY_MS);
    };
    let connected = false;
    const unsubscribe = subscribeToJobs({
      job: (job) => {
        if (TERMINAL_STATUSES.includes(job.status)) later();
      },
      // After a reconnection jobs may have ended unseen; the first connection comes with the first load.
      ready: () => {
        if (connected) later();
        connected = true;
      },
    });
    return () => {
      window.clearTimeout(timer);
      unsubscribe();
    };
  }, [load]);

  return (
    <section className="automation dashboard">
      <div className="automation-heading">
        <h1>{d.title}</h1>
        <a href={JOBS_PATH}>{d.allJobs}</a>
        <span className="muted small" role="status">
          {refreshing && loaded.kind === 'ready' ? d.refreshing : ''}
        </span>
      </div>
      <p className="muted">{d.intro}</p>
      <div className="field dashboard-period">
        <label htmlFor={periodId}>{d.period}</label>
        <select id={periodId} value={days} onChange={(e) => setDays(Number(e.target.value) as DashboardPeriod)}>
          {DASHBOARD_PERIODS.map((period) => (
            <option key={period} value={period}>
              {d.lastDays(period)}
            </option>
          ))}
        </select>
      </div>
      {loaded.kind === 'loading' && <Loading t={t} />}
      {loaded.kind === 'error' && <Alert>{loaded.message}</Alert>}
      {loaded.kind === 'ready' && <Board board={loaded.board} lang={lang} d={d} />}
    </section>
  );
}

function Board({ board, lang, d }: { board: JobsDashboard; lang: Lang; d: DashboardStrings }) {
  if (board.totals.jobs === 0)
    return (
      <p className="dashboard-empty">
        {d.empty} <a href={PRICING_PATH}>{d.priceNow}</a>
      </p>
    );
  const names = new Map(board.insurers.map((i) => [i.compagnie, i.name]));
  return (
    <>
      <Summary board={board} lang={lang} d={d} />
      <InsurerTable board={board} lang={lang} d={d} />
      <DayBars days={board.per_day} lang={lang} d={d} />
      <Failures board={board} names={names} lang={lang} d={d} />
    </>
  );
}

type Part = { board: JobsDashboard; lang: Lang; d: DashboardStrings };

function Summary({ board, lang, d }: Part) {
  const { totals } = board;
  const items: [string, string][] = [
    [d.jobs, formatNumber(lang, totals.jobs)],
    [d.successRate, formatRate(lang, totals.success_rate)],
    [d.median, formatSeconds(lang, totals.median_seconds)],
    [d.credits, formatNumber(lang, totals.credits)],
  ];
  return (
    <section className="automation-card">
      <h2 id="dashboard-summary">{d.summary}</h2>
      <dl className="dashboard-summary">
        {items.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function InsurerTable({ board, lang, d }: Part) {
  const n = (value: number) => formatNumber(lang, value);
  return (
    <section className="automation-card">
      <h2 id="dashboard-insurers">{d.perInsurer}</h2>
      <div className="dashboard-scroll" tabIndex={0} role="region" aria-labelledby="dashboard-insurers">
        <table className="automation-table dashboard-table">
          <caption className="automation-sr-only">
            {d.perInsurerCaption(formatChartDay(lang, board.from), formatChartDay(lang, board.to))}
          </caption>
          <thead>
            <tr>
              <th scope="col">{d.insurer}</th>
              <th scope="col">{d.successRate}</th>
              <th scope="col">{d.median}</th>
              <th scope="col">{d.p90}</th>
              <th scope="col">{d.credits}</th>
              <th scope="col">{d.jobs}</th>
              <th scope="col">{d.succeeded}</th>
              <th scope="col">{d.failed}</th>
              <th scope="col">{d.cancelled}</th>
              <th scope="col">{d.open}</th>
            </tr>
          </thead>
          <tbody>
            {board.insurers.map((line) => (
              <tr key={line.compagnie}>
                <th scope="row">{line.name}</th>
                <td>{formatRate(lang, line.success_rate)}</td>
                <td>{formatSeconds(lang, line.median_seconds)}</td>
                <td>{formatSeconds(lang, line.p90_seconds)}</td>
                <td>{n(line.credits)}</td>
                <td>{n(line.jobs)}</td>
                <td>{n(line.succeeded)}</td>
                <td>{n(line.failed)}</td>
                <td>{n(line.cancelled)}</td>
                <td>{n(line.open)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** One bar per day, stacked priced / failed / the rest; the table under it says the same in words. */
function DayBars({ days, lang, d }: { days: DashboardDay[]; lang: Lang; d: DashboardStrings }) {
  const highest = Math.max(1, ...days.map((day) => day.jobs));
  const pct = (n: number) => `${(n / highest) * 100}%`;
  const [first, last] = [days[0], days.at(-1)];
  return (
    <section className="automation-card">
      <h2 id="dashboard-days">{d.perDay}</h2>
      <div className="dashboard-bars" aria-hidden="true">
        {days.map((day) => (
          <div
            key={day.date}
            className="dashboard-bar"
            title={d.barLabel(formatChartDay(lang, day.date), day.jobs, day.succeeded, day.failed)}
          >
            <span className="dashboard-bar-other" style={{ height: pct(day.jobs - day.succeeded - day.failed) }} />
            <span className="dashboard-bar-failed" style={{ height: pct(day.failed) }} />
            <span className="dashboard-bar-succeeded" style={{ height: pct(day.succeeded) }} />
          </div>
        ))}
      </div>
      {first && last && (
        <p className="muted small dashboard-axis" aria-hidden="true">
          <span>{formatChartDay(lang, first.date)}</span>
          <span>{formatChartDay(lang, last.date)}</span>
        </p>
      )}
      <p className="muted small dashboard-legend" aria-hidden="true">
        <span className="dashboard-key dashboard-bar-succeeded" /> {d.legendSucceeded}{' '}
        <span className="dashboard-key dashboard-bar-failed" /> {d.legendFailed} <span className="dashboard-key dashboard-bar-other" />{' '}
        {d.legendOther}
      </p>
      <details className="dashboard-details">
        <summary>{d.perDayTable}</summary>
        <div className="dashboard-scroll" tabIndex={0} role="region" aria-label={d.perDayTable}>
          <table className="automation-table dashboard-table">
            <caption className="automation-sr-only">{d.perDayTable}</caption>
            <thead>
              <tr>
                <th scope="col">{d.day}</th>
                <th scope="col">{d.jobs}</th>
                <th scope="col">{d.succeeded}</th>
                <th scope="col">{d.failed}</th>
                <th scope="col">{d.cancelled}</th>
                <th scope="col">{d.open}</th>
                <th scope="col">{d.successRate}</th>
                <th scope="col">{d.credits}</th>
              </tr>
            </thead>
            <tbody>
              {days.map((day) => (
                <tr key={day.date}>
                  <th scope="row">{formatChartDay(lang, day.date)}</th>
                  <td>{formatNumber(lang, day.jobs)}</td>
                  <td>{formatNumber(lang, day.succeeded)}</td>
                  <td>{formatNumber(lang, day.failed)}</td>
                  <td>{formatNumber(lang, day.cancelled)}</td>
                  <td>{formatNumber(lang, day.open)}</td>
                  <td>{formatRate(lang, day.success_rate)}</td>
                  <td>{formatNumber(lang, day.credits)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function Failures({ board, names, lang, d }: Part & { names: Map<string, string> }) {
  return (
    <section className="automation-card">
      <h2 id="dashboard-failures">{d.failures}</h2>
      {board.failures.length === 0 ? (
        <p className="muted">{d.noFailures}</p>
      ) : (
        <div className="dashboard-scroll" tabIndex={0} role="region" aria-labelledby="dashboard-failures">
          <table className="automation-table dashboard-table dashboard-failures">
            <caption className="automation-sr-only">{d.failures}</caption>
            <thead>
              <tr>
                <th scope="col">{d.reason}</th>
                <th scope="col">{d.count}</th>
                <th scope="col">{d.insurers}</th>
                <th scope="col">{d.lastFailure}</th>
              </tr>
            </thead>
            <tbody>
              {board.failures.map((failure) => (
                <tr key={failure.code}>
                  <th scope="row">{errorReason(lang, failure.code) ?? d.otherReason(failure.code)}</th>
                  <td>{formatNumber(lang, failure.count)}</td>
                  <td>{failure.insurers.map((code) => names.get(code) ?? code).join(', ')}</td>
                  <td>
                    <a href={jobPath(failure.last_job_id)}>{d.openLastJob(formatDateTime(lang, failure.last_at))}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
