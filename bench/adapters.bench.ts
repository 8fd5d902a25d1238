/**
 * The demo insurers' robots, each through the adapter kit, as a broker feels them: a warm job on
 * each insurer (HTTP enqueue → its robot in Chromium → the job read when its signal says it
 * changed), one job of each insurer at once against the slowest alone, and the offline replay of
 * every cassette the insurers ship (what `courtier insurers test` does in CI).
 *
 * The portals are the outside world: they run in a process of their own (target sandbox-portal,
 * every demo portal, mode normal, no think time), whose CPU is counted in no goal. Each insurer
 * prices its first product with its manifest's example, a postcode-like field varied per job so
 * that the replay guard never answers instead of the robot. Cabinet i prices on insurer i only:
 * from its second job on, a job resumes the browser session the previous one left logged in.
 * Baselines, in the same run: the parallel phase is measured against each insurer's job alone,
 * and a cassette's replay against the live job it stands for.
 */
import { loadavg } from 'node:os';
import type { Insurer } from '../server/insurers/registry.js';
import { cassetteFiles, replayPackage } from '../server/insurers/replay.js';
import { createBrowserRuntime } from '../server/robots/browser.js';
import type { Benchmark } from './benchmark.js';
import { startDemoService } from './lib/demo-service.js';
import { median } from './lib/latency.js';
import { formatTable, goalLine } from './lib/report.js';

const WARM = 3;
const GOAL_WARM_S = 2;
const GOAL_CPU_S = 1.5;
const GOAL_PARALLEL_RATIO = 1.3;
const GOAL_PSS_MB = 800;
const GOAL_REPLAY_S = 3;
const JOB_DEADLINE_MS = 120_000;
const TERMINAL = new Set(['completed', 'partial', 'failed', 'cancelled']);

let counter = 0;
/** The product's example with its postcode-like fields varied: each job a new request for the replay guard. */
function varied(example: Record<string, unknown>): Record<string, unknown> {
  counter += 1;
  const out: Record<string, unknown> = { ...example };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === 'string' && /^\d{5}$/.test(value))
      out[key] = `${value.slice(0, 2)}${String(100 + (counter % 800)).padStart(3, '0')}`;
  }
  return out;
}

