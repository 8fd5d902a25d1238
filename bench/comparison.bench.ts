/**
 * Comparing insurers as a broker feels it: one car risk priced at the three demo insurers at once
 * (POST /automation/comparaisons, then the comparison read each time its jobs change, until every
 * insurer answered), warm, with 3 robots at a time. Baseline, in the same run and the same cabinet
 * (so with the same warm browser sessions): each insurer priced alone through a comparison that
 * names it. Goal: the three together ≤ 1.3× the slowest alone; peak PSS (service and browser)
 * ≤ 800 MB, in one more comparison under the memory sampler. The portals run in a process of their
 * own, excluded from the measures.
 */
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import type { Benchmark } from './benchmark.js';
import { startDemoService, type DemoService } from './lib/demo-service.js';
import { median } from './lib/latency.js';
import { formatTable, goalLine } from './lib/report.js';

const ROUNDS = 3;
const GOAL_RATIO = 1.3;
const GOAL_PSS_MB = 800;
const DEADLINE_MS = 120_000;
const SETTLED = new Set(['completed', 'partial', 'failed']);

let counter = 0;
/** The example risk with its postcode varied: each comparison new to the replay guard. */
function variedRisk() {
  counter += 1;
  return { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: `33${String(100 + counter).padStart(3, '0')}` } };
}

/** Seconds from the POST to the comparison's end, every insurer priced. */
async function compare(service: DemoService, key: string, compagnies: readonly string[]): Promise<number> {
  const started = performance.now();
  const res = await service.api(key, 'POST', '/automation/comparaisons', { ligne: 'auto', risque: variedRisk(), compagnies });
  if (res.status !== 202) throw new Error(`the comparison answered ${res.status}: ${JSON.stringify(res.json)}`);
  const id = String(res.json.comparaison_id);
  const jobIds = (res.json.jobs as { job_id: string }[]).map((j) => j.job_id);
  for (;;) {
    const next = service.nextChange(jobIds, DEADLINE_MS);
    const { json } = await service.api(key, 'GET', `/automation/comparaisons/${id}`);
    if (SETTLED.has(String(json.status))) {
      next.stop();
      if (json.status !== 'completed') throw new Error(`the comparison ended ${String(json.status)}: ${JSON.stringify(json.resultats)}`);
      return (performance.now() - started) / 1000;
    }
    if (performance.now() - started > DEADLINE_MS) throw new Error(`the comparison is stuck in ${String(json.status)}`);
    await next.changed;
  }
}

export const benchmark: Benchmark = {
  name: 'comparison',
  description: `one car risk compared at the three demo insurers at once, warm, 3 robots at a time, against each priced alone (${ROUNDS} rounds)`,
  async run(ctx) {
    const service = await startDemoService(ctx, 'comparison', { workerConcurrency: 3 });
    try {
      const key = await service.keyOf('comparison');
      const codes = service.demos.map((d) => d.code);
      // Warm: each insurer's login logged in once.
      await compare(service, key, codes);
      const alone = new Map<string, number[]>(codes.map((code) => [code, []]));
      const together: number[] = [];
      // Timed without the memory sampler: it reads every browser process's memory from the service's
      // own thread, which delays the robots more when three run than when one does.
      for (let round = 0; round < ROUNDS; round++) {
        for (const code of codes) alone.get(code)!.push(await compare(service, key, [code]));
        together.push(await compare(service, key, codes));
      }
      const peakMb = (await service.measured(() => compare(service, key, codes))).peak.pssMb;
      const aloneMedians = codes.map((code) => median(alone.get(code)!));
      const slowestAlone = Math.max(...aloneMedians);
      const wall = median(together);
      const ratio = wall / slowestAlone;
      console.log(
        formatTable(
          ['priced', `wall s (${ROUNDS} rounds)`, 'median s'],
          [
            ...codes.map((code, i) => [
              `${code} alone`,
              alone
                .get(code)!
                .map((s) => s.toFixed(2))
                .join(' '),
              aloneMedians[i]!.toFixed(2),
            ]),
            ['the three compared', together.map((s) => s.toFixed(2)).join(' '), wall.toFixed(2)],
          ],
        ),
      );
      const goals: [string, boolean][] = [
        [
          `three insurers compared: ${wall.toFixed(2)} s, ${ratio.toFixed(2)}× the slowest alone ${slowestAlone.toFixed(2)} s (goal <= ${GOAL_RATIO}×)`,
          ratio <= GOAL_RATIO,
        ],
        [`peak memory, service + browser, while comparing: ${peakMb.toFixed(0)} MB PSS (goal <= ${GOAL_PSS_MB} MB)`, peakMb <= GOAL_PSS_MB],
      ];
      for (const [line, met] of goals) console.log(goalLine(line, met));
      const goalMet = goals.every(([, met]) => met);
      return {
        goalMet,
        summary: `three compared ${wall.toFixed(2)} s, ${ratio.toFixed(2)}× the slowest alone, ${peakMb.toFixed(0)} MB PSS: ${goalMet ? 'met' : 'MISSED'}`,
      };
    } finally {
      await service.close();
    }
  },
};
