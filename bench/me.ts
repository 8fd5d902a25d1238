import type { Benchmark, BenchContext } from './benchmark.js';
import { startServerChild } from './lib/child.js';
import { measure, type Measurement } from './lib/load.js';
import { BARE_PATH, type TargetName } from './lib/protocol.js';
import { busyMachineWarning, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { getMe } from '../shared/api-keys.js';
import { pathTo } from '../shared/endpoint.js';

const ME_PATH = pathTo(getMe);
/** /me may cost what auth, the rate limiter and the log line cost, but not more than Fastify itself. */
const GOAL_RATIO = 0.5;

async function measureTarget(ctx: BenchContext, target: TargetName, path: string): Promise<Measurement> {
  const server = await startServerChild(target, ctx.tempDir(target), ctx.child);
  try {
    return await measure(server, path, ctx.load);
  } finally {
    await server.stop();
  }
}

/** GET /me, the cheapest authenticated route: whatever it costs beyond the bare route is per-request overhead every route pays. */
export const meBenchmark: Benchmark = {
  name: 'me',
  description: `GET ${ME_PATH} of the real app (API key looked up in SQLite, rate limit, request log line) vs a bare Fastify route`,
  async run(ctx) {
    // Same run, same machine, same load generator, one after the other: the ratio compares like with like.
    const bare = await measureTarget(ctx, 'bare', BARE_PATH);
    const me = await measureTarget(ctx, 'courtier', ME_PATH);
    const ratio = me.requestsPerSecond / bare.requestsPerSecond;
    const goalMet = ratio >= GOAL_RATIO;
    console.log(formatTable(MEASUREMENT_HEADER, [measurementRow(`bare GET ${BARE_PATH}`, bare), measurementRow(`me GET ${ME_PATH}`, me)]));
    const warning = busyMachineWarning([bare, me]);
    if (warning) console.log(warning);
    const ratioLine = `ratio me/bare: ${ratio.toFixed(2)} (goal >= ${GOAL_RATIO.toFixed(2)})`;
    console.log(ratioLine);
    // The same comparison from server CPU per request: it hardly moves when other processes steal a core, req/s does.
    console.log(`cpu-cost ratio bare/me (µs CPU per request): ${(cpuPerRequest(bare) / cpuPerRequest(me)).toFixed(2)}`);
    console.log(goalMet ? 'goal met' : `MISSED: /me serves ${Math.round(ratio * 100)}% of the bare route's rate, below ${GOAL_RATIO * 100}%`);
    return { goalMet, summary: `${ratioLine} ${goalMet ? 'met' : 'MISSED'}` };
  },
};