export const benchmark: Benchmark = {
  name: 'adapters',
  description: `every demo insurer through the adapter kit: ${WARM} warm jobs each, one job of each at once, and the offline replay of their cassettes`,
  async run(ctx) {
    console.log(
      `   load average before (1/5/15 min): ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' / ')}`,
    );
    const service = await startDemoService(ctx, 'adapters', { workerConcurrency: 4 });
    const { demos, api, measured } = service;
    try {
      // Cabinet i prices on insurer i only: its sessions stay its own.
      const keys = new Map<string, string>();
      for (const insurer of demos) keys.set(insurer.code, await service.keyOf(insurer.code));
      const runJob = async (insurer: Insurer): Promise<number> => {
        const product = insurer.products.find((p) => p.kind === 'quote') ?? insurer.products[0]!;
        const key = keys.get(insurer.code)!;
        const started = performance.now();
        const enqueued = await api(key, 'POST', '/automation/tarifications', {
          compagnie: insurer.code,
          produit: product.code,
          dicData: varied(product.example),
        });
        if (enqueued.status !== 202)
          throw new Error(`${insurer.code}: enqueue answered ${enqueued.status}: ${JSON.stringify(enqueued.json)}`);
        const jobId = String(enqueued.json.job_id);
        for (;;) {
          const next = service.nextChange([jobId], JOB_DEADLINE_MS);
          const { json } = await api(key, 'GET', `/automation/jobs/${jobId}`);
          if (TERMINAL.has(String(json.status))) {
            next.stop();
            if (json.status !== 'completed')
              throw new Error(`${insurer.code}: the job ended ${String(json.status)}: ${JSON.stringify(json.error)}`);
            return (performance.now() - started) / 1000;
          }
          if (performance.now() - started > JOB_DEADLINE_MS) throw new Error(`${insurer.code}: the job is stuck in ${String(json.status)}`);
          await next.changed;
        }
      };

      const rows: string[][] = [];
      const alone = new Map<string, number>();
      const goals: [string, boolean][] = [];
      for (const insurer of demos) {
        const cold = await runJob(insurer);
        const warm = await measured(async () => {
          const walls: number[] = [];
          for (let i = 0; i < WARM; i++) walls.push(await runJob(insurer));
          return walls;
        });
        const wall = median(warm.value);
        const cpu = warm.cpuS / WARM;
        alone.set(insurer.code, wall);
        rows.push([insurer.code, cold.toFixed(2), warm.value.map((w) => w.toFixed(2)).join(' '), wall.toFixed(2), cpu.toFixed(2)]);
        goals.push([
          `${insurer.code}: a warm job ${wall.toFixed(2)} s wall (goal <= ${GOAL_WARM_S} s), ${cpu.toFixed(2)} s CPU service + browser (goal <= ${GOAL_CPU_S} s)`,
          wall <= GOAL_WARM_S && cpu <= GOAL_CPU_S,
        ]);
      }
      console.log(formatTable(['insurer', 'cold s', `warm s (${WARM})`, 'warm median s', 'CPU s/job'], rows));

      const together = await measured(() => Promise.all(demos.map((insurer) => runJob(insurer))));
      const slowest = Math.max(...together.value);
      const slowestAlone = Math.max(...alone.values());
      const ratio = slowest / slowestAlone;
      console.log(
        `   ${demos.length} jobs at once, one per insurer: ${together.value.map((w, i) => `${demos[i]!.code} ${w.toFixed(2)} s`).join(', ')}`,
      );
      goals.push([
        `${demos.length} insurers at once: the slowest ${slowest.toFixed(2)} s, ${ratio.toFixed(2)}× the slowest alone ${slowestAlone.toFixed(2)} s (goal <= ${GOAL_PARALLEL_RATIO}×)`,
        ratio <= GOAL_PARALLEL_RATIO,
      ]);
      goals.push([
        `peak memory, service + browser, ${demos.length} jobs running: ${together.peak.pssMb.toFixed(0)} MB PSS (goal <= ${GOAL_PSS_MB} MB)`,
        together.peak.pssMb <= GOAL_PSS_MB,
      ]);

      // Offline replay, on a browser of its own as `courtier insurers test` has (launched by the first cassette).
      const runtime = createBrowserRuntime({ dataDir: ctx.tempDir('adapters-replay'), headed: false });
      try {
        const replayRows: string[][] = [];
        for (const insurer of demos) {
          const files = cassetteFiles(insurer.origin.dir);
          if (files.length === 0) continue;
          const started = performance.now();
          const outcomes = await replayPackage(insurer.origin.dir, runtime);
          // Each replay counts: the recorded cassettes, and those replayed again with the common risk of a line.
          const perCassette = (performance.now() - started) / 1000 / outcomes.length;
          const failed = outcomes.filter((o) => !o.ok);
          if (failed.length > 0)
            throw new Error(`${insurer.code}: ${failed.map((o) => `${o.cassette}: ${o.problems.join('; ')}`).join(' | ')}`);
          const live = alone.get(insurer.code) ?? NaN;
          replayRows.push([
            insurer.code,
            String(outcomes.length),
            perCassette.toFixed(2),
            live.toFixed(2),
            (perCassette / live).toFixed(2),
          ]);
          goals.push([
            `${insurer.code}: a cassette replayed offline in ${perCassette.toFixed(2)} s (goal <= ${GOAL_REPLAY_S} s)`,
            perCassette <= GOAL_REPLAY_S,
          ]);
        }
        console.log(formatTable(['insurer', 'replays', 'replay s/cassette', 'live warm job s', 'replay / live'], replayRows));
      } finally {
        await runtime.close();
      }
      console.log(`   portals: their own process, mode normal, no think time; their CPU counts in no goal`);
      for (const [line, met] of goals) console.log(goalLine(line, met));
      const goalMet = goals.every(([, met]) => met);
      return {
        goalMet,
        summary: `${demos.length} insurers: warm ${[...alone].map(([code, s]) => `${code} ${s.toFixed(2)} s`).join(', ')}; at once ${ratio.toFixed(2)}×, ${together.peak.pssMb.toFixed(0)} MB PSS: ${goalMet ? 'met' : 'MISSED'}`,
      };
    } finally {
      await service.close();
    }
  },
};
