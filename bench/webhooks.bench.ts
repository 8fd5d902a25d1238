/**
 * Webhook delivery, against a baseline doing the same essential work bare, in one run.
 * An HTTPS receiver in this process answers 200 to every POST; WEBHOOK_SUBSCRIPTIONS paths on it
 * (<url>/0 … /9) stand for the subscriptions. The servers run in child processes, one at a time.
 *
 *  1. baseline (bare-webhooks child, bench/lib/bare-sender.ts): 100,000 opportunity.created
 *     bodies, each serialised and signed as the dispatcher does it and POSTed with node:https over
 *     one keep-alive agent, at the service's default limits (webhookConcurrency in flight,
 *     webhookConcurrencyPerEndpoint per endpoint, read from loadConfig);
 *  2. dispatcher (courtier-webhooks child: the real app, 10 subscriptions to ["*"]): 10,000
 *     events recorded through the service before it listens, so the dispatcher (started at
 *     listen) has 100,000 deliveries to drain. Both rates are taken at the receiver, from the
 *     first delivery of the phase to the 100,000th: (n − 1) / (t_last − t_first). Goals: >= 2,000
 *     deliveries/s, and >= 0.5 × the baseline's rate;
 *  3. while that backlog drains: GET /me at 100 req/s on 2 connections, p99 < 20 ms (the API
 *     stays responsive while the dispatcher works); through autocannon's overallRate, so each
 *     second's 100 leave at once, back to back: harsher than a steady 100/s. The probe runs in a
 *     process of its own (probe-child.ts): in this one, the receiver's TLS work would delay its
 *     event loop by as much as the p99 it measures;
 *  4. once drained: POST /opportunities at a steady 200/s for 10 s (one every 5 ms: an open loop,
 *     lib/paced.ts; autocannon's overallRate would send each second's 200 at once), each delivery
 *     timed from its event's created_at (its commit) to its receipt, p50 and p99; a delivery still
 *     missing at the end of the drain bound counts as late as the bound. Goal: p99 < 250 ms.
 *
 * Every phase is bounded (the drain at 90 s), so that a slow dispatcher cannot hang the run; any
 * POST answered otherwise than 201, any GET /me otherwise than 200, fails the run.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';
import type { Benchmark, BenchContext } from './benchmark.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { registerCleanup } from './lib/cleanup.js';
import { LatencyHistogram, percentile } from './lib/latency.js';
import { cpuCount, machineIdleMicros } from './lib/machine.js';
import { sendPaced } from './lib/paced.js';
import {
  BARE_SEND_PATH,
  WEBHOOK_BACKLOG_EVENTS,
  WEBHOOK_RECEIVER_CA_ENV,
  WEBHOOK_RECEIVER_URL_ENV,
  WEBHOOK_SUBSCRIPTIONS,
  type BareSendRequest,
  type BareSendResult,
  type ProbeOptions,
  type ProbeReport,
} from './lib/protocol.js';
import { BUSY_MACHINE_CORES, formatTable, goalLine } from './lib/report.js';
import { getMe } from '../shared/api-keys.js';
import { createOpportunity } from '../shared/crm-endpoints.js';
import { pathTo } from '../shared/endpoint.js';

const CREATE_PATH = pathTo(createOpportunity);
const ME_PATH = pathTo(getMe);
/** Deliveries in each throughput phase: the backlog's events to every subscription, and as many bare bodies. */
const THROUGHPUT_DELIVERIES = WEBHOOK_BACKLOG_EVENTS * WEBHOOK_SUBSCRIPTIONS;
/** A modest, fixed load: enough samples for a p99 (~100 a second), too few to slow the drain. */
const PROBE_RATE = 100;
const PROBE_CONNECTIONS = 2;
/** autocannon stops at once and the probe prints one line: 10 s means stuck. */
const PROBE_STOP_TIMEOUT_MS = 10_000;
const STEADY_RATE = 200;
const STEADY_SECONDS = 10;
/** Bounds that keep the run near three minutes at worst when the dispatcher falls behind. */
const DRAIN_TIMEOUT_MS = 90_000;
const STEADY_DRAIN_TIMEOUT_MS = 15_000;

