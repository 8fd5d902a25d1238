import { median } from './latency.js';
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
  /** Each side's measured time and warm-ups, for the report. */
  schedule: string;
}

/**
 * Rounds of one side as one run: requests over the rounds' summed time, the server's, the load
 * generator's and side processes' CPU shares weighted by each round's time, the median round's p50
 * and the worst round's p99 (percentiles of separate runs do not add up). Other processes' CPU is
 * the worst round's: the busy-machine warning is about any measured run, and one busy round in
 * four would be averaged away.
 */
export function pooled(rounds: readonly Measurement[]): Measurement {
  if (rounds.length === 0) throw new Error('pooled() needs at least one round');
  const seconds = rounds.map((m) => m.requests / m.requestsPerSecond);
  const totalSeconds = seconds.reduce((sum, s) => sum + s, 0);
  const weighted = (share: (m: Measurement) => number) =>
    rounds.reduce((sum, m, i) => sum + share(m) * (seconds[i] ?? 0), 0) / totalSeconds;
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
    otherCores: Math.max(...rounds.map((m) => m.otherCores)),
  };
}

/** Rounds of each side; at least two, so that each side runs both first and second in a pair. */
const ROUNDS = 4;
/** A round shorter than this is mostly autocannon's start and its 1 s tick. */
const MIN_ROUND_SECONDS = 2;
/**
 * Before a later round, a short run on fresh connections: the process, its JIT and its caches are
 * warm from the side's first round, whose warm-up is the one asked for.
 */
const SETTLE_SECONDS = 1;
/** Pairs further apart than this (largest ÷ smallest) mean the machine swung more than pooling hides. */
const PAIRS_DISAGREE = 1.3;

/** Each round's length when a side should measure about `totalSeconds` in all. */
export function roundSeconds(totalSeconds: number): number {
  return Math.max(MIN_ROUND_SECONDS, Math.round(totalSeconds / ROUNDS));
}

/**
 * Runs the two sides in turn, in pairs ordered AB, BA, AB, BA, and returns each side's rounds in
 * order: this VM's speed swings widely within a minute, and one long run of each can put a swing on
 * one side only (the same ratio, `GET /me` ÷ bare read, came out far apart in two runs back to
 * back). In turn, a slow spell weighs on both sides alike and the ratio measures the code.
 */
export async function inPairs<T>(
  baseline: (round: number) => Promise<T>,
  subject: (round: number) => Promise<T>,
): Promise<{ baseline: T[]; subject: T[] }> {
  const baselineRounds: T[] = [];
  const subjectRounds: T[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      baselineRounds.push(await baseline(round));
      subjectRounds.push(await subject(round));
    } else {
      subjectRounds.push(await subject(round));
      baselineRounds.push(await baseline(round));
    }
  }
  return { baseline: baselineRounds, subject: subjectRounds };
}

/** Subject ÷ baseline of each pair of rounds (inPairs), by the given rate. */
export function pairRatios<T>(rounds: { baseline: readonly T[]; subject: readonly T[] }, rate: (round: T) => number): number[] {
  return rounds.subject.map((round, i) => {
    const baseline = rounds.baseline[i];
    return baseline === undefined ? Number.NaN : rate(round) / rate(baseline);
  });
}

/**
 * Baseline and subject load runs measured in turn (inPairs), each side about `durationSeconds` in
 * all, in four rounds, then each side's rounds pooled.
 */
export async function compareAlternating(baseline: Round, subject: Round, load: LoadOptions): Promise<Comparison> {
  const first: LoadOptions = { ...load, durationSeconds: roundSeconds(load.durationSeconds) };
  const later: LoadOptions = { ...first, warmupSeconds: Math.min(load.warmupSeconds, SETTLE_SECONDS) };
  const rounds = await inPairs(
    (round) => baseline(round === 0 ? first : later),
    (round) => subject(round === 0 ? first : later),
  );
  const baselinePooled = pooled(rounds.baseline);
  const subjectPooled = pooled(rounds.subject);
  return {
    baseline: baselinePooled,
    subject: subjectPooled,
    ratio: subjectPooled.requestsPerSecond / baselinePooled.requestsPerSecond,
    roundRatios: pairRatios(rounds, (m) => m.requestsPerSecond),
    schedule: `each side: ${ROUNDS} rounds of ${first.durationSeconds} s, in pairs AB BA AB BA; warm-up ${first.warmupSeconds} s before its first round, ${later.warmupSeconds} s before the others`,
  };
}

/** "ratio of each pair of rounds: 0.48 0.51 0.47 0.50", and a warning when they disagree. */
export function roundRatiosLine(comparison: Pick<Comparison, 'roundRatios'>): string {
  const ratios = comparison.roundRatios;
  const line = `ratio of each pair of rounds: ${ratios.map((r) => r.toFixed(2)).join(' ')}`;
  // A round with nothing measured gives NaN or Infinity: as untrustworthy as a swing.
  if (!ratios.every(Number.isFinite)) return `${line} (WARNING: a round measured nothing; run again before recording)`;
  const spread = Math.max(...ratios) / Math.min(...ratios);
  return spread > PAIRS_DISAGREE
    ? `${line} (WARNING: the pairs disagree, ${spread.toFixed(2)}×: the machine swung during the run; run again before recording)`
    : line;
}
