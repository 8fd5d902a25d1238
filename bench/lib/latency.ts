/**
 * Latency percentiles at 10 µs resolution. autocannon's own histogram stores whole milliseconds,
 * which on loopback makes p50 read 0 or 1 ms for every target; its 'response' event carries the
 * fractional time, recorded here into fixed buckets (constant memory, O(1) per response).
 */
const BUCKET_MS = 0.01;
const BUCKETS = 100_000; // 0 to 1 s; slower responses land in the last bucket, and max keeps the truth.

/** The p-th percentile (0-100) of sorted values, nearest rank; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** The middle value, or the mean of the two middle ones; NaN when there are none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private total = 0;
  private maxMs = 0;

  record(ms: number): void {
    const bucket = Math.min(BUCKETS - 1, Math.floor(ms / BUCKET_MS));
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1;
    this.total += 1;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  get count(): number {
    return this.total;
  }

  /** The upper edge of the bucket holding the p-th percentile (p in 0..100), in ms. */
  percentile(p: number): number {
    if (this.total === 0) return Number.NaN;
    const rank = Math.ceil((p / 100) * this.total);
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket] ?? 0;
      if (seen >= rank) return bucket === BUCKETS - 1 ? this.maxMs : (bucket + 1) * BUCKET_MS;
    }
    return this.maxMs;
  }
}
