import type { DashboardPeriod, JobCounts, JobsDashboard } from '../../shared/console-dashboard.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { creditsConsumedByJob } from '../wallet/service.js';
import * as store from './store-dashboard.js';

/**
 * The console's jobs dashboard: the store's aggregates over the period's UTC days, the credits
 * from the wallet, summed per insurer, per day and for the period.
 */

const DAY_MS = 86_400_000;

type Counts = Omit<JobCounts, 'success_rate'>;

const ZERO: Counts = { jobs: 0, succeeded: 0, failed: 0, cancelled: 0, open: 0, credits: 0 };

function add(a: Counts, b: Counts): Counts {
  return {
    jobs: a.jobs + b.jobs,
    succeeded: a.succeeded + b.succeeded,
    failed: a.failed + b.failed,
    cancelled: a.cancelled + b.cancelled,
    open: a.open + b.open,
    credits: a.credits + b.credits,
  };
}

/** The counts with their success rate: of the finished jobs, null when none has finished. */
function withRate(counts: Counts): JobCounts {
  const finished = counts.succeeded + counts.failed + counts.cancelled;
  return { ...counts, success_rate: finished === 0 ? null : counts.succeeded / finished };
}

const seconds = (ms: number | null | undefined): number | null => (ms === null || ms === undefined ? null : ms / 1000);

/** The period: its first UTC day's start, and the end of today (UTC), in epoch ms. */
function dashboardPeriod(now: number, days: DashboardPeriod): { from: number; to: number } {
  const to = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  return { from: to - days * DAY_MS, to };
}

function cellCounts(cell: store.DashboardCell, credits: Map<string, number>): Counts {
  const own = JSON.parse(cell.ownIds) as string[];
  const ownCredits = own.reduce((total, id) => total + (credits.get(id) ?? 0), 0);
  const { jobs, succeeded, failed, cancelled, open } = cell;
  return { jobs, succeeded, failed, cancelled, open, credits: ownCredits + cell.elsewhereCredits };
}

export function jobsDashboard(deps: Deps, cabinetId: string, days: DashboardPeriod): JobsDashboard {
  const { from, to } = dashboardPeriod(deps.clock.now(), days);
  const cells = store.dashboardCells(deps.db.orm, cabinetId, from, to);
  const credits = creditsConsumedByJob(
    deps,
    cabinetId,
    cells.flatMap((c) => JSON.parse(c.ownIds) as string[]),
  );
  const durations = new Map(store.dashboardDurations(deps.db.orm, cabinetId, from, to).map((d) => [d.compagnie, d]));

  const perInsurer = new Map<string, Counts>();
  const perDay: Counts[] = Array.from({ length: days }, () => ZERO);
  for (const cell of cells) {
    const counts = cellCounts(cell, credits);
    perInsurer.set(cell.compagnie, add(perInsurer.get(cell.compagnie) ?? ZERO, counts));
    perDay[cell.day] = add(perDay[cell.day] ?? ZERO, counts);
  }
  const total = perDay.reduce(add, ZERO);

  const insurers = [...perInsurer]
    .map(([compagnie, counts]) => ({
      compagnie,
      name: deps.insurers.get(compagnie)?.name ?? compagnie,
      ...withRate(counts),
      median_seconds: seconds(durations.get(compagnie)?.medianMs),
      p90_seconds: seconds(durations.get(compagnie)?.p90Ms),
    }))
    .sort((a, b) => b.jobs - a.jobs || a.name.localeCompare(b.name));

  return {
    days,
    from: toIso(from).slice(0, 10),
    to: toIso(to - DAY_MS).slice(0, 10),
    totals: {
      ...withRate(total),
      median_seconds: seconds(durations.get(null)?.medianMs),
      p90_seconds: seconds(durations.get(null)?.p90Ms),
    },
    insurers,
    per_day: perDay.map((counts, i) => ({ date: toIso(from + i * DAY_MS).slice(0, 10), ...withRate(counts) })),
    failures: store.dashboardFailures(deps.db.orm, cabinetId, from, to).map((f) => ({
      code: f.code,
      count: f.count,
      insurers: (JSON.parse(f.insurers) as string[]).sort(),
      last_job_id: f.lastJobId,
      last_at: toIso(f.lastAt),
    })),
  };
}
