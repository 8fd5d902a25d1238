import type { LoadOptions, Measurement } from './load.js';

/** One load run against one side of a comparison, warmed up as the options say. */
export type Round = (options: LoadOptions) => Promise<Measurement>;

export interface Comparison {
  /** Each side's rounds taken as one run (see `pooled`). */
  baseline: Measurement;
  subject: Measurement;
  /** Subject ÷ baseline, of the pooled rates: the figure judged against a goal. */
  ratio: number;
  /** The same ratio for each pair of adjacent rounds, to show how much the machine swung. */
  roundRatios: number[];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/**
 * Rounds of one side as one run: requests over the rounds' summed time, CPU shares weighted by
 * each round's time, the median round's p50 and the worst round's p99 (percentiles of separate
 * runs do not add up).
 */
export function pooled(rounds: readonly Measurement[]): Measurement {
  if (rounds.length === 0) throw new Error('pooled() needs at least one round');
  const seconds = rounds.map((m) => m.requests / m.requestsPerSecond);
  const totalSeconds = seconds.reduce((sum, s) => sum + s, 0);
  const weighted = (share: (m: Measurement) => number) => rounds.reduce((sum, m, i) => sum + share(m) * (seconds[i] ?? 0), 0) / totalSeconds;
  const sideNames = [...new Set(rounds.flatMap((m) => Object.keys(m.sideCores)))];
  const requests = rounds.reduce((sum, m) => sum + m.requests, 0);
  return {
    requestsPerSecond: requests / totalSeconds,
    requests,
    p50Ms: median(rounds.map((m) => m.p50Ms)),
    p99Ms: Math.max(...rounds.map((m) => m.p99Ms)),
    serverCores: weighted((m) => m.serverCores),
    loadCores: weighted((m) => m.loadCores),
    sideCores: Object.fromEntries(sideNames.map((name) => [name, weighted((m) => m.sideCores[name] ?? 0)])),
    otherCores: weighted((m) => m.otherCores),
  };
}

/** Rounds of each side; at least two, so that each side runs both first and second in a pair. */
const ROUNDS = 4;
/** A round shorter than this is mostly autocannon's start and its 1 s tick. */
const MIN_ROUND_SECONDS = 2;

/**
 * Baseline and subject measured in turn, in pairs ordered AB, BA, AB, BA: this VM's speed swings by
 * half within a minute, and one long run of each put a swing on one side only (`GET /me` ÷ bare read
 * 0.35 then 0.64 in two runs back to back). In turn, a slow spell weighs on both sides alike and the
 * ratio measures the code. The measured time, `durationSeconds`, is shared among the rounds.
 */
export async function compareAlternating(baseline: Round, subject: Round, load: LoadOptions): Promise<Comparison> {
  const options: LoadOptions = { ...load, durationSeconds: Math.max(MIN_ROUND_SECONDS, Math.round(load.durationSeconds / ROUNDS)) };
  const baselineRounds: Measurement[] = [];
  const subjectRounds: Measurement[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      baselineRounds.push(await baseline(options));
      subjectRounds.push(await subject(options));
    } else {
      subjectRounds.push(await subject(options));
      baselineRounds.push(await baseline(options));
    }
  }
  const baselinePooled = pooled(baselineRounds);
  const subjectPooled = pooled(subjectRounds);
  return {
    baseline: baselinePooled,
    subject: subjectPooled,
    ratio: subjectPooled.requestsPerSecond / baselinePooled.requestsPerSecond,
    roundRatios: subjectRounds.map((m, i) => m.requestsPerSecond / (baselineRounds[i]?.requestsPerSecond ?? Number.NaN)),
  };
}

/** "rounds: 0.48 0.51 0.47 0.50" */
export function roundRatiosLine(comparison: Comparison): string {
  return `ratio of each pair of rounds: ${comparison.roundRatios.map((r) => r.toFixed(2)).join(' ')}`;
}
