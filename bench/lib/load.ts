import autocannon, { type Result } from 'autocannon';
import { LatencyHistogram } from './latency.js';
import { cpuCount, machineIdleMicros } from './machine.js';
import type { ServerChild } from './child.js';

export interface LoadOptions {
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
}

export interface Measurement {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU the server child used during the measured run, in cores (1 = one core busy all along). */
  serverCores: number;
  /** Same for this process, i.e. autocannon: near 1 means the load generator may be the limit. */
  loadCores: number;
  /** CPU of the other processes the benchmark runs (a hub, PostgreSQL), by name, when it named them. */
  sideCores: Record<string, number>;
  /** Busy CPU of the machine not used by those above (other processes, steal): should be near 0. */
  otherCores: number;
}

/** Reads a process's CPU time so far, in µs. */
export type CpuReader = () => number | Promise<number>;

/** What each request of a load run sends: a GET by default. */
export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** Every [<id>] in the headers and body replaced by a fresh id per request. */
  idReplacement?: boolean;
}

/** One autocannon run of `seconds` at `connections`, recording each response's latency when given a histogram. */
export function startLoad(request: LoadRequest, connections: number, seconds: number, latency?: LatencyHistogram) {
  const instance = autocannon({ ...request, connections, duration: seconds, pipelining: 1, timeout: 10 });
  if (latency) instance.on('response', (_client, _status, _bytes, ms) => latency.record(ms));
  return instance;
}

/** Any answer but a 200 (a 421 for a wrong Host, a 401, a 429 from the limiter) invalidates the figures. */
export function assertAllOk(result: Result, label: string): void {
  const problems = {
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    resets: result.resets,
    mismatches: result.mismatches,
  };
  const bad = Object.entries(problems).filter(([, n]) => n > 0);
  if (result.requests.total === 0) bad.push(['responses', 0]);
  if (bad.length === 0) return;
  const statuses = Object.entries(result.statusCodeStats)
    .map(([code, { count }]) => `${code}×${count}`)
    .join(', ');
  throw new Error(
    `${label}: not every response was a 200 (${bad.map(([k, n]) => `${k} ${n}`).join(', ')}; statuses: ${statuses || 'none'})`,
  );
}

/** One request before loading the server, so that a refusal shows its body rather than a count. */
async function assertServes(url: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, { headers });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 500)}`);
}

/** Starts one autocannon run of the given length; records each response's latency when given a histogram. */
export type LoadRun = (seconds: number, latency?: LatencyHistogram) => PromiseLike<Result>;

async function readAll(readers: Record<string, CpuReader>): Promise<Record<string, number>> {
  const entries = await Promise.all(Object.entries(readers).map(async ([name, read]) => [name, await read()] as const));
  return Object.fromEntries(entries);
}

/**
 * Warms the server up (JIT, SQLite page cache), then measures a load run with the CPU it cost.
 * `check` refuses results whose responses invalidate the figures (by default: anything not 2xx).
 * `side` names other processes the run makes work (a hub, PostgreSQL): their CPU is reported apart
 * from the rest of the machine's.
 */
export async function measureRun(
  server: ServerChild,
  label: string,
  run: LoadRun,
  options: LoadOptions,
  check: (result: Result, label: string) => void = assertAllOk,
  side: Record<string, CpuReader> = {},
): Promise<Measurement> {
  check(await run(options.warmupSeconds), `${label} warm-up`);

  const latency = new LatencyHistogram();
  const sideBefore = await readAll(side);
  const serverCpuBefore = await server.cpuMicros();
  const loadCpuBefore = process.cpuUsage();
  const idleBefore = machineIdleMicros();
  const started = performance.now();
  const result = await run(options.durationSeconds, latency);
  const wallMicros = (performance.now() - started) * 1000;
  const idleMicros = machineIdleMicros() - idleBefore;
  const loadCpu = process.cpuUsage(loadCpuBefore);
  const serverCpuAfter = await server.cpuMicros();
  const sideAfter = await readAll(side);
  check(result, label);

  const serverCores = (serverCpuAfter - serverCpuBefore) / wallMicros;
  const loadCores = (loadCpu.user + loadCpu.system) / wallMicros;
  const busyCores = cpuCount() - idleMicros / wallMicros;
  const sideCores = Object.fromEntries(
    Object.keys(side).map((name) => [name, ((sideAfter[name] ?? 0) - (sideBefore[name] ?? 0)) / wallMicros]),
  );
  const sideTotal = Object.values(sideCores).reduce((sum, cores) => sum + cores, 0);
  return {
    // autocannon notices the end of its duration on its next 1 s tick (a run lasts up to a second
    // longer than asked): rate over what actually ran.
    requestsPerSecond: result.requests.total / result.duration,
    requests: result.requests.total,
    p50Ms: latency.percentile(50),
    p99Ms: latency.percentile(99),
    serverCores,
    loadCores,
    sideCores,
    otherCores: Math.max(0, busyCores - serverCores - loadCores - sideTotal),
  };
}

/** A GET of one path: the common case. */
export async function measure(server: ServerChild, path: string, options: LoadOptions): Promise<Measurement> {
  const url = server.origin + path;
  await assertServes(url, server.headers);
  return measureRun(
    server,
    url,
    (seconds, latency) => startLoad({ url, headers: server.headers }, options.connections, seconds, latency),
    options,
  );
}
