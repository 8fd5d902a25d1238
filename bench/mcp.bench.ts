import type { Result } from 'autocannon';
import type { Benchmark } from './benchmark.js';
import { compareAlternating, roundRatiosLine, type Comparison } from './lib/alternate.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import type { LatencyHistogram } from './lib/latency.js';
import { measure, measureRun, startLoad, type LoadOptions, type LoadRequest, type Measurement } from './lib/load.js';
import { busyMachineWarning, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { getMe } from '../shared/api-keys.js';
import { pathTo } from '../shared/endpoint.js';

const ME_PATH = pathTo(getMe);
const MCP_PATH = '/mcp';
/** A tool call may cost what the SDK's JSON-RPC layer costs on top of /me, up to 2.5 times /me. */
const GOAL_RATIO = 0.4;

const WHOAMI_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });

function mcpHeaders(server: ServerChild): Record<string, string> {
  const { authorization } = server.headers;
  if (!authorization) throw new Error('the courtier-mcp target gave no access token');
  return {
    authorization,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
}

/** One tools/call whoami as the load generator sends it (also profiled by bench/profile.ts). */
export function whoamiRequest(server: ServerChild): LoadRequest {
  return { url: server.origin + MCP_PATH, method: 'POST', headers: mcpHeaders(server), body: WHOAMI_CALL };
}

function runWhoami(server: ServerChild, connections: number, seconds: number, latency?: LatencyHistogram) {
  return startLoad(whoamiRequest(server), connections, seconds, latency);
}

/** One call first, so that a refusal or a JSON-RPC error shows itself instead of a count. */
async function assertWhoamiAnswers(server: ServerChild): Promise<void> {
  const response = await fetch(server.origin + MCP_PATH, { method: 'POST', headers: mcpHeaders(server), body: WHOAMI_CALL });
  const body = await response.text();
  if (response.status !== 200 || !body.includes('"result"') || body.includes('"isError":true')) {
    throw new Error(`tools/call whoami answered ${response.status}: ${body.slice(0, 500)}`);
  }
}

function assertAllOk(result: Result, label: string): void {
  const ok = result.statusCodeStats['200']?.count ?? 0;
  if (result.errors + result.timeouts > 0 || ok !== result.requests.total || ok === 0) {
    const statuses = Object.entries(result.statusCodeStats).map(([code, { count }]) => `${code}×${count}`);
    throw new Error(
      `${label}: not every response was a 200 (errors ${result.errors}, timeouts ${result.timeouts}; statuses: ${statuses.join(', ') || 'none'})`,
    );
  }
}

export async function measureWhoami(server: ServerChild, options: LoadOptions): Promise<Measurement> {
  await assertWhoamiAnswers(server);
  return measureRun(
    server,
    `POST ${MCP_PATH} tools/call whoami`,
    (seconds, latency) => runWhoami(server, options.connections, seconds, latency),
    options,
    assertAllOk,
  );
}

export const benchmark: Benchmark = {
  name: 'mcp',
  description: `tools/call whoami through POST ${MCP_PATH} (token lookup, the route's one SDK server through its own transport) vs GET ${ME_PATH}, same server`,
  async run(ctx) {
    const server = await startServerChild('courtier-mcp', ctx.tempDir('courtier-mcp'), ctx.child);
    let comparison: Comparison;
    try {
      // In turn, so that a swing of the machine's speed weighs on both (see compareAlternating).
      comparison = await compareAlternating(
        (options) => measure(server, ME_PATH, options),
        (options) => measureWhoami(server, options),
        ctx.load,
      );
    } finally {
      await server.stop();
    }
    const { baseline: me, subject: whoami, ratio } = comparison;
    const goalMet = ratio >= GOAL_RATIO;
    console.log(
      formatTable(MEASUREMENT_HEADER, [measurementRow(`me GET ${ME_PATH}`, me), measurementRow(`whoami POST ${MCP_PATH}`, whoami)]),
    );
    const warning = busyMachineWarning([me, whoami]);
    if (warning) console.log(warning);
    const ratioLine = `ratio whoami/me: ${ratio.toFixed(2)} (goal >= ${GOAL_RATIO.toFixed(2)}), whoami p50 ${whoami.p50Ms.toFixed(2)} ms`;
    console.log(ratioLine);
    console.log(roundRatiosLine(comparison));
    console.log(`   ${comparison.schedule}`);
    console.log(`cpu-cost ratio me/whoami (µs CPU per request): ${(cpuPerRequest(me) / cpuPerRequest(whoami)).toFixed(2)}`);
    console.log(goalMet ? 'goal met' : `MISSED: whoami serves ${Math.round(ratio * 100)}% of /me's rate, below ${GOAL_RATIO * 100}%`);
    return { goalMet, summary: `${ratioLine} ${goalMet ? 'met' : 'MISSED'}` };
  },
};