const GOAL_DELIVERIES_PER_S = 2_000;
const GOAL_BASELINE_RATIO = 0.5;
const GOAL_ME_P99_MS = 20;
const GOAL_P99_MS = 250;

const CREATE_BODY = JSON.stringify({
  title: 'Webhook bench [<id>]',
  product: 'auto',
  contact: { last_name: 'Bench' },
  expected_value_eur: 100,
});

/** Arrivals of the current throughput phase, up to its target: times from performance.now(). */
interface PhaseArrivals {
  received: number;
  firstAt?: number;
  lastAt?: number;
}

interface Receiver {
  url: string;
  ca: string;
  /** Deliveries received since the receiver started. */
  count(): number;
  /** Starts a throughput phase: the first arrival from now on and each one up to the `target`-th are timed. */
  startPhase(target: number): void;
  phase(): PhaseArrivals;
  /**
   * From now on, records created_at → receipt latency (ms) for events created at or after `since`
   * (epoch ms); the returned function stops and hands them over. Kept as values, not in a
   * LatencyHistogram: these reach seconds, past its 1 s range.
   */
  trackLatencyFrom(since: number): () => number[];
  /** Resolves with the time (performance.now()) at which `n` deliveries in all had arrived, or undefined on timeout. */
  waitFor(n: number, timeoutMs: number): Promise<number | undefined>;
  close(): Promise<void>;
}

