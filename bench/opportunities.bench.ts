/**
 * The opportunities list and create on a cabinet holding 100,000 opportunities,
 * each against a baseline doing the same essential work bare (bench/targets.ts, bare-sqlite: bare
 * Fastify on the same database file, one prepared statement, no auth, validation or idempotency).
 *
 *  - GET ?limit=50, first page and the page at offset 90,000 (reached by following cursors), req/s
 *    vs the bare keyset query at the same position: goal >= 0.6 each;
 *  - POST with a fresh Idempotency-Key per request vs a bare insert of the row and its event in
 *    one transaction: goal >= 0.5, and p99 < 10 ms at 10 connections; every answer a 201.
 */
import type { Benchmark, BenchContext } from './benchmark.js';
import { compareAlternating, roundRatiosLine, type Comparison } from './lib/alternate.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { measureCreate } from './lib/create.js';
import { measure, type Measurement } from './lib/load.js';
import { BARE_OPPORTUNITIES_PATH, SEEDED_OPPORTUNITIES } from './lib/protocol.js';
import { busyMachineWarning, cpuPerRequest, formatTable, goalLine, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { listOpportunities } from '../shared/crm-endpoints.js';
import { pathTo } from '../shared/endpoint.js';

const LIST_PATH = pathTo(listOpportunities);
const PAGE = 50;
const FIRST_PAGE_PATH = `${LIST_PATH}?limit=${PAGE}`;
const DEEP_OFFSET = 90_000;
const WALK_LIMIT = 100;

const GOAL_LIST_RATIO = 0.6;
const GOAL_CREATE_RATIO = 0.5;
const GOAL_CREATE_P99_MS = 10;

interface Page {
  data: { opportunity_id: string; created_at: string }[];
  next_cursor: string | null;
}

/** Where a page starts: the API's cursor, and the same position as the bare route's parameters. */
interface Position {
  cursor: string;
  createdAt: number;
  id: string;
}

/** Follows next_cursor with limit=100 until `offset` items have been passed. */
async function positionAt(server: ServerChild, offset: number): Promise<Position> {
  let position: Position | undefined;
  let seen = 0;
  while (seen < offset) {
    const url = `${server.origin}${LIST_PATH}?limit=${WALK_LIMIT}${position ? `&cursor=${encodeURIComponent(position.cursor)}` : ''}`;
    const response = await fetch(url, { headers: server.headers });
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    const page = (await response.json()) as Page;
    seen += page.data.length;
    const last = page.data.at(-1);
    if (page.next_cursor === null || !last) throw new Error(`the list ended after ${seen} items, before offset ${offset}`);
    position = { cursor: page.next_cursor, createdAt: Date.parse(last.created_at), id: last.opportunity_id };
  }
  if (!position) throw new Error('no position');
  return position;
}

interface Figures {
  firstPage: Comparison;
  deepPage: Comparison;
  bareCreate: Measurement;
  create: Measurement;
}

/**
 * The lists: baseline and subject in turn (compareAlternating), each alone on the machine while
 * measured (the other child idles), so that a swing of the machine's speed weighs on both.
 */
async function measureLists(server: ServerChild, bare: ServerChild, ctx: BenchContext): Promise<Pick<Figures, 'firstPage' | 'deepPage'>> {
  const walkStarted = performance.now();
  const at = await positionAt(server, DEEP_OFFSET);
  console.log(
    `   walked to offset ${DEEP_OFFSET.toLocaleString('en-US')} (limit=${WALK_LIMIT}) in ${((performance.now() - walkStarted) / 1000).toFixed(1)} s`,
  );
  const firstPage = await compareAlternating(
    (options) => measure(bare, `${BARE_OPPORTUNITIES_PATH}?limit=${PAGE}`, options),
    (options) => measure(server, FIRST_PAGE_PATH, options),
    ctx.load,
  );
  const deepPage = await compareAlternating(
    (options) => measure(bare, `${BARE_OPPORTUNITIES_PATH}?limit=${PAGE}&before_created_at=${at.createdAt}&before_id=${at.id}`, options),
    (options) => measure(server, `${FIRST_PAGE_PATH}&cursor=${encodeURIComponent(at.cursor)}`, options),
    ctx.load,
  );
  return { firstPage, deepPage };
}

/**
 * The creates, after the lists (they add rows at the head of the list). The service goes first and
 * is stopped before the baseline runs, so that its outbox readers do not work on the baseline's
 * events. (The "other CPU" of both create runs is the kernel writing the WAL.)
 */
async function measureAll(server: ServerChild, bare: ServerChild, ctx: BenchContext): Promise<Figures> {
  const lists = await measureLists(server, bare, ctx);
  const create = await measureCreate(server, ctx.load);
  await server.stop();
  const bareCreate = await measureCreate(bare, ctx.load, {}, BARE_OPPORTUNITIES_PATH);
  return { ...lists, bareCreate, create };
}

export const benchmark: Benchmark = {
  name: 'opportunities',
  description: `GET/POST ${LIST_PATH} on a cabinet of ${SEEDED_OPPORTUNITIES.toLocaleString('en-US')} opportunities, each vs the same query or insert done bare`,
  async run(ctx) {
    const dataDir = ctx.tempDir('courtier-100k');
    const seedStarted = performance.now();
    const server = await startServerChild('courtier-100k', dataDir, ctx.child);
    let figures: Figures;
    try {
      console.log(
        `   seeded ${SEEDED_OPPORTUNITIES.toLocaleString('en-US')} opportunities in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
      );
      const bare = await startServerChild('bare-sqlite', dataDir, ctx.child);
      try {
        figures = await measureAll(server, bare, ctx);
      } finally {
        await bare.stop();
      }
    } finally {
      await server.stop();
    }
    const { firstPage, deepPage, bareCreate, create } = figures;
    const { baseline: bareFirst, subject: first } = firstPage;
    const { baseline: bareDeep, subject: deep } = deepPage;

    console.log(
      formatTable(MEASUREMENT_HEADER, [
        measurementRow(`bare keyset query, first page`, bareFirst),
        measurementRow(`GET ?limit=${PAGE} (first page)`, first),
        measurementRow(`bare keyset query at offset ${DEEP_OFFSET}`, bareDeep),
        measurementRow(`GET ?limit=${PAGE} at offset ${DEEP_OFFSET}`, deep),
        measurementRow('bare insert row + event', bareCreate),
        measurementRow('POST (fresh Idempotency-Key)', create),
      ]),
    );
    const warning = busyMachineWarning([bareFirst, first, bareDeep, deep, bareCreate, create]);
    if (warning) console.log(warning);

    console.log(`first page, ${roundRatiosLine(firstPage)}`);
    console.log(`deep page, ${roundRatiosLine(deepPage)}`);
    console.log(`   lists: ${firstPage.schedule}`);
    const firstRatio = firstPage.ratio;
    const deepRatio = deepPage.ratio;
    const createRatio = create.requestsPerSecond / bareCreate.requestsPerSecond;
    const goals = [
      { met: firstRatio >= GOAL_LIST_RATIO, line: `first page / bare: ${firstRatio.toFixed(2)} (goal >= ${GOAL_LIST_RATIO})` },
      {
        met: deepRatio >= GOAL_LIST_RATIO,
        line: `page at offset ${DEEP_OFFSET} / bare: ${deepRatio.toFixed(2)} (goal >= ${GOAL_LIST_RATIO}); deep/first p50 ${(deep.p50Ms / first.p50Ms).toFixed(2)}`,
      },
      {
        met: createRatio >= GOAL_CREATE_RATIO,
        line: `create / bare: ${createRatio.toFixed(2)}, ${Math.round(create.requestsPerSecond)} vs ${Math.round(bareCreate.requestsPerSecond)} created/s (goal >= ${GOAL_CREATE_RATIO})`,
      },
      { met: create.p99Ms < GOAL_CREATE_P99_MS, line: `create p99: ${create.p99Ms.toFixed(2)} ms (goal < ${GOAL_CREATE_P99_MS})` },
    ];
    for (const goal of goals) console.log(goalLine(goal.line, goal.met));
    console.log(
      `µs CPU per request: first ${cpuPerRequest(first).toFixed(1)} (bare ${cpuPerRequest(bareFirst).toFixed(1)}), deep ${cpuPerRequest(deep).toFixed(1)} (bare ${cpuPerRequest(bareDeep).toFixed(1)}), create ${cpuPerRequest(create).toFixed(1)} (bare ${cpuPerRequest(bareCreate).toFixed(1)})`,
    );
    const goalMet = goals.every((g) => g.met);
    const summary = `list/bare ${firstRatio.toFixed(2)} first, ${deepRatio.toFixed(2)} deep; create/bare ${createRatio.toFixed(2)}, p99 ${create.p99Ms.toFixed(1)} ms: ${goalMet ? 'all goals met' : 'MISSED'}`;
    return { goalMet, summary };
  },
};
