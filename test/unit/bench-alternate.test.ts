import { describe, expect, it } from 'vitest';
import { compareAlternating, inPairs, pairRatios, pooled, roundRatiosLine, roundSeconds } from '../../bench/lib/alternate.js';
import type { LoadOptions, Measurement } from '../../bench/lib/load.js';

function measurement(requestsPerSecond: number, seconds: number, extra: Partial<Measurement> = {}): Measurement {
  return {
    requestsPerSecond,
    requests: requestsPerSecond * seconds,
    p50Ms: 1,
    p99Ms: 2,
    serverCores: 1,
    loadCores: 0.5,
    sideCores: {},
    otherCores: 0,
    ...extra,
  };
}

describe('pooled', () => {
  it('takes the rate over the summed time and weighs CPU shares by each round’s time', () => {
    const m = pooled([
      measurement(1_000, 3, { serverCores: 1, p50Ms: 1, p99Ms: 4, sideCores: { hub: 0.2 } }),
      measurement(2_000, 1, { serverCores: 0.5, p50Ms: 3, p99Ms: 9 }),
    ]);
    expect(m.requests).toBe(5_000);
    expect(m.requestsPerSecond).toBe(1_250);
    expect(m.serverCores).toBeCloseTo(0.875);
    expect(m.sideCores.hub).toBeCloseTo(0.15);
    expect(m.p50Ms).toBe(2);
    expect(m.p99Ms).toBe(9);
  });

  it('keeps the busiest round’s CPU of other processes, so that one busy round still warns', () => {
    const m = pooled([measurement(1_000, 3, { otherCores: 0.5 }), measurement(1_000, 3), measurement(1_000, 3), measurement(1_000, 3)]);
    expect(m.otherCores).toBe(0.5);
  });

  it('refuses no rounds', () => {
    expect(() => pooled([])).toThrow(/at least one round/);
  });
});

describe('compareAlternating', () => {
  const load: LoadOptions = { warmupSeconds: 3, durationSeconds: 10, connections: 10 };

  it('runs the two sides in pairs AB, BA, AB, BA, sharing the measured time, and pools each side', async () => {
    const calls: string[] = [];
    // The machine slows down round after round: the baseline and the subject each get half of the slow rounds.
    let slowdown = 1;
    const side = (name: string, rate: number) => async (options: LoadOptions) => {
      calls.push(`${name}:${options.durationSeconds}s:${options.warmupSeconds}s`);
      const m = measurement(rate / slowdown, options.durationSeconds);
      slowdown += 0.25;
      return m;
    };
    const comparison = await compareAlternating(side('bare', 1_000), side('subject', 500), load);
    // The asked-for warm-up before each side's first round, a 1 s settle before the others.
    expect(calls).toEqual([
      'bare:3s:3s',
      'subject:3s:3s',
      'subject:3s:1s',
      'bare:3s:1s',
      'bare:3s:1s',
      'subject:3s:1s',
      'subject:3s:1s',
      'bare:3s:1s',
    ]);
    expect(comparison.roundRatios).toHaveLength(4);
    // Each side ran in slots 1,4,5,8 or 2,3,6,7 of a steady slowdown: the pooled ratio stays near the true 0.5.
    expect(comparison.ratio).toBeGreaterThan(0.45);
    expect(comparison.ratio).toBeLessThan(0.55);
    expect(comparison.baseline.requests / comparison.baseline.requestsPerSecond).toBeCloseTo(12);
  });

  it('measures at least 2 s a round', async () => {
    const seen: number[] = [];
    const side = async (options: LoadOptions) => {
      seen.push(options.durationSeconds);
      return measurement(100, options.durationSeconds);
    };
    await compareAlternating(side, side, { ...load, durationSeconds: 1 });
    expect(new Set(seen)).toEqual(new Set([2]));
  });
});

describe('inPairs', () => {
  it('runs any two sides in pairs AB, BA, AB, BA and returns each side’s rounds in order', async () => {
    const calls: string[] = [];
    const side = (name: string) => async (round: number) => {
      calls.push(`${name}${round}`);
      return `${name} round ${round}`;
    };
    const rounds = await inPairs(side('A'), side('B'));
    expect(calls).toEqual(['A0', 'B0', 'B1', 'A1', 'A2', 'B2', 'B3', 'A3']);
    expect(rounds.baseline).toEqual(['A round 0', 'A round 1', 'A round 2', 'A round 3']);
    expect(rounds.subject).toEqual(['B round 0', 'B round 1', 'B round 2', 'B round 3']);
  });
});

describe('roundSeconds', () => {
  it('splits a side’s time in four rounds of at least 2 s', () => {
    expect(roundSeconds(10)).toBe(3);
    expect(roundSeconds(5)).toBe(2);
    expect(roundSeconds(1)).toBe(2);
    expect(roundSeconds(14)).toBe(4);
  });
});

describe('pairRatios', () => {
  it('divides each subject round by the baseline round of its pair, by the rate given', () => {
    const run = (done: number, seconds: number) => ({ done, seconds });
    const ratios = pairRatios({ baseline: [run(100, 2), run(90, 2)], subject: [run(80, 2), run(90, 1)] }, (r) => r.done / r.seconds);
    expect(ratios).toEqual([0.8, 2]);
  });

  it('gives NaN for a subject round without its baseline round', () => {
    expect(pairRatios({ baseline: [1], subject: [1, 2] }, (r) => r)).toEqual([1, Number.NaN]);
  });
});

describe('roundRatiosLine', () => {
  const comparison = (roundRatios: number[]) => ({ roundRatios });

  it('prints each pair’s ratio', () => {
    expect(roundRatiosLine(comparison([0.41, 0.4, 0.39, 0.39]))).toBe('ratio of each pair of rounds: 0.41 0.40 0.39 0.39');
  });

  it('warns when the pairs disagree by more than 1.3 times', () => {
    expect(roundRatiosLine(comparison([0.44, 0.71, 0.42, 0.35]))).toMatch(/WARNING: the pairs disagree, 2\.03×/);
  });

  it('warns when a round measured nothing (a ratio that is not a finite number)', () => {
    expect(roundRatiosLine(comparison([0.98, Number.NaN, 1.01, 0.99]))).toMatch(/WARNING: a round measured nothing/);
    expect(roundRatiosLine(comparison([0.98, Number.POSITIVE_INFINITY, 1.01, 0.99]))).toMatch(/WARNING: a round measured nothing/);
  });
});
