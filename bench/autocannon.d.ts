/**
 * The part of autocannon 9's programmatic API the harness uses. autocannon ships no types and
 * there is no @types package for version 9, so this is written from its lib/ sources.
 */
declare module 'autocannon' {
  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Replaces every [<id>] in the request (headers and body) with a fresh id, per request. */
    idReplacement?: boolean;
    /** Requests per second across all connections. */
    overallRate?: number;
  }

  /** hdr-histogram-percentiles-obj's summary: average, min, max and p0_001 … p99_999. */
  export interface HistogramSummary {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p99: number;
    total?: number;
  }

  export interface Result {
    /** Wall seconds the run took. */
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    /** Responses outside 2xx (1xx, 3xx, 4xx and 5xx together). */
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    /** Per-second samples; total is every completed response. */
    requests: HistogramSummary & { total: number; sent: number };
    /** Whole milliseconds, 2xx responses only. */
    latency: HistogramSummary;
  }

  export interface Instance extends PromiseLike<Result> {
    /** Every response; responseTime is in milliseconds, fractional (process.hrtime). */
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}