async function receiverCertificate(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

async function startReceiver(): Promise<Receiver> {
  const { key, cert } = await receiverCertificate();
  let received = 0;
  let phaseStart = 0;
  let phaseTarget = 0;
  let arrivals: PhaseArrivals = { received: 0 };
  let tracking: { since: number; latencies: number[] } | undefined;
  const waiters: { n: number; resolve: (at: number) => void }[] = [];
  const arrived = (body: Buffer) => {
    const at = performance.now();
    const receivedAt = Date.now();
    received += 1;
    if (received - phaseStart <= phaseTarget) {
      arrivals.received = received - phaseStart;
      arrivals.firstAt ??= at;
      arrivals.lastAt = at;
    }
    if (tracking) {
      const createdAt = Date.parse((JSON.parse(body.toString('utf8')) as { created_at: string }).created_at);
      if (createdAt >= tracking.since) tracking.latencies.push(receivedAt - createdAt);
    }
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i];
      if (waiter && received >= waiter.n) {
        waiters.splice(i, 1);
        waiter.resolve(at);
      }
    }
  };
  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrived(Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    ca: cert,
    count: () => received,
    startPhase(target) {
      phaseStart = received;
      phaseTarget = target;
      arrivals = { received: 0 };
    },
    phase: () => ({ ...arrivals }),
    trackLatencyFrom(since) {
      const started: { since: number; latencies: number[] } = { since, latencies: [] };
      tracking = started;
      return () => {
        if (tracking === started) tracking = undefined;
        return started.latencies;
      };
    },
    waitFor(n, timeoutMs) {
      if (received >= n) return Promise.resolve(performance.now());
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        waiters.push({ n, resolve: (at) => (clearTimeout(timer), resolve(at)) });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The receiver's rate over a phase: (n − 1) deliveries in the time from the first to the last, 0 below two. */
function deliveriesPerSecond({ received, firstAt, lastAt }: PhaseArrivals): number {
  if (received < 2 || firstAt === undefined || lastAt === undefined || lastAt <= firstAt) return 0;
  return (received - 1) / ((lastAt - firstAt) / 1000);
}

/** Creates at a steady rate for `seconds` (one every 1/rate s, see paced.ts), each with a fresh Idempotency-Key: every answer should be a 201. */
async function postEventsSteadily(server: ServerChild, seconds: number, rate: number): Promise<number> {
  const result = await sendPaced({
    url: server.origin + CREATE_PATH,
    method: 'POST',
    headers: (i) => ({ ...server.headers, 'content-type': 'application/json', 'idempotency-key': `wh-steady-${i}-${Date.now()}` }),
    body: (i) => CREATE_BODY.replace('[<id>]', String(i)),
    rate,
    seconds,
    connections: 10,
  });
  const created = result.statuses.get(201) ?? 0;
  const total = [...result.statuses.values()].reduce((sum, n) => sum + n, 0);
  if (created !== total || result.failed > 0) {
    const statuses = [...result.statuses].map(([code, count]) => `${code}×${count}`).join(', ');
    throw new Error(`steady POSTs: not every response was a 201 (${statuses || 'none'}; ${result.failed} without an answer)`);
  }
  return created;
}

const PROBE_SCRIPT = fileURLToPath(new URL('./probe-child.js', import.meta.url));

/**
 * GET /me at PROBE_RATE from a process of its own (bench/probe-child.ts) until stopped (or the drain
 * bound): this process hosts the receiver, whose TLS work would delay the probe's event loop.
 * stop() refuses the figure unless every response was a 200.
 */
function probeMe(server: ServerChild): { failed: Promise<never>; stop(): Promise<ProbeReport> } {
  const options: ProbeOptions = {
    url: server.origin + ME_PATH,
    headers: server.headers,
    connections: PROBE_CONNECTIONS,
    rate: PROBE_RATE,
    maxSeconds: Math.ceil(DRAIN_TIMEOUT_MS / 1000) + 5,
  };
  // stdin is its lifeline: it stops when stdin closes, even if this process is killed.
  const child = spawn(process.execPath, [PROBE_SCRIPT, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] });
  // As the server children: killed however the run ends, unless stopped first.
  const unregister = registerCleanup({ run: async () => void child.kill('SIGKILL'), runSync: () => void child.kill('SIGKILL') });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  // A probe that died already makes end() fail with EPIPE: its exit code tells the story.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<string>((resolve) => {
    child.on('error', (err) => resolve(`could not start (${err.message})`));
    child.on('exit', (code, signal) => resolve(code === 0 ? '' : `exited with code ${String(code)}, signal ${String(signal)}`));
  });
  let stopping = false;
  const failed = exited.then((problem) => {
    if (!stopping) throw new Error(`the GET ${ME_PATH} probe stopped before the drain ended: ${problem || 'exited early'}`);
    return new Promise<never>(() => undefined);
  });
  failed.catch(() => undefined); // Observed through measureDrain's race.
  return {
    failed,
    async stop() {
      stopping = true;
      child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve(`did not stop within ${PROBE_STOP_TIMEOUT_MS / 1000} s`);
        }, PROBE_STOP_TIMEOUT_MS);
      });
      const problem = await Promise.race([exited, timeout]).finally(() => {
        clearTimeout(timer);
        unregister();
      });
      const line = output.trim().split('\n').pop();
      if (problem !== '' || !line) throw new Error(`the GET ${ME_PATH} probe ${problem || 'printed no report'}`);
      const report = JSON.parse(line) as ProbeReport;
      const ok = report.statuses['200'] ?? 0;
      if (ok !== report.total || report.errors + report.timeouts > 0) {
        const statuses = Object.entries(report.statuses)
          .map(([status, count]) => `${status}×${count}`)
          .join(', ');
        throw new Error(
          `GET ${ME_PATH} during the drain: not every response was a 200 (${statuses || 'none'}; errors ${report.errors}, timeouts ${report.timeouts})`,
        );
      }
      return report;
    },
  };
}

interface Cpu {
  server: number;
  load: number;
  other: number;
}

/**
 * CPU of the server child, of the bench (this process: receiver and load; and a probe's, given
 * when stopping) and of the rest, in cores, over a phase.
 */
async function cpuMeter(server: ServerChild): Promise<(probeMicros?: number) => Promise<Cpu>> {
  const serverBefore = await server.cpuMicros();
  const loadBefore = process.cpuUsage();
  const idleBefore = machineIdleMicros();
  const started = performance.now();
  return async (probeMicros = 0) => {
    const wall = (performance.now() - started) * 1000;
    const idle = machineIdleMicros() - idleBefore;
    const load = process.cpuUsage(loadBefore);
    const serverCores = ((await server.cpuMicros()) - serverBefore) / wall;
    const loadCores = (load.user + load.system + probeMicros) / wall;
    return { server: serverCores, load: loadCores, other: Math.max(0, cpuCount() - idle / wall - serverCores - loadCores) };
  };
}

