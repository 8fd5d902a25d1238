/**
 * npm run bench:variant -- --variant DIR [--line me|create|list|mcp]... [--duration S] [--warmup S] [--connections N]
 *
 * The same line of a benchmark served by this build and by a variant build (DIR: another checkout,
 * built, with its node_modules): the two servers in turn, in alternating pairs, on the same machine
 * in the same run. This is how a trick of the platform layer is judged: the variant is the code
 * without it, and the trick stays only if removing it moves its line by 3 % or more.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { getMe } from '../shared/api-keys.js';
import { listOpportunities } from '../shared/crm-endpoints.js';
import { pathTo } from '../shared/endpoint.js';
import { compareAlternating, roundRatiosLine, type Round } from './lib/alternate.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { exitCleanlyOnSignals, runCleanups } from './lib/cleanup.js';
import { measureCreate } from './lib/create.js';
import { measureWhoami } from './mcp.bench.js';
import { measure, type LoadOptions } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { busyMachineWarning, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { createTempDir } from './lib/temp.js';
import { SEEDED_OPPORTUNITIES, type TargetName } from './lib/protocol.js';

const LIST_PATH = `${pathTo(listOpportunities)}?limit=50`;

/** What moves a line enough to keep the code that moves it (the project's rule for tricks). */
const SIGNIFICANT = 0.03;

interface Line {
  target: TargetName;
  description: string;
  round: (server: ServerChild) => Round;
}

const LINES: Record<string, Line> = {
  me: { target: 'courtier', description: `GET ${pathTo(getMe)}`, round: (server) => (options) => measure(server, pathTo(getMe), options) },
  create: { target: 'courtier', description: 'POST /opportunities', round: (server) => (options) => measureCreate(server, options) },
  list: {
    target: 'courtier-100k',
    description: `GET ${LIST_PATH} (the first page of 50, out of ${SEEDED_OPPORTUNITIES.toLocaleString('en')} opportunities)`,
    round: (server) => (options) => measure(server, LIST_PATH, options),
  },
  mcp: {
    target: 'courtier-mcp',
    description: 'tools/call whoami through POST /mcp',
    round: (server) => (options) => measureWhoami(server, options),
  },
};

function positive(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer, not ${value}`);
  return n;
}

async function compareLine(
  name: string,
  line: Line,
  variantScript: string,
  load: LoadOptions,
  tempDir: (name: string) => string,
): Promise<string> {
  console.log(`\n== ${name}: ${line.description}, this build vs the variant`);
  const here = await startServerChild(line.target, tempDir(`${name}-here`));
  try {
    const variant = await startServerChild(line.target, tempDir(`${name}-variant`), { script: variantScript });
    try {
      const comparison = await compareAlternating(line.round(here), line.round(variant), load);
      console.log(
        formatTable(MEASUREMENT_HEADER, [measurementRow('this build', comparison.baseline), measurementRow('variant', comparison.subject)]),
      );
      const warning = busyMachineWarning([comparison.baseline, comparison.subject]);
      if (warning) console.log(warning);
      console.log(roundRatiosLine(comparison));
      const moved = comparison.ratio - 1;
      const verdict = Math.abs(moved) >= SIGNIFICANT ? 'moves the line' : 'within 3 %';
      // CPU per request hardly moves when another process takes a core; the rate does.
      const cpu = cpuPerRequest(comparison.subject) / cpuPerRequest(comparison.baseline);
      return `${name}: variant ÷ this build ${comparison.ratio.toFixed(3)} (${moved >= 0 ? '+' : ''}${(moved * 100).toFixed(1)} %, ${verdict}); CPU per request ${cpu.toFixed(3)}`;
    } finally {
      await variant.stop();
    }
  } finally {
    await here.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      variant: { type: 'string' },
      line: { type: 'string', multiple: true },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
    },
  });
  if (!values.variant) throw new Error('--variant DIR is required: a built checkout of the variant (its dist/bench/server-child.js)');
  const variantScript = join(resolve(values.variant), 'dist', 'bench', 'server-child.js');
  if (!existsSync(variantScript)) throw new Error(`${variantScript} is missing: run npm run build in the variant's checkout`);
  const names = values.line ?? ['me', 'create'];
  const unknown = names.filter((name) => !(name in LINES));
  if (unknown.length > 0) throw new Error(`unknown line ${unknown.join(', ')}; known: ${Object.keys(LINES).join(', ')}`);
  const load: LoadOptions = {
    durationSeconds: positive(values.duration, 10, '--duration'),
    warmupSeconds: positive(values.warmup, 3, '--warmup'),
    connections: positive(values.connections, 10, '--connections'),
  };
  console.log(`   ${describeMachine()}`);
  exitCleanlyOnSignals();
  const temp = createTempDir('courtier-bench-variant-');
  const results: string[] = [];
  try {
    for (const name of names) results.push(await compareLine(name, LINES[name]!, variantScript, load, (sub) => temp.sub(sub)));
  } finally {
    temp.remove();
  }
  console.log('\n== summary');
  for (const line of results) console.log(line);
}

main().catch(async (err: unknown) => {
  console.error('\nvariant comparison failed:', err instanceof Error ? err.message : err);
  await runCleanups();
  process.exit(1);
});
