/**
 * Issue 4: webhook delivery. The real app (in a server child) with 10 subscriptions to every
 * event, all pointing at an HTTPS receiver in this process answering 200.
 *
 *  - throughput: 10,000 events (POSTed opportunities) as fast as they come, until the receiver has
 *    had the 100,000 deliveries: goal >= 1,000 deliveries/s;
 *  - latency: events at a steady 500/s for 10 s, from the event's created_at (its commit) to its
 *    receipt, p50 and p99: goal p99 < 250 ms.
 */
import autocannon from 'autocannon';
import { createServer, type Server } from 'node:https';
import { generate } from 'selfsigned';
import type { Benchmark } from './benchmark.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { LatencyHistogram } from './lib/latency.js';
import { cpuCount, machineIdleMicros } from './lib/machine.js';
import { WEBHOOK_RECEIVER_CA_ENV, WEBHOOK_RECEIVER_URL_ENV, WEBHOOK_SUBSCRIPTIONS } from './lib/protocol.js';
import { formatTable } from './lib/report.js';
import { createOpportunity } from '../shared/crm-endpoints.js';
import { pathTo } from '../shared/endpoint.js';

declare module 'autocannon' {
  interface Options {
    body?: string;
    idReplacement?: boolean;
    /** Requests to send in all, then stop. */
    amount?: number;
    /** Requests per second across all connections. */
    overallRate?: number;
  }
}

const CREATE_PATH = pathTo(createOpportunity);
const THROUGHPUT_EVENTS = 10_000;
const STEADY_RATE = 500;
const STEADY_SECONDS = 10;
/** Bounds that keep the whole benchmark near two minutes even when the dispatcher falls behind. */
const THROUGHPUT_TIMEOUT_MS = 60_000;
const STEADY_DRAIN_TIMEOUT_MS = 15_000;

const GOAL_DELIVERIES_PER_S = 1_000;
const GOAL_P99_MS = 250;

const CREATE_BODY = JSON.stringify({ title: 'Webhook bench [<id>]', product: 'auto', contact: { last_name: 'Bench' }, expected_value_eur: 100 });

