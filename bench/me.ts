import type { Benchmark } from './benchmark.js';
import { compareAlternating, roundRatiosLine, type Comparison } from './lib/alternate.js';
import { startServerChild } from './lib/child.js';
import { measure } from './lib/load.js';
import { BARE_PATH } from './lib/protocol.js';
import { busyMachineWarning, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { getMe } from '../shared/api-keys.js';
import { pathTo } from '../shared/endpoint.js';

const ME_PATH = pathTo(getMe);
/** /me may cost what auth, the rate limiter and the log line cost, but not more than Fastify itself. */
const GOAL_RATIO = 0.5;

/** GET /me, the cheapest authenticated route: whatever it costs beyond the bare route is per-request overhead every route pays. */
export const meBenchmark: Benchmark = {
  name: 'me',
  description: `GET ${ME_PATH} of the real app (API key looked up in SQLite, rate limit, request log line) vs a bare Fastify route`,
  async run(ctx) {
    // Same run, same machine, same load generator, in turn: the ratio compares like with like.
    const bareServer = await startServerChild('bare', ctx.tempDir('bare'), ctx.child);
    let comparison: Comparison;
    try {
      const meServer = await startServerChild('courtier', ctx.tempDir('courtier'), ctx.child);
      try {
        comparison = await compareAlternating(
          (options) => measure(bareServer, BARE_PATH, options),
          (options) => measure(meServer, ME_PATH, options),
          ctx.load,
        );
      } finally {
        await meServer.stop();
      }
    } finally {
      await bareServer.stop();
    }
    const { baseline: bare, subject: me, ratio } = comparison;
    const goalMet = ratio >= GOAL_RATIO;
    console.log(formatTable(MEASUREMENT_HEADER, [measurementRow(`bare GET ${BARE_PATH}`, bare), measurementRow(`me GET ${ME_PATH}`, me)]));
    const warning = busyMachineWarning([bare, me]);
    if (warning) console.log(warning);
    const ratioLine = `ratio me/bare: ${ratio.toFixed(2)} (goal >= ${GOAL_RATIO.toFixed(2)})`;
    console.log(ratioLine);
    console.log(roundRatiosLine(comparison));
    console.log(`   ${comparison.schedule}`);
    // The same comparison from server CPU per request: it hardly moves when other processes steal a core, req/s does.
    console.log(`cpu-cost ratio bare/me (µs CPU per request): ${(cpuPerRequest(bare) / cpuPerRequest(me)).toFixed(2)}`);
    console.log(
      goalMet ? 'goal met' : `MISSED: /me serves ${Math.round(ratio * 100)}% of the bare route's rate, below ${GOAL_RATIO * 100}%`,
    );
    return { goalMet, summary: `${ratioLine} ${goalMet ? 'met' : 'MISSED'}` };
  },
};
