/**
 * A real robot (playwright-core driving Chromium) pricing on the sandbox insurer portal
 * that the service itself serves, end to end through the HTTP API with test keys (jobs run on the
 * sandbox with the demo account).
 *
 * The portal is the outside world (an insurer's web server): it runs in a process of its own
 * (bench/server-child.ts, target sandbox-portal), in mode normal with latency 0, so that it adds no
 * think time and its CPU is not counted as the service's. Its CPU per job is shown beside.
 * The benchmark sees each job end through the service's job signal (what the console's live feed
 * listens to), and reads the job over HTTP then: no polling loop on the service's CPU.
 *
 * Phases: one job with a cold browser (includes launching Chromium), 3 jobs one after another with
 * the browser warm, then 4 jobs in parallel (4 cabinets, worker concurrency 4: one login each).
 * All but the 4 parallel jobs are the first cabinet's: from its second job on, each resumes the
 * browser session its previous job left logged in (as a broker's series of quotes does), and in
 * the parallel phase that cabinet's job does too, the three others log in.
 * Memory: every ~100 ms, RSS of this process (the service) plus every process descended from it
 * (Chromium's browser, zygotes, renderers, GPU/utility processes); the peak during the 4 jobs.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey } from '../server/api-keys/service.js';
import { buildApp } from '../server/app.js';
import { loadConfig } from '../server/config.js';
import { databaseFile, openDatabase } from '../server/platform/db/open.js';
import { defaultDeps } from '../server/deps.js';
import { createLogger } from '../server/platform/logging.js';
import { browserCandidates } from '../server/robots/browser.js';
import { loadBuiltInInsurer } from '../server/insurers/service.js';
import { initCabinet } from '../server/tenancy/service.js';
import { grantCredits } from '../server/wallet/service.js';
import type { Benchmark } from './benchmark.js';
import { median } from './lib/latency.js';
import { cpuCount, machineIdleMicros } from './lib/machine.js';
import { startServerChild } from './lib/child.js';
import { createProcessTree } from './lib/process-tree.js';
import { formatTable, goalLine } from './lib/report.js';

const PARALLEL = 4;
const WARM_SEQUENTIAL = 3;
/** The goals: a warm job one at a time, the peak PSS of 4 in parallel, and CPU per warm job (service + browser). */
const GOAL_SECONDS = 2;
const GOAL_PSS_MB = 800;
const GOAL_CPU_SECONDS_PER_JOB = 1.5;
const JOB_DEADLINE_MS = 120_000;
const SAMPLE_MS = 100;
const TERMINAL = new Set(['completed', 'partial', 'failed', 'cancelled']);