interface Receiver {
  url: string;
  ca: string;
  /** Deliveries received so far. */
  count(): number;
  /** From now on, records created_at → receipt latency for events created at or after `since` (epoch ms). */
  trackLatencyFrom(since: number, histogram: LatencyHistogram): void;
  /** Resolves with the time (performance.now()) at which `n` deliveries had arrived, or undefined on timeout. */
  waitFor(n: number, timeoutMs: number): Promise<number | undefined>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] }],
  });
  let received = 0;
  let tracking: { since: number; histogram: LatencyHistogram } | undefined;
  const waiters: { n: number; resolve: (at: number) => void }[] = [];
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      received += 1;
      if (tracking) {
        const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
        const createdAt = Date.parse(envelope.created_at);
        if (createdAt >= tracking.since) tracking.histogram.record(receivedAt - createdAt);
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      for (let i = waiters.length - 1; i >= 0; i--) {
        const waiter = waiters[i];
        if (waiter && received >= waiter.n) {
          waiters.splice(i, 1);
          waiter.resolve(performance.now());
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    ca: pems.cert,
    count: () => received,
    trackLatencyFrom: (since, histogram) => void (tracking = { since, histogram }),
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

function postEvents(server: ServerChild, limit: { amount: number } | { seconds: number }, overallRate?: number) {
  return autocannon({
    url: server.origin + CREATE_PATH,
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json', 'idempotency-key': 'wh-[<id>]' },
    body: CREATE_BODY,
    idReplacement: true,
    connections: 10,
    ...('amount' in limit ? { amount: limit.amount } : { duration: limit.seconds }),
    ...(overallRate ? { overallRate } : {}),
    pipelining: 1,
    timeout: 10,
  });
}

/** The number of events recorded (201s); any other answer fails the run. */
async function createdCount(run: ReturnType<typeof postEvents>, label: string): Promise<number> {
  const result = await run;
  const created = result.statusCodeStats['201']?.count ?? 0;
  if (created !== result.requests.total || result.errors + result.timeouts > 0) {
    const statuses = Object.entries(result.statusCodeStats).map(([code, { count }]) => `${code}×${count}`).join(', ');
    throw new Error(`${label}: not every response was a 201 (${statuses || 'none'}; errors ${result.errors}, timeouts ${result.timeouts})`);
  }
  return created;
}

interface Cpu {
  server: number;
  load: number;
  other: number;
}

/** CPU of the server child, of this process (autocannon + receiver) and of the rest, in cores, over a phase. */
async function cpuMeter(server: ServerChild): Promise<() => Promise<Cpu>> {
  const serverBefore = await server.cpuMicros();
  const loadBefore = process.cpuUsage();
  const idleBefore = machineIdleMicros();
  const started = performance.now();
  return async () => {
    const wall = (performance.now() - started) * 1000;
    const idle = machineIdleMicros() - idleBefore;
    const load = process.cpuUsage(loadBefore);
    const serverCores = ((await server.cpuMicros()) - serverBefore) / wall;
    const loadCores = (load.user + load.system) / wall;
    return { server: serverCores, load: loadCores, other: Math.max(0, cpuCount() - idle / wall - serverCores - loadCores) };
  };
}

const pct = (cores: number) => `${Math.round(cores * 100)}%`;

export const benchmark: Benchmark = {
  name: 'webhooks',
  description: `webhook deliveries to ${WEBHOOK_SUBSCRIPTIONS} HTTPS subscriptions (events ["*"]): deliveries/s for ${THROUGHPUT_EVENTS.toLocaleString('en-US')} events, commit-to-receipt latency at ${STEADY_RATE} events/s`,
  async run(ctx) {
    const receiver = await startReceiver();
    process.env[WEBHOOK_RECEIVER_URL_ENV] = receiver.url;
    process.env[WEBHOOK_RECEIVER_CA_ENV] = receiver.ca;
    let server: ServerChild | undefined;
    try {
      server = await startServerChild('courtier-webhooks', ctx.tempDir('courtier-webhooks'), ctx.child);

      // Throughput: every event at once (as fast as POST allows), time until the last delivery,
      // bounded: past the timeout the POSTs stop and the rate is what arrived so far.
      const target = THROUGHPUT_EVENTS * WEBHOOK_SUBSCRIPTIONS;
      const stopThroughputCpu = await cpuMeter(server);
      const started = performance.now();
      const posting = postEvents(server, { amount: THROUGHPUT_EVENTS });
      const created = createdCount(posting, 'throughput POSTs').then((n) => ({ n, at: performance.now() }));
      const doneAt = await receiver.waitFor(target, THROUGHPUT_TIMEOUT_MS);
      posting.stop();
      const posted = await created;
      const throughputCpu = await stopThroughputCpu();
      const throughputSeconds = ((doneAt ?? performance.now()) - started) / 1000;
      const deliveredInPhase = Math.min(receiver.count(), target);
      const deliveriesPerSecond = deliveredInPhase / throughputSeconds;
      console.log(
        `   throughput: ${posted.n} events POSTed in ${((posted.at - started) / 1000).toFixed(1)} s; ${deliveredInPhase.toLocaleString('en-US')} of ${(posted.n * WEBHOOK_SUBSCRIPTIONS).toLocaleString('en-US')} deliveries in ${throughputSeconds.toFixed(1)} s${doneAt === undefined ? ` (stopped at the ${THROUGHPUT_TIMEOUT_MS / 1000} s bound)` : ''}`,
      );
      // Whatever is left of the backlog is still being sent during the latency phase: say so.
      const backlog = posted.n * WEBHOOK_SUBSCRIPTIONS;
      if ((await receiver.waitFor(backlog, 5_000)) === undefined) console.log(`   backlog not drained (${receiver.count()} of ${backlog}); the latency phase competes with it`);

      // Latency: a steady rate for a fixed time; every delivery of an event created from now on is timed.
      const latency = new LatencyHistogram();
      const before = receiver.count();
      const stopSteadyCpu = await cpuMeter(server);
      receiver.trackLatencyFrom(Date.now(), latency);
      const steadyStarted = performance.now();
      const steadyEvents = await createdCount(postEvents(server, { seconds: STEADY_SECONDS }, STEADY_RATE), 'steady POSTs');
      const steadyPostSeconds = (performance.now() - steadyStarted) / 1000;
      const expected = steadyEvents * WEBHOOK_SUBSCRIPTIONS;
      const steadyDone = await receiver.waitFor(Math.max(before, backlog) + expected, STEADY_DRAIN_TIMEOUT_MS);
      const steadyCpu = await stopSteadyCpu();
      const missing = Math.max(0, expected - latency.count);
      // A delivery still missing at the deadline is at least that late: counted at the deadline.
      const lateBound = (performance.now() - steadyStarted) / 1000;
      for (let i = 0; i < missing; i++) latency.record(lateBound * 1000);
      console.log(
        `   steady: ${steadyEvents} events POSTed in ${steadyPostSeconds.toFixed(1)} s (${Math.round(steadyEvents / steadyPostSeconds)}/s, target ${STEADY_RATE}/s); ${steadyDone === undefined && missing > 0 ? `${missing} of ${expected} deliveries missing after a ${STEADY_DRAIN_TIMEOUT_MS / 1000} s drain, counted as ${lateBound.toFixed(1)} s late` : `all ${expected} deliveries received`}`,
      );

      console.log(
        formatTable(
          ['phase', 'figure', 'p50 ms', 'p99 ms', 'server CPU', 'bench CPU (load+receiver)', 'other CPU'],
          [
            [`throughput (${posted.n} events × ${WEBHOOK_SUBSCRIPTIONS})`, `${Math.round(deliveriesPerSecond)} deliveries/s`, '', '', pct(throughputCpu.server), pct(throughputCpu.load), pct(throughputCpu.other)],
            [
              `steady ${STEADY_RATE} events/s × ${STEADY_SECONDS} s (latency)`,
              `${latency.count.toLocaleString('en-US')} deliveries`,
              latency.percentile(50).toFixed(0),
              latency.percentile(99).toFixed(0),
              pct(steadyCpu.server),
              pct(steadyCpu.load),
              pct(steadyCpu.other),
            ],
          ],
        ),
      );
      const worstOther = Math.max(throughputCpu.other, steadyCpu.other);
      if (worstOther > 0.15) {
        console.log(`WARNING: other processes took up to ${pct(worstOther)} of a core during a measured phase; run again on a quiet machine before recording these figures`);
      }
      const rateMet = deliveriesPerSecond >= GOAL_DELIVERIES_PER_S;
      const p99 = latency.percentile(99);
      const p99Met = p99 < GOAL_P99_MS;
      console.log(`deliveries/s: ${Math.round(deliveriesPerSecond)} (goal >= ${GOAL_DELIVERIES_PER_S}) ${rateMet ? 'goal met' : 'MISSED'}`);
      console.log(`commit-to-receipt p99 at ${STEADY_RATE} events/s: ${p99.toFixed(0)} ms, p50 ${latency.percentile(50).toFixed(0)} ms (goal < ${GOAL_P99_MS}) ${p99Met ? 'goal met' : 'MISSED'}`);
      const goalMet = rateMet && p99Met;
      return { goalMet, summary: `${Math.round(deliveriesPerSecond)} deliveries/s, latency p99 ${p99.toFixed(0)} ms: ${goalMet ? 'all goals met' : 'MISSED'}` };
    } finally {
      await server?.stop();
      await receiver.close();
      delete process.env[WEBHOOK_RECEIVER_URL_ENV];
      delete process.env[WEBHOOK_RECEIVER_CA_ENV];
    }
  },
};