const pct = (cores: number) => `${Math.round(cores * 100)}%`;
const integer = (n: number) => Math.round(n).toLocaleString('en-US');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Throughput {
  perSecond: number;
  cpu: Cpu;
}

/** Asks the bare-webhooks child for the bodies; refuses the figure unless every one was answered 200. */
async function sendBare(sender: ServerChild, count: number): Promise<BareSendResult> {
  const request: BareSendRequest = { count };
  const response = await fetch(sender.origin + BARE_SEND_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(DRAIN_TIMEOUT_MS),
  });
  if (response.status !== 200)
    throw new Error(`POST ${BARE_SEND_PATH} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const result = (await response.json()) as BareSendResult;
  if (result.ok !== count)
    throw new Error(
      `baseline: ${result.ok} of ${count} bodies answered 200 (${result.failed} failed, first: ${result.firstError ?? 'none'})`,
    );
  return result;
}

/** Phase 1: the bare sender's 100,000 bodies, timed at the receiver; the child is stopped before the dispatcher starts. */
async function measureBaseline(ctx: BenchContext, receiver: Receiver): Promise<Throughput> {
  const sender = await startServerChild('bare-webhooks', ctx.tempDir('bare-webhooks'), ctx.child);
  try {
    receiver.startPhase(THROUGHPUT_DELIVERIES);
    const stopCpu = await cpuMeter(sender);
    const started = performance.now();
    const result = await sendBare(sender, THROUGHPUT_DELIVERIES);
    const cpu = await stopCpu();
    const arrivals = receiver.phase();
    console.log(
      `   baseline: ${integer(result.ok)} signed bodies answered 200 in ${seconds(performance.now() - started)} (node:https, ${result.concurrency} in flight, at most ${result.perEndpoint} per endpoint)`,
    );
    return { perSecond: deliveriesPerSecond(arrivals), cpu };
  } finally {
    await sender.stop();
  }
}

interface Drain extends Throughput {
  complete: boolean;
  me: LatencyHistogram;
  /** How late the probe's own event loop ran, p99, in ms beyond its timer (ProbeReport). */
  probeLoopP99Ms: number;
}

/**
 * Phases 2 and 3: the dispatcher's backlog, drained from the moment the child listens, with GET
 * /me probed from its ready message until the backlog is drained or the bound passes. The CPU is
 * metered from the ready message too: the seeding and the fan-out before it are not counted.
 */
async function measureDrain(server: ServerChild, receiver: Receiver, backlogEnd: number): Promise<Drain> {
  const stopCpu = await cpuMeter(server);
  const probe = probeMe(server);
  const doneAt = await Promise.race([receiver.waitFor(backlogEnd, DRAIN_TIMEOUT_MS), probe.failed]);
  const report = await probe.stop();
  const cpu = await stopCpu(report.cpuMicros);
  const me = new LatencyHistogram();
  for (const ms of report.latenciesMs) me.record(ms);
  const arrivals = receiver.phase();
  console.log(
    `   dispatcher: ${integer(arrivals.received)} of ${integer(THROUGHPUT_DELIVERIES)} deliveries${doneAt === undefined ? ` when the ${DRAIN_TIMEOUT_MS / 1000} s bound passed` : ''}; ${integer(report.total)} GET ${ME_PATH} meanwhile, all 200`,
  );
  return { perSecond: deliveriesPerSecond(arrivals), cpu, complete: doneAt !== undefined, me, probeLoopP99Ms: report.loopDelayP99Ms };
}

interface Steady {
  /** Sorted, in ms, missing deliveries included (as late as the bound). */
  latencies: number[];
  cpu: Cpu;
}

/**
 * Phase 4: a steady rate for a fixed time; every delivery of an event created from now on is
 * timed. Deliveries still missing at the end of the bound are counted as late as the bound.
 */
async function measureSteady(server: ServerChild, receiver: Receiver, backlogEnd: number): Promise<Steady> {
  const before = receiver.count();
  const stopCpu = await cpuMeter(server);
  const stopTracking = receiver.trackLatencyFrom(Date.now());
  const started = performance.now();
  const events = await postEventsSteadily(server, STEADY_SECONDS, STEADY_RATE);
  const postSeconds = (performance.now() - started) / 1000;
  const expected = events * WEBHOOK_SUBSCRIPTIONS;
  const done = await receiver.waitFor(Math.max(before, backlogEnd) + expected, STEADY_DRAIN_TIMEOUT_MS);
  const latencies = stopTracking();
  const cpu = await stopCpu();
  const missing = Math.max(0, expected - latencies.length);
  const lateMs = performance.now() - started;
  for (let i = 0; i < missing; i++) latencies.push(lateMs);
  latencies.sort((a, b) => a - b);
  console.log(
    `   steady: ${events} events POSTed in ${postSeconds.toFixed(1)} s (${Math.round(events / postSeconds)}/s, target ${STEADY_RATE}/s); ${done === undefined && missing > 0 ? `${missing} of ${expected} deliveries missing after a ${STEADY_DRAIN_TIMEOUT_MS / 1000} s drain, counted as ${seconds(lateMs)} late` : `all ${expected} deliveries received`}`,
  );
  return { latencies, cpu };
}

/** Server CPU per delivery, in µs: unlike the rate, it does not move when the receiver or another process is the limit. */
const cpuPerDelivery = (t: Throughput) => (t.perSecond > 0 ? ((t.cpu.server * 1e6) / t.perSecond).toFixed(0) : '');

function printTable(baseline: Throughput, drain: Drain, steady: Steady): void {
  const cpuCells = (cpu: Cpu) => [pct(cpu.server), pct(cpu.load), pct(cpu.other)];
  console.log(
    formatTable(
      ['phase', 'figure', 'p50 ms', 'p99 ms', 'µs server CPU/delivery', 'server CPU', 'bench CPU (receiver+load)', 'other CPU'],
      [
        [
          `baseline: bare node:https sender, ${integer(THROUGHPUT_DELIVERIES)} bodies`,
          `${integer(baseline.perSecond)} deliveries/s`,
          '',
          '',
          cpuPerDelivery(baseline),
          ...cpuCells(baseline.cpu),
        ],
        [
          `dispatcher: backlog of ${integer(WEBHOOK_BACKLOG_EVENTS)} events × ${WEBHOOK_SUBSCRIPTIONS}`,
          `${integer(drain.perSecond)} deliveries/s`,
          '',
          '',
          cpuPerDelivery(drain),
          ...cpuCells(drain.cpu),
        ],
        [
          `GET ${ME_PATH} at ${PROBE_RATE}/s during the drain`,
          `${integer(drain.me.count)} requests`,
          drain.me.percentile(50).toFixed(2),
          drain.me.percentile(99).toFixed(2),
          '',
          '',
          '',
          '',
        ],
        [
          `steady ${STEADY_RATE} events/s × ${STEADY_SECONDS} s (commit to receipt)`,
          `${integer(steady.latencies.length)} deliveries`,
          percentile(steady.latencies, 50).toFixed(0),
          percentile(steady.latencies, 99).toFixed(0),
          '',
          ...cpuCells(steady.cpu),
        ],
      ],
    ),
  );
  const worstOther = Math.max(baseline.cpu.other, drain.cpu.other, steady.cpu.other);
  if (worstOther > BUSY_MACHINE_CORES) {
    console.log(
      `WARNING: other processes took up to ${pct(worstOther)} of a core during a measured phase; run again on a quiet machine before recording these figures`,
    );
  }
}

/** Phases 2 to 4 on the courtier-webhooks child, whose backlog is recorded before it listens. */
async function measureDispatcher(ctx: BenchContext, receiver: Receiver): Promise<{ drain: Drain; steady: Steady }> {
  const base = receiver.count();
  const backlogEnd = base + THROUGHPUT_DELIVERIES;
  // Started before the child: its first deliveries may arrive before it says it is ready.
  receiver.startPhase(THROUGHPUT_DELIVERIES);
  const startedAt = performance.now();
  const server = await startServerChild('courtier-webhooks', ctx.tempDir('courtier-webhooks'), ctx.child);
  try {
    console.log(
      `   courtier-webhooks: ${integer(WEBHOOK_BACKLOG_EVENTS)} events recorded, listening after ${seconds(performance.now() - startedAt)}`,
    );
    const drain = await measureDrain(server, receiver, backlogEnd);
    // What is left of the backlog is still being sent during the latency phase: say so.
    if (!drain.complete)
      console.log(
        `   backlog not drained (${integer(receiver.count() - base)} of ${integer(THROUGHPUT_DELIVERIES)}); the latency phase competes with it`,
      );
    const steady = await measureSteady(server, receiver, backlogEnd);
    return { drain, steady };
  } finally {
    await server.stop();
  }
}

export const benchmark: Benchmark = {
  name: 'webhooks',
  description: `webhook deliveries to ${WEBHOOK_SUBSCRIPTIONS} HTTPS subscriptions (events ["*"]): a backlog of ${WEBHOOK_BACKLOG_EVENTS.toLocaleString('en-US')} events drained vs a bare node:https sender, GET /me during the drain, commit-to-receipt latency at ${STEADY_RATE} events/s`,
  async run(ctx) {
    const receiver = await startReceiver();
    process.env[WEBHOOK_RECEIVER_URL_ENV] = receiver.url;
    process.env[WEBHOOK_RECEIVER_CA_ENV] = receiver.ca;
    try {
      const baseline = await measureBaseline(ctx, receiver);
      const { drain, steady } = await measureDispatcher(ctx, receiver);
      printTable(baseline, drain, steady);

      const ratio = baseline.perSecond > 0 ? drain.perSecond / baseline.perSecond : 0;
      const meP99 = drain.me.percentile(99);
      const p99 = percentile(steady.latencies, 99);
      const goals = [
        {
          met: drain.perSecond >= GOAL_DELIVERIES_PER_S,
          line: `dispatcher deliveries/s: ${integer(drain.perSecond)} (goal >= ${integer(GOAL_DELIVERIES_PER_S)})`,
        },
        {
          met: ratio >= GOAL_BASELINE_RATIO,
          line: `dispatcher / baseline: ${ratio.toFixed(2)}, ${integer(drain.perSecond)} vs ${integer(baseline.perSecond)} deliveries/s (goal >= ${GOAL_BASELINE_RATIO})`,
        },
        {
          met: meP99 < GOAL_ME_P99_MS,
          line: `GET ${ME_PATH} p99 during the drain: ${meP99.toFixed(2)} ms, p50 ${drain.me.percentile(50).toFixed(2)} ms (goal < ${GOAL_ME_P99_MS}; measured from a process of its own, whose event loop was late by up to ${drain.probeLoopP99Ms.toFixed(1)} ms at p99)`,
        },
        {
          met: p99 < GOAL_P99_MS,
          line: `commit-to-receipt p99 at ${STEADY_RATE} events/s: ${p99.toFixed(0)} ms, p50 ${percentile(steady.latencies, 50).toFixed(0)} ms (goal < ${GOAL_P99_MS})`,
        },
      ];
      for (const goal of goals) console.log(goalLine(goal.line, goal.met));
      const goalMet = goals.every((g) => g.met);
      const summary = `${integer(drain.perSecond)} deliveries/s (${ratio.toFixed(2)}× bare), /me p99 ${meP99.toFixed(1)} ms during the drain, latency p99 ${p99.toFixed(0)} ms: ${goalMet ? 'all goals met' : 'MISSED'}`;
      return { goalMet, summary };
    } finally {
      await receiver.close();
      delete process.env[WEBHOOK_RECEIVER_URL_ENV];
      delete process.env[WEBHOOK_RECEIVER_CA_ENV];
    }
  },
};
