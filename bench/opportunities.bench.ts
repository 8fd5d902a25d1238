/**
 * Issue 3: the opportunities list and create on a cabinet holding 100,000 opportunities.
 *
 *  - GET ?limit=50 (first page) req/s vs the bare route: goal >= 0.25;
 *  - the page at offset 90,000 (reached by following cursors) vs the first page, p50: goal <= 1.2x;
 *  - POST with a fresh Idempotency-Key per request: goal >= 2,000 created/s, p99 < 20 ms, all 201.
 */
import type { Benchmark, BenchContext } from './benchmark.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { measureCreate } from './lib/create.js';
import { measure, type Measurement } from './lib/load.js';
import { BARE_PATH, SEEDED_OPPORTUNITIES } from './lib/protocol.js';
import { busyMachineWarning, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { listOpportunities } from '../shared/crm-endpoints.js';
import { pathTo } from '../shared/endpoint.js';

const LIST_PATH = pathTo(listOpportunities);
const FIRST_PAGE_PATH = `${LIST_PATH}?limit=50`;
const DEEP_OFFSET = 90_000;
const WALK_LIMIT = 100;

const GOAL_LIST_RATIO = 0.25;
const GOAL_DEEP_RATIO = 1.2;
const GOAL_CREATED_PER_S = 2_000;
const GOAL_CREATE_P99_MS = 20;

interface Page {
  data: unknown[];
  next_cursor: string | null;
}

/** Follows next_cursor with limit=100 until `offset` items have been passed; returns the cursor there. */
async function cursorAt(server: ServerChild, offset: number): Promise<string> {
  let cursor: string | undefined;
  let seen = 0;
  while (seen < offset) {
    const url = `${server.origin}${LIST_PATH}?limit=${WALK_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await fetch(url, { headers: server.headers });
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    const page = (await response.json()) as Page;
    seen += page.data.length;
    if (page.next_cursor === null) throw new Error(`the list ended after ${seen} items, before offset ${offset}`);
    cursor = page.next_cursor;
  }
  if (cursor === undefined) throw new Error('no cursor');
  return cursor;
}

async function measureBare(ctx: BenchContext): Promise<Measurement> {
  const server = await startServerChild('bare', ctx.tempDir('bare'), ctx.child);
  try {
    return await measure(server, BARE_PATH, ctx.load);
  } finally {
    await server.stop();
  }
}

function goalLine(label: string, met: boolean): string {
  return `${label} ${met ? 'goal met' : 'MISSED'}`;
}

export const benchmark: Benchmark = {
  name: 'opportunities',
  description: `GET/POST ${LIST_PATH} on a cabinet of ${SEEDED_OPPORTUNITIES.toLocaleString('en-US')} opportunities: list vs bare, page at offset ${DEEP_OFFSET.toLocaleString('en-US')} vs first, create rate`,
  async run(ctx) {
    const bare = await measureBare(ctx);
    const seedStarted = performance.now();
    const server = await startServerChild('courtier-100k', ctx.tempDir('courtier-100k'), ctx.child);
    let first: Measurement;
    let deep: Measurement;
    let create: Measurement;
    try {
      console.log(`   seeded ${SEEDED_OPPORTUNITIES.toLocaleString('en-US')} opportunities in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
      first = await measure(server, FIRST_PAGE_PATH, ctx.load);
      const walkStarted = performance.now();
      const cursor = await cursorAt(server, DEEP_OFFSET);
      console.log(`   walked to offset ${DEEP_OFFSET.toLocaleString('en-US')} (limit=${WALK_LIMIT}) in ${((performance.now() - walkStarted) / 1000).toFixed(1)} s`);
      deep = await measure(server, `${FIRST_PAGE_PATH}&cursor=${encodeURIComponent(cursor)}`, ctx.load);
      create = await measureCreate(server, ctx.load);
    } finally {
      await server.stop();
    }

    console.log(
      formatTable(MEASUREMENT_HEADER, [
        measurementRow(`bare GET ${BARE_PATH}`, bare),
        measurementRow('GET ?limit=50 (first page)', first),
        measurementRow(`GET ?limit=50 at offset ${DEEP_OFFSET}`, deep),
        measurementRow('POST (fresh Idempotency-Key)', create),
      ]),
    );
    const warning = busyMachineWarning([bare, first, deep, create]);
    if (warning) console.log(warning);

    const listRatio = first.requestsPerSecond / bare.requestsPerSecond;
    const deepRatio = deep.p50Ms / first.p50Ms;
    const listMet = listRatio >= GOAL_LIST_RATIO;
    const deepMet = deepRatio <= GOAL_DEEP_RATIO;
    const rateMet = create.requestsPerSecond >= GOAL_CREATED_PER_S;
    const p99Met = create.p99Ms < GOAL_CREATE_P99_MS;
    const lines = [
      goalLine(`list/bare req/s ratio: ${listRatio.toFixed(2)} (goal >= ${GOAL_LIST_RATIO})`, listMet),
      goalLine(`deep/first p50 ratio: ${deepRatio.toFixed(2)} (${deep.p50Ms.toFixed(2)} / ${first.p50Ms.toFixed(2)} ms; goal <= ${GOAL_DEEP_RATIO}; req/s ratio first/deep ${(first.requestsPerSecond / deep.requestsPerSecond).toFixed(2)})`, deepMet),
      goalLine(`created/s: ${Math.round(create.requestsPerSecond)} (goal >= ${GOAL_CREATED_PER_S})`, rateMet),
      goalLine(`create p99: ${create.p99Ms.toFixed(2)} ms (goal < ${GOAL_CREATE_P99_MS})`, p99Met),
    ];
    for (const line of lines) console.log(line);
    console.log(`µs CPU per request: bare ${cpuPerRequest(bare).toFixed(1)}, first ${cpuPerRequest(first).toFixed(1)}, deep ${cpuPerRequest(deep).toFixed(1)}, create ${cpuPerRequest(create).toFixed(1)}`);
    const goalMet = listMet && deepMet && rateMet && p99Met;
    const summary = `list/bare ${listRatio.toFixed(2)}, deep/first p50 ${deepRatio.toFixed(2)}, ${Math.round(create.requestsPerSecond)} created/s, create p99 ${create.p99Ms.toFixed(1)} ms: ${goalMet ? 'all goals met' : 'MISSED'}`;
    return { goalMet, summary };
  },
};
