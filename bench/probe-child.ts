/**
 * A latency probe in a process of its own: GET one URL at a fixed overall rate until stdin closes,
 * then print one JSON line (ProbeReport) and exit. The webhooks benchmark probes `GET /me` with it
 * while the dispatcher drains its backlog: run in the benchmark's own process, the probe would
 * share an event loop with the HTTPS receiver, whose TLS work delays it, and the figure would be
 * the receiver's as much as the server's.
 */
import autocannon, { type Result } from 'autocannon';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ProbeOptions, ProbeReport } from './lib/protocol.js';

const LOOP_RESOLUTION_MS = 10;

function readOptions(): ProbeOptions {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('usage: probe-child.js <ProbeOptions as JSON>');
  return JSON.parse(raw) as ProbeOptions;
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function main(): Promise<void> {
  const options = readOptions();
  const latenciesMs: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const instance = autocannon({
    url: options.url,
    headers: options.headers,
    connections: options.connections,
    overallRate: options.rate,
    duration: options.maxSeconds,
    pipelining: 1,
    timeout: 10,
  });
  instance.on('response', (_client, _status, _bytes, ms) => latenciesMs.push(ms));
  process.stdin.resume();
  process.stdin.on('end', () => instance.stop());
  const result: Result = await instance;
  loop.disable();
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const report: ProbeReport = {
    latenciesMs,
    statuses,
    total: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    // The histogram records the time between its timer's runs, the resolution included.
    loopDelayP99Ms: Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
    cpuMicros: cpuMicros(),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
