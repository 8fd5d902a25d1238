/**
 * npm run bench [-- <name>...] [--duration S] [--warmup S] [--connections N] [--cpu-prof-dir DIR] [--list]
 *
 * Runs the named benchmarks (all of them by default), one after another. A missed goal is
 * printed, not an error: the exit code is 1 only when a benchmark could not run.
 */
import { parseArgs } from 'node:util';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Benchmark, BenchContext, BenchOutcome } from './benchmark.js';
import { exitCleanlyOnSignals, runCleanups } from './lib/cleanup.js';
import type { LoadOptions } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { createTempDir, type TempDir } from './lib/temp.js';
import { meBenchmark } from './me.js';

/**
 * Every benchmark, in running order: `me` first, then every bench/*.bench.ts (compiled to
 * dist/bench/*.bench.js) in name order, each exporting `benchmark`. A new benchmark is one file.
 */
async function loadBenchmarks(): Promise<Benchmark[]> {
  const dir = dirname(fileURLToPath(import.meta.url));
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.js'))
    .sort();
  const found: Benchmark[] = [meBenchmark];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { benchmark?: Benchmark };
    if (!module.benchmark) throw new Error(`${file} exports no benchmark`);
    found.push(module.benchmark);
  }
  return found;
}

/**
 * For a 2-core machine: the server child gets one core and autocannon (single-threaded) the other.
 * 10 connections keep the server busy at all times without queueing so deep that latency measures
 * the queue; 3 s is enough for V8 to optimise the hot path and for SQLite to have its pages cached;
 * 10 s measured makes run-to-run noise a few percent. A benchmark that compares two rates
 * (`compareAlternating`) measures each side about 10 s in four rounds, and prints its schedule.
 */
const DEFAULT_LOAD: LoadOptions = { warmupSeconds: 3, durationSeconds: 10, connections: 10 };

interface Cli {
  names: string[];
  load: LoadOptions;
  cpuProfDir: string | undefined;
  list: boolean;
}

function positiveInteger(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer, not ${value}`);
  return n;
}

function parseCli(argv: string[]): Cli {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
      list: { type: 'boolean', default: false },
    },
  });
  return {
    names: positionals,
    load: {
      durationSeconds: positiveInteger(values.duration, DEFAULT_LOAD.durationSeconds, '--duration'),
      warmupSeconds: positiveInteger(values.warmup, DEFAULT_LOAD.warmupSeconds, '--warmup'),
      connections: positiveInteger(values.connections, DEFAULT_LOAD.connections, '--connections'),
    },
    cpuProfDir: values['cpu-prof-dir'] === undefined ? undefined : resolve(values['cpu-prof-dir']),
    list: values.list ?? false,
  };
}

function select(BENCHMARKS: readonly Benchmark[], names: string[]): Benchmark[] {
  if (names.length === 0) return [...BENCHMARKS];
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  return BENCHMARKS.filter((b) => names.includes(b.name));
}

function context(cli: Cli, temp: TempDir): BenchContext {
  return { load: cli.load, child: cli.cpuProfDir ? { cpuProfDir: cli.cpuProfDir } : {}, tempDir: (name) => temp.sub(name) };
}

async function runOne(benchmark: Benchmark, cli: Cli): Promise<BenchOutcome> {
  const { warmupSeconds, durationSeconds, connections } = cli.load;
  console.log(`\n== ${benchmark.name}: ${benchmark.description}`);
  console.log(
    `   ${connections} connections, ${warmupSeconds} s warm-up then ${durationSeconds} s measured per target (in rounds where a benchmark prints its schedule)`,
  );
  console.log(`   ${describeMachine()}\n`);
  const temp = createTempDir(`courtier-bench-${benchmark.name}-`);
  try {
    return await benchmark.run(context(cli, temp));
  } finally {
    temp.remove();
  }
}

async function main(): Promise<void> {
  const cli = parseCli(process.argv.slice(2));
  const benchmarks = await loadBenchmarks();
  if (cli.list) {
    for (const b of benchmarks) console.log(`${b.name}\t${b.description}`);
    return;
  }
  const selected = select(benchmarks, cli.names);
  if (cli.cpuProfDir) mkdirSync(cli.cpuProfDir, { recursive: true });
  exitCleanlyOnSignals();
  const outcomes: [string, BenchOutcome][] = [];
  for (const benchmark of selected) outcomes.push([benchmark.name, await runOne(benchmark, cli)]);
  console.log('\n== summary');
  for (const [name, outcome] of outcomes) console.log(`${name}: ${outcome.summary}`);
  if (cli.cpuProfDir) console.log(`CPU profiles of the server children: ${cli.cpuProfDir}`);
}

main().catch(async (err: unknown) => {
  console.error('\nbenchmark failed:', err instanceof Error ? err.message : err);
  await runCleanups();
  process.exit(1);
});
