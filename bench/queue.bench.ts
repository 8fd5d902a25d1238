/**
 * What the durable tarification queue itself costs, with a robot that does nothing.
 *
 * In-process: the real app (buildApp, real SQLite file, real worker, the webhook dispatcher on its
 * thread as `courtier serve` runs it) with one no-op insurer whose run() answers at once. Each enqueue is what the enqueue route does once its request is parsed:
 * the service's enqueueTarification with its response stored under a fresh Idempotency-Key, in
 * the connection's commit group (the enqueues of one turn of the event loop share a transaction,
 * as concurrent POSTs do). The job's signal wakes the worker.
 *
 * (a) pickup latency: one job at a time, the time from the enqueue's call to the adapter's run()
 *     being called (the enqueue's commit, the signal's turn, the claim's commit).
 * (b) throughput: 5,000 jobs enqueued in chunks of 100 per turn (the worker drains while jobs
 *     arrive), timed from the first enqueue until every job is terminal. Before it, 1,000 jobs go
 *     through the same way untimed: the service runs for hours, and the first thousands of jobs
 *     after a start cost more each (the phase run first was the dearer, whichever it was).
 * (c) enqueue only, the worker stopped; then drain only, the worker started and timed alone.
 *
 * At most one job runs per insurer login (cabinet + insurer), so the jobs are spread over as many
 * cabinets as the worker has slots: with a single cabinet the queue runs one job at a time. Each
 * cabinet's jobs run one after another, oldest first, so all are terminal once each cabinet's last
 * one is: the benchmark polls those, not a count over the table (which cost as much as a job).
 *
 * Baseline, same run: the queue's essential work done bare on its own SQLite file: each enqueue
 * inserts a job row in its own transaction, and as many loops as the worker has slots each claim
 * the oldest pending row (UPDATE … RETURNING, one transaction), run nothing, and mark it done (a
 * second transaction). Goals: >= 1,500 jobs/s enqueue + drain, pickup p99 < 10 ms.
 */
import { randomUUID } from 'node:crypto';
import { devNull, loadavg } from 'node:os';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { enqueueTarification as enqueueEndpoint } from '../shared/automation.js';
import { pathTo } from '../shared/endpoint.js';
import { buildApp } from '../server/app.js';
import { enqueueTarification } from '../server/automation/service.js';
import { loadConfig } from '../server/config.js';
import { setInsurerCredentials } from '../server/credentials/service.js';
import { databaseFile, openDatabase } from '../server/platform/db/open.js';
import { defaultDeps } from '../server/deps.js';
import { createLogger, logDestination } from '../server/platform/logging.js';
import type { Insurer } from '../server/insurers/registry.js';
import { initCabinet } from '../server/tenancy/service.js';
import { grantCredits } from '../server/wallet/service.js';
import type { Benchmark } from './benchmark.js';
import { cpuCount, machineIdleMicros } from './lib/machine.js';
import { formatTable, goalLine } from './lib/report.js';
import { percentile } from './lib/latency.js';

const WORKER_CONCURRENCY = 2;
const LATENCY_WARMUP_JOBS = 20;
const LATENCY_JOBS = 300;
const THROUGHPUT_WARMUP_JOBS = 1_000;
const THROUGHPUT_JOBS = 5_000;
const CHUNK = 100;
const GOAL_JOBS_PER_SECOND = 1_500;
const GOAL_PICKUP_P99_MS = 10;
const NOOP = 'noop';