function loadLine(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

// ---- the job's figures ----

interface JobTiming {
  label: string;
  status: string;
  wallS: number;
  /** updated_at - created_at of the job, as the server recorded them. */
  serverS: number;
}

let counter = 0;
function autoData(): Record<string, unknown> {
  counter += 1;
  return {
    insured_name: `Jeanne Martin ${counter}`,
    driver_birth_date: '1984-03-09',
    licence_date: '2004-06-01',
    bonus_malus: 0.85,
    vehicle_make: 'Renault',
    vehicle_model: 'Clio',
    first_registration_date: '2021-02-15',
    postcode: String(69001 + (counter % 9)),
    usage: 'prive',
    formula: 'tous_risques',
  };
}

export const benchmark: Benchmark = {
  name: 'robots',
  description: `sandbox pricings end to end (HTTP enqueue → Chromium robot → the job read over HTTP when its signal says it changed), 1 cold, ${WARM_SEQUENTIAL} warm one by one, ${PARALLEL} in parallel; peak memory of service + browser`,
  async run(ctx) {
    console.log(`   load average before (1/5/15 min): ${loadLine()}`);
    const tree = createProcessTree(SAMPLE_MS);
    const dataDir = ctx.tempDir('robots');
    const config = loadConfig(
      {
        dataDir,
        host: '127.0.0.1',
        port: 0,
        logLevel: 'info',
        sandbox: true,
        sandboxMode: 'normal',
        sandboxLatencyMs: 0,
        workerConcurrency: PARALLEL,
        tarificationQuotaPerHour: 1000,
      },
      // COURTIER_BROWSER_PATH=/usr/bin/chromium compares full Chromium with the headless shell.
      process.env.COURTIER_BROWSER_PATH ? { COURTIER_BROWSER_PATH: process.env.COURTIER_BROWSER_PATH } : {},
    );
    const target = browserCandidates({
      configuredPath: config.browserPath,
      platform: process.platform,
      headed: false,
      exists: existsSync,
    })[0];
    console.log(
      `   browser: ${target ? ('executablePath' in target ? target.executablePath : `the ${target.channel} channel`) : 'none found'}`,
    );
    const db = openDatabase(databaseFile(dataDir));
    let portal = '';
    const deps = defaultDeps(db, config, { insurers: [await loadBuiltInInsurer('sandbox', () => portal)], env: {} });

    const portalChild = await startServerChild('sandbox-portal', ctx.tempDir('robots-portal'));
    portal = portalChild.origin;
    tree.exclude(portalChild.pid);
    const app = await buildApp(deps, {
      logger: createLogger({ level: 'info', stream: new Writable({ write: (_chunk, _enc, cb) => cb() }) }),
    });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await app.close();
      db.close();
      await portalChild.stop();
    };
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      if (typeof address !== 'object' || address === null) throw new Error('the app does not listen on a TCP port');
      const origin = `http://127.0.0.1:${address.port}`;

      const keys: string[] = [];
      for (let i = 0; i < PARALLEL; i++) {
        const { cabinet_id } = await initCabinet(deps, {
          cabinet: `Cabinet Robots ${i}`,
          email: `robots-${i}@example.fr`,
          password: 'correct horse battery staple',
        });
        grantCredits(deps, cabinet_id, 1000);
        keys.push(
          createApiKey(deps, cabinet_id, { name: 'bench', environment: 'test', scopes: ['automation:read', 'automation:enqueue'] }).key,
        );
      }

      const api = async (
        key: string,
        method: string,
        path: string,
        body?: unknown,
      ): Promise<{ status: number; json: Record<string, unknown> }> => {
        const res = await fetch(`${origin}/api/v1/public${path}`, {
          method,
          headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };

      /** The next change of the job (the service's job signal), or JOB_DEADLINE_MS; `cancel` stops listening. */
      const nextChange = (jobId: string): { changed: Promise<void>; cancel: () => void } => {
        let cancel = () => undefined as void;
        const changed = new Promise<void>((resolve) => {
          const timer = setTimeout(() => cancel(), JOB_DEADLINE_MS);
          const unlisten = deps.jobSignal.listen((changes) => {
            if (changes.some((change) => change.jobId === jobId)) cancel();
          });
          cancel = () => {
            clearTimeout(timer);
            unlisten();
            resolve();
          };
        });
        return { changed, cancel };
      };

      const runJob = async (label: string, key: string): Promise<JobTiming> => {
        const started = performance.now();
        const enqueued = await api(key, 'POST', '/automation/tarifications', {
          compagnie: 'sandbox',
          produit: 'auto',
          dicData: autoData(),
        });
        if (enqueued.status !== 202) throw new Error(`enqueue answered ${enqueued.status}: ${JSON.stringify(enqueued.json)}`);
        const jobId = String(enqueued.json.job_id);
        const deadline = Date.now() + JOB_DEADLINE_MS;
        for (;;) {
          // Listening before reading: a change between the read and the wait is not missed.
          const next = nextChange(jobId);
          const { json } = await api(key, 'GET', `/automation/jobs/${jobId}`);
          const status = String(json.status);
          if (TERMINAL.has(status)) {
            next.cancel();
            const wallS = (performance.now() - started) / 1000;
            const serverS = (Date.parse(String(json.updated_at)) - Date.parse(String(json.created_at))) / 1000;
            if (status !== 'completed') throw new Error(`job ${label} ended ${status}: ${JSON.stringify(json.error)}`);
            return { label, status, wallS, serverS };
          }
          if (Date.now() > deadline) {
            next.cancel();
            throw new Error(`job ${label} stuck in ${status}`);
          }
          await next.changed;
        }
      };

      const baseline = tree.sampleMemory();
      const rows: string[][] = [];
      const phase = async (name: string, jobs: () => Promise<JobTiming[]>) => {
        const portalCpuBefore = await portalChild.cpuMicros();
        const sampler = tree.startSampler();
        const serviceCpuBefore = process.cpuUsage();
        const childrenCpuBefore = tree.childrenCpuSeconds();
        const idleBefore = machineIdleMicros();
        const started = performance.now();
        const timings = await jobs();
        const phaseS = (performance.now() - started) / 1000;
        const serviceCpu = process.cpuUsage(serviceCpuBefore);
        const portalCpuS = ((await portalChild.cpuMicros()) - portalCpuBefore) / 1e6;
        const peak = sampler.stop();
        const samplerCpuS = sampler.cpuSeconds();
        const serviceCpuS = (serviceCpu.user + serviceCpu.system) / 1e6 - samplerCpuS;
        const browserCpuS = tree.childrenCpuSeconds() - childrenCpuBefore;
        const busyS = cpuCount() * phaseS - (machineIdleMicros() - idleBefore) / 1e6;
        const otherCores = Math.max(0, busyS - serviceCpuS - samplerCpuS - browserCpuS - portalCpuS) / phaseS;
        for (const t of timings) {
          rows.push([
            `${name}: ${t.label}`,
            t.status,
            t.wallS.toFixed(2),
            t.serverS.toFixed(2),
            (portalCpuS / timings.length).toFixed(3),
            phaseS.toFixed(2),
            peak.totalMb.toFixed(0),
            peak.pssMb.toFixed(0),
            `${serviceCpuS.toFixed(1)} + ${browserCpuS.toFixed(1)}`,
            otherCores.toFixed(2),
          ]);
        }
        return { timings, phaseS, peak, cpuPerJobS: (serviceCpuS + browserCpuS) / timings.length };
      };

      const firstKey = keys[0] ?? '';
      const cold = await phase('cold', async () => [await runJob('1 job, browser launch', firstKey)]);
      const warm = await phase('warm', async () => {
        const out: JobTiming[] = [];
        for (let i = 0; i < WARM_SEQUENTIAL; i++) out.push(await runJob(`job ${i + 1} of ${WARM_SEQUENTIAL}`, firstKey));
        return out;
      });
      const parallel = await phase(`${PARALLEL} parallel`, () => Promise.all(keys.map((key, i) => runJob(`cabinet ${i + 1}`, key))));

      console.log(
        formatTable(
          [
            'job',
            'status',
            'wall s',
            'server s',
            'portal CPU s/job',
            'phase s',
            'peak RSS MB',
            'peak PSS MB',
            'CPU s svc + browser',
            'other cores',
          ],
          rows,
        ),
      );
      console.log(
        `   memory before the first job: ${baseline.totalMb.toFixed(0)} MB RSS (service ${baseline.serviceMb.toFixed(0)} MB, ${baseline.processes} child processes)`,
      );
      console.log(
        `   peak during ${PARALLEL} parallel: service ${parallel.peak.serviceMb.toFixed(0)} MB + ${parallel.peak.processes} browser processes ${parallel.peak.childrenMb.toFixed(0)} MB = ${parallel.peak.totalMb.toFixed(0)} MB RSS (PSS, shared pages once: ${parallel.peak.pssMb.toFixed(0)} MB)`,
      );
      console.log(
        `   portal: its own process, mode normal, latency 0 ms (no think time); 'portal CPU s/job' is that process's CPU, the outside world's, counted in no goal`,
      );
      console.log(`   load average after (1/5/15 min): ${loadLine()}`);

      const warmMedian = median(warm.timings.map((t) => t.wallS));
      const parallelMax = Math.max(...parallel.timings.map((t) => t.wallS));
      const goals: [string, boolean][] = [
        [
          `wall time per job beyond the portal's think time (0 s), warm, one at a time (median of ${WARM_SEQUENTIAL}): ${warmMedian.toFixed(2)} s (goal <= ${GOAL_SECONDS} s)`,
          warmMedian <= GOAL_SECONDS,
        ],
        [
          `CPU per warm job, service + browser: ${warm.cpuPerJobS.toFixed(2)} s (goal <= ${GOAL_CPU_SECONDS_PER_JOB} s)`,
          warm.cpuPerJobS <= GOAL_CPU_SECONDS_PER_JOB,
        ],
        [
          `peak memory, service + browser, ${PARALLEL} jobs running: ${parallel.peak.pssMb.toFixed(0)} MB PSS (goal <= ${GOAL_PSS_MB} MB)`,
          parallel.peak.pssMb <= GOAL_PSS_MB,
        ],
      ];
      console.log(
        `   ${PARALLEL} in parallel, the slowest: ${parallelMax.toFixed(2)} s, ${parallel.cpuPerJobS.toFixed(2)} s of CPU per job (not a goal: ${cpuCount()} cores for ${PARALLEL} browsers)`,
      );
      for (const [line, met] of goals) console.log(goalLine(line, met));
      console.log(`   (cold first job, with the browser launch: ${cold.timings[0]?.wallS.toFixed(2) ?? '?'} s; not a goal)`);

      console.log(
        `   'CPU s' is per phase: the service process (without the memory sampler's reading of /proc), then Chromium (all its processes); 'other cores' is what the rest of the machine used meanwhile (of ${cpuCount()}), the portal's process apart`,
      );
      tree.noteChromium();
      await close();
      // The browser's helpers (zygotes, crashpad) exit a moment after the browser: give them 3 s.
      let left: number[] = [];
      for (let i = 0; i < 30; i++) {
        await sleep(100);
        ({ left } = tree.chromiumLeft());
        if (left.length === 0) break;
      }
      console.log(
        `after closing the app: ${left.length} of the ${tree.chromiumLeft().seen} chromium processes seen are left${left.length ? ` (${left.join(', ')})` : ''}`,
      );
      if (left.length > 0) throw new Error('chromium processes were left running after the app closed');
      const goalMet = goals.every(([, met]) => met);
      return {
        goalMet,
        summary: `warm job ${warmMedian.toFixed(2)} s and ${warm.cpuPerJobS.toFixed(2)} s CPU; ${PARALLEL} parallel peak ${parallel.peak.pssMb.toFixed(0)} MB PSS: ${goalMet ? 'met' : 'MISSED'}`,
      };
    } finally {
      await close();
    }
  },
};