function loadLine(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

interface ThroughputResult {
  jobs: number;
  seconds: number;
  enqueueSeconds: number;
  cpuMicros: number;
  pickupsMs: number[];
  otherCores: number;
}

/** Cores the rest of the machine used over a span, given this process's CPU over it. */
function otherCores(idleBefore: number, seconds: number, ownMicros: number): number {
  const busy = cpuCount() * seconds - (machineIdleMicros() - idleBefore) / 1e6;
  return Math.max(0, busy - ownMicros / 1e6) / seconds;
}

/** The baseline: `jobs` enqueued in chunks while `workers` loops claim and finish them, on a bare SQLite file. */
async function bareQueue(file: string, jobs: number, workers: number): Promise<{ seconds: number; cpuMicros: number }> {
  const sqlite = openDatabase(file, { backgroundCheckpoints: {} });
  try {
    const db = sqlite.sqlite;
    db.exec(`CREATE TABLE bare_jobs (id INTEGER PRIMARY KEY, cabinet_id TEXT NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL, lease_until INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
             CREATE INDEX bare_jobs_queue ON bare_jobs (status, created_at)`);
    const insert = db.prepare(`INSERT INTO bare_jobs (cabinet_id, payload, status, created_at, updated_at) VALUES (?, ?, 'pending', ?, ?)`);
    const claim = db.prepare(
      `UPDATE bare_jobs SET status = 'running', lease_until = ?, updated_at = ? WHERE id = (SELECT id FROM bare_jobs WHERE status = 'pending' ORDER BY created_at LIMIT 1) RETURNING id`,
    );
    const finish = db.prepare(`UPDATE bare_jobs SET status = 'done', lease_until = NULL, updated_at = ? WHERE id = ?`);
    const enqueue = db.transaction((n: number) => insert.run(`cabinet-${n % workers}`, JSON.stringify({ n }), Date.now(), Date.now()));
    const claimOne = db.transaction(() => claim.get(Date.now() + 60_000, Date.now()) as { id: number } | undefined);
    const finishOne = db.transaction((id: number) => finish.run(Date.now(), id));
    let done = 0;
    let enqueued = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const loop = async () => {
      while (done < jobs) {
        const job = enqueued > done ? claimOne.immediate() : undefined;
        await yieldToLoop();
        if (!job) continue;
        finishOne.immediate(job.id);
        done += 1;
      }
    };
    const drained = Promise.all(Array.from({ length: workers }, loop));
    for (let i = 0; i < jobs; i += CHUNK) {
      for (let j = i; j < Math.min(jobs, i + CHUNK); j++) enqueue.immediate(j);
      enqueued = Math.min(jobs, i + CHUNK);
      await yieldToLoop();
    }
    await drained;
    const cpu = process.cpuUsage(cpuBefore);
    return { seconds: (performance.now() - started) / 1000, cpuMicros: cpu.user + cpu.system };
  } finally {
    sqlite.close();
  }
}

export const benchmark: Benchmark = {
  name: 'queue',
  description: `the tarification queue with a no-op robot, in-process: enqueue→pickup latency, and jobs/s for ${THROUGHPUT_JOBS} jobs over ${WORKER_CONCURRENCY} cabinets (${WORKER_CONCURRENCY} workers)`,
  async run(ctx) {
    console.log(`   load average before (1/5/15 min): ${loadLine()}`);
    const dataDir = ctx.tempDir('queue');
    const config = loadConfig(
      {
        dataDir,
        host: '127.0.0.1',
        port: 0,
        logLevel: 'info',
        workerConcurrency: WORKER_CONCURRENCY,
        tarificationQuotaPerHour: 1_000_000,
        sandbox: false,
      },
      {},
    );
    const db = openDatabase(databaseFile(dataDir), { backgroundCheckpoints: {} });

    const pickedUpAt = new Map<string, number>();
    const noop: Insurer = {
      code: NOOP,
      name: 'No-op Assurances',
      version: '1.0.0',
      products: [{ code: 'auto', label: 'Auto', kind: 'quote', schema: z.object({ n: z.number().int() }), example: { n: 1 } }],
      async run(robot) {
        pickedUpAt.set(robot.jobId, performance.now());
        return { tarif_eur: 1, outcome: 'partial' };
      },
    };
    const deps = defaultDeps(db, config, { insurers: [noop], env: {} });
    const logger = createLogger({ level: config.logLevel, stream: logDestination(devNull) });
    // The service's webhook dispatcher: on its own thread (no subscription here: it only moves its outbox position).
    const app = await buildApp(deps, { logger });
    try {
      await app.ready(); // onReady starts the worker (the browser is never launched: the no-op robot opens no page)
      const worker = app.robotWorker;
      const cabinets: string[] = [];
      for (let i = 0; i < WORKER_CONCURRENCY; i++) {
        const { cabinet_id } = await initCabinet(deps, {
          cabinet: `Cabinet Queue ${i}`,
          email: `queue-${i}@example.fr`,
          password: 'correct horse battery staple',
        });
        grantCredits(deps, cabinet_id, 10_000_000);
        setInsurerCredentials(deps, cabinet_id, NOOP, { login: `login-${i}`, password: 'secret' });
        cabinets.push(cabinet_id);
      }
      const statusOf = db.sqlite.prepare<[string], string>('SELECT status FROM jobs WHERE id = ?').pluck();
      const isTerminal = (jobId: string) => ['completed', 'partial', 'failed', 'cancelled'].includes(statusOf.get(jobId) ?? '');
      const notPartial = db.sqlite.prepare<[], number>(`SELECT count(*) FROM jobs WHERE status <> 'partial'`).pluck();
      const endpoint = `POST ${pathTo(enqueueEndpoint)}`;
      let seq = 0;
      /** The enqueue route's work for one request (see the header); resolves with the job's id once committed. */
      const enqueue = async (cabinetId: string): Promise<string> => {
        seq += 1;
        const request = { compagnie: NOOP, produit: 'auto', dicData: { n: seq } };
        const outcome = await app.idempotency.onceInGroup(
          { id: { cabinetId, caller: 'key:bench', endpoint, key: randomUUID() }, requestHash: String(seq) },
          () => {
            const enqueued = enqueueTarification(deps, cabinetId, request, 'prod');
            const response = {
              statusCode: 202,
              body: JSON.stringify(enqueued),
              headers: { 'content-type': 'application/json', location: enqueued.poll_url },
            };
            return { response, stored: response };
          },
        );
        return (JSON.parse(outcome.response.body) as { job_id: string }).job_id;
      };
      /** Enqueues `count` jobs over the cabinets, `perTurn` per turn of the event loop; the enqueue time of each job by id, and each cabinet's last job. */
      const enqueueMany = async (count: number, perTurn: number) => {
        const enqueuedAt = new Map<string, number>();
        const lastOfCabinet = new Map<string, string>();
        for (let i = 0; i < count; i += perTurn) {
          const turn = Array.from({ length: Math.min(perTurn, count - i) }, (_, j) => {
            const cabinetId = cabinets[(i + j) % cabinets.length] ?? '';
            const calledAt = performance.now();
            return enqueue(cabinetId).then((jobId) => {
              enqueuedAt.set(jobId, calledAt);
              lastOfCabinet.set(cabinetId, jobId);
            });
          });
          await Promise.all(turn);
        }
        return { enqueuedAt, lastJobs: [...lastOfCabinet.values()] };
      };
      const waitAllTerminal = async (lastJobs: readonly string[]) => {
        while (!lastJobs.every(isTerminal)) await sleep(5);
      };

      // (a) one job at a time: enqueue (its signal wakes the worker), wait until the robot ran and the job is terminal.
      const single = async (): Promise<number> => {
        const called = performance.now();
        const jobId = await enqueue(cabinets[0] ?? '');
        while (!isTerminal(jobId)) await yieldToLoop();
        const picked = pickedUpAt.get(jobId);
        if (picked === undefined) throw new Error(`job ${jobId} ended without its robot being run`);
        return picked - called;
      };
      for (let i = 0; i < LATENCY_WARMUP_JOBS; i++) await single();
      const latencies: number[] = [];
      for (let i = 0; i < LATENCY_JOBS; i++) latencies.push(await single());
      latencies.sort((a, b) => a - b);

      // (b) enqueue while the worker drains: once untimed, then measured.
      await waitAllTerminal((await enqueueMany(THROUGHPUT_WARMUP_JOBS, CHUNK)).lastJobs);
      const throughput = async (): Promise<ThroughputResult> => {
        const cpuBefore = process.cpuUsage();
        const idleBefore = machineIdleMicros();
        const started = performance.now();
        const { enqueuedAt, lastJobs } = await enqueueMany(THROUGHPUT_JOBS, CHUNK);
        const enqueueSeconds = (performance.now() - started) / 1000;
        await waitAllTerminal(lastJobs);
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const pickupsMs = [...enqueuedAt].map(([id, t]) => (pickedUpAt.get(id) ?? Number.NaN) - t).sort((a, b) => a - b);
        return {
          jobs: THROUGHPUT_JOBS,
          seconds,
          enqueueSeconds,
          cpuMicros: cpu.user + cpu.system,
          pickupsMs,
          otherCores: otherCores(idleBefore, seconds, cpu.user + cpu.system),
        };
      };
      const mixed = await throughput();

      // (c) drain only: the same number of jobs already queued when the worker starts.
      await worker.stop();
      const enqueueCpuBefore = process.cpuUsage();
      const enqueueStarted = performance.now();
      const { lastJobs } = await enqueueMany(THROUGHPUT_JOBS, CHUNK);
      const enqueueOnlySeconds = (performance.now() - enqueueStarted) / 1000;
      const enqueueCpu = process.cpuUsage(enqueueCpuBefore);
      const drainCpuBefore = process.cpuUsage();
      const drainIdleBefore = machineIdleMicros();
      const drainStarted = performance.now();
      worker.start();
      await waitAllTerminal(lastJobs);
      const drainSeconds = (performance.now() - drainStarted) / 1000;
      const drainCpu = process.cpuUsage(drainCpuBefore);
      const drainOther = otherCores(drainIdleBefore, drainSeconds, drainCpu.user + drainCpu.system);

      const wrong = notPartial.get() ?? 0;
      if (wrong > 0) throw new Error(`${wrong} jobs did not end as partial (the no-op robot's outcome)`);
      await worker.stop();
      const bare = await bareQueue(databaseFile(ctx.tempDir('queue-bare')), THROUGHPUT_JOBS, WORKER_CONCURRENCY);

      const fmt = (n: number, d = 2) => n.toFixed(d);
      const rate = (jobs: number, s: number) => Math.round(jobs / s).toString();
      console.log(
        formatTable(
          ['measure', 'jobs', 'seconds', 'jobs/s', 'p50 ms', 'p99 ms', 'max ms', 'µs CPU/job', 'other cores'],
          [
            [
              '(a) enqueue→pickup, one job at a time',
              String(latencies.length),
              '',
              '',
              fmt(percentile(latencies, 50)),
              fmt(percentile(latencies, 99)),
              fmt(latencies.at(-1) ?? Number.NaN),
              '',
              '',
            ],
            [
              `(b) enqueue+drain, ${cabinets.length} cabinets`,
              String(mixed.jobs),
              fmt(mixed.seconds),
              rate(mixed.jobs, mixed.seconds),
              fmt(percentile(mixed.pickupsMs, 50)),
              fmt(percentile(mixed.pickupsMs, 99)),
              fmt(mixed.pickupsMs.at(-1) ?? Number.NaN),
              Math.round(mixed.cpuMicros / mixed.jobs).toString(),
              fmt(mixed.otherCores),
            ],
            ['    of which enqueueing (chunks of 100)', String(mixed.jobs), fmt(mixed.enqueueSeconds), '', '', '', '', '', ''],
            [
              '(c) enqueue only, worker stopped',
              String(THROUGHPUT_JOBS),
              fmt(enqueueOnlySeconds),
              rate(THROUGHPUT_JOBS, enqueueOnlySeconds),
              '',
              '',
              '',
              Math.round((enqueueCpu.user + enqueueCpu.system) / THROUGHPUT_JOBS).toString(),
              '',
            ],
            [
              `(c) drain only, ${cabinets.length} cabinets`,
              String(THROUGHPUT_JOBS),
              fmt(drainSeconds),
              rate(THROUGHPUT_JOBS, drainSeconds),
              '',
              '',
              '',
              Math.round((drainCpu.user + drainCpu.system) / THROUGHPUT_JOBS).toString(),
              fmt(drainOther),
            ],
            [
              `bare: insert, claim, finish, ${WORKER_CONCURRENCY} loops`,
              String(THROUGHPUT_JOBS),
              fmt(bare.seconds),
              rate(THROUGHPUT_JOBS, bare.seconds),
              '',
              '',
              '',
              Math.round(bare.cpuMicros / THROUGHPUT_JOBS).toString(),
              '',
            ],
          ],
        ),
      );
      console.log(`   (b) measured after ${THROUGHPUT_WARMUP_JOBS} jobs enqueued and drained the same way, untimed`);
      console.log(
        `   jobs spread over ${cabinets.length} cabinets = worker concurrency ${config.workerConcurrency} (one job at a time per cabinet + insurer login)`,
      );
      console.log(
        `   'other cores': CPU the rest of the machine used meanwhile (of ${cpuCount()}); the queue runs on one core (one Node thread)`,
      );
      console.log(`   load average after (1/5/15 min): ${loadLine()}`);
      const jobsPerSecond = mixed.jobs / mixed.seconds;
      const bareRate = THROUGHPUT_JOBS / bare.seconds;
      const rateMet = jobsPerSecond >= GOAL_JOBS_PER_SECOND;
      const pickupP99 = percentile(latencies, 99);
      const pickupMet = pickupP99 < GOAL_PICKUP_P99_MS;
      console.log(
        goalLine(
          `queue throughput (enqueue+drain): ${Math.round(jobsPerSecond)} jobs/s, bare ${Math.round(bareRate)}: ratio ${(jobsPerSecond / bareRate).toFixed(2)} (goal >= ${GOAL_JOBS_PER_SECOND} jobs/s)`,
          rateMet,
        ),
      );
      console.log(
        goalLine(
          `pickup latency p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(pickupP99)} ms (goal p99 < ${GOAL_PICKUP_P99_MS})`,
          pickupMet,
        ),
      );
      const goalMet = rateMet && pickupMet;
      return {
        goalMet,
        summary: `${Math.round(jobsPerSecond)} jobs/s (bare ${Math.round(bareRate)}), pickup p99 ${fmt(pickupP99)} ms: ${goalMet ? 'met' : 'MISSED'}`,
      };
    } finally {
      await app.close();
      db.close();
    }
  },
};
