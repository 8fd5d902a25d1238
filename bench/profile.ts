/**
 * npm run profile -- <me|mcp> [--seconds S]
 *
 * Where a request's CPU goes beyond its baseline's: each side is loaded as its benchmark loads it
 * (autocannon, 10 connections, after a warm-up) while Linux perf samples the server child
 * (`perf record -e cpu-clock -g`, node --perf-basic-prof for JIT-compiled functions), and each
 * sample is put down to a part of the request path (bench/lib/perf-parts.ts). Unlike callgrind,
 * V8's optimising compiler runs as usual; unlike --cpu-prof, the kernel and the other threads
 * count. Needs perf (Debian's linux-perf) and permission to attach to a process (root here).
 * perf's call graphs slow the server several times over: read the shares.
 */
import type { Result } from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { getMe } from '../shared/api-keys.js';
import { pathTo } from '../shared/endpoint.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { exitCleanlyOnSignals, registerCleanup, runCleanups } from './lib/cleanup.js';
import { assertAllOk, startLoad, type LoadRequest } from './lib/load.js';
import { microsPerRequestByPart, perfScriptParser, type AttributedSample } from './lib/perf-parts.js';
import { BARE_PATH, type TargetName } from './lib/protocol.js';
import { formatTable } from './lib/report.js';
import { createTempDir, type TempDir } from './lib/temp.js';
import { whoamiRequest } from './mcp.bench.js';

const ME_PATH = pathTo(getMe);
const CONNECTIONS = 10;
const WARMUP_SECONDS = 3;
const SAMPLES_PER_SECOND = 4000;
/** perf attaches to the process within a few ms; this leaves it room before the load starts. */
const ATTACH_MS = 300;

interface Side {
  label: string;
  target: TargetName;
  request(server: ServerChild): LoadRequest;
}

const getPath =
  (path: string) =>
  (server: ServerChild): LoadRequest => ({ url: server.origin + path, headers: server.headers });

/** Each benchmark's subject and baseline. */
const PRESETS: Record<string, { subject: Side; baseline: Side }> = {
  me: {
    subject: { label: `GET ${ME_PATH}`, target: 'courtier', request: getPath(ME_PATH) },
    baseline: { label: `bare GET ${BARE_PATH}`, target: 'bare', request: getPath(BARE_PATH) },
  },
  mcp: {
    subject: { label: 'tools/call whoami', target: 'courtier-mcp', request: whoamiRequest },
    baseline: { label: `GET ${ME_PATH}`, target: 'courtier-mcp', request: getPath(ME_PATH) },
  },
};

/** Streams `perf script` into the parser: a recording's text can outgrow a string. */
async function readRecording(data: string): Promise<AttributedSample[]> {
  const perf = spawn('perf', ['script', '-i', data, '-F', 'tid,period,ip,sym'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = collect(perf.stderr);
  const closed = once(perf, 'close') as Promise<[number | null]>;
  const parser = perfScriptParser();
  for await (const line of createInterface({ input: perf.stdout })) parser.line(line);
  const [code] = await closed;
  if (code !== 0) throw new Error(`perf script failed (exit ${String(code)}): ${stderr()}`);
  return parser.samples();
}

/** What a child process writes to a stream, kept for an error message. */
function collect(stream: Readable): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString().trim().slice(-500);
}

/** perf record on the server child while `load` runs; the requests it answered. */
async function recordDuring(pid: number, data: string, load: () => PromiseLike<Result>): Promise<Result> {
  const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(SAMPLES_PER_SECOND), '-g', '-o', data, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr = collect(perf.stderr);
  const stopped = once(perf, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const unregister = registerCleanup({ run: async () => void perf.kill('SIGINT'), runSync: () => void perf.kill('SIGKILL') });
  let result: Result;
  try {
    await sleep(ATTACH_MS);
    // Not root, or perf_event_paranoid too high: perf is gone already.
    if (perf.exitCode !== null || perf.signalCode !== null)
      throw new Error(`perf record could not attach to the server (pid ${pid}): ${stderr()}`);
    result = await load();
  } finally {
    perf.kill('SIGINT');
    await stopped;
    unregister();
  }
  const [code, signal] = await stopped;
  if (code !== 0 && signal !== 'SIGINT') throw new Error(`perf record failed (exit ${String(code)}): ${stderr()}`);
  return result;
}

/** Loads one side while perf records its server child; CPU µs per request by part. */
async function profileSide(side: Side, seconds: number, temp: TempDir): Promise<Map<string, number>> {
  const server = await startServerChild(side.target, temp.sub(side.target), { perfMap: { v8LogDir: temp.sub('v8-logs') } });
  // Written by node --perf-basic-prof, outside the temp dir: perf looks for it there.
  const map = `/tmp/perf-${server.pid}.map`;
  const removeMap = () => rmSync(map, { force: true });
  const unregisterMap = registerCleanup({ run: async () => removeMap(), runSync: removeMap });
  try {
    const request = side.request(server);
    assertAllOk(await startLoad(request, CONNECTIONS, WARMUP_SECONDS), `${side.label} warm-up`);
    const data = join(temp.path, `${side.target}-${Date.now()}.perf.data`);
    const result = await recordDuring(server.pid, data, () => startLoad(request, CONNECTIONS, seconds));
    assertAllOk(result, side.label);
    return microsPerRequestByPart(await readRecording(data), result.requests.total);
  } finally {
    try {
      await server.stop();
    } finally {
      removeMap();
      unregisterMap();
    }
  }
}

function report(preset: { subject: Side; baseline: Side }, subject: Map<string, number>, baseline: Map<string, number>): void {
  const sum = (parts: Map<string, number>) => [...parts.values()].reduce((a, b) => a + b, 0);
  const extraTotal = sum(subject) - sum(baseline);
  const parts = [...new Set([...subject.keys(), ...baseline.keys()])].map((part) => {
    const mine = subject.get(part) ?? 0;
    const theirs = baseline.get(part) ?? 0;
    return { part, mine, theirs, extra: mine - theirs };
  });
  parts.sort((a, b) => b.extra - a.extra);
  const share = (extra: number) => (extraTotal > 0 ? `${((100 * extra) / extraTotal).toFixed(1)}%` : '-');
  const row = (part: string, mine: number, theirs: number, extra: number) => [
    part,
    mine.toFixed(1),
    theirs.toFixed(1),
    extra.toFixed(1),
    share(extra),
  ];
  console.log(
    formatTable(
      ['part', `${preset.subject.label} µs/req`, `${preset.baseline.label} µs/req`, 'extra µs', 'share of the extra'],
      [
        ...parts.map(({ part, mine, theirs, extra }) => row(part, mine, theirs, extra)),
        row('total', sum(subject), sum(baseline), extraTotal),
      ],
    ),
  );
  if (extraTotal <= 0)
    console.log(`   WARNING: ${preset.subject.label} cost no more than ${preset.baseline.label}: the VM swung between the two, run again`);
  console.log('   µs of CPU per request under perf, which slows the server (1.5 to 3 times on the EPYC VM): read the shares.');
  console.log('   The two sides run one after the other: when the VM swings between them, every row moves (run it again).');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { seconds: { type: 'string', default: '8' } },
  });
  const name = positionals[0] ?? '';
  const preset = PRESETS[name];
  if (!preset || positionals.length !== 1)
    throw new Error(`name one of ${Object.keys(PRESETS).join(', ')} (got ${positionals.join(' ') || 'nothing'})`);
  const seconds = Number(values.seconds);
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`--seconds must be a positive integer, not ${values.seconds}`);
  if (spawnSync('perf', ['--version']).status !== 0) throw new Error('perf is not installed (Debian: apt-get install -y linux-perf)');
  exitCleanlyOnSignals();
  console.log(
    `== profile ${name}: ${preset.subject.label} against ${preset.baseline.label}, sampled by perf at ${SAMPLES_PER_SECOND} Hz for ${seconds} s each`,
  );
  const temp = createTempDir(`courtier-profile-${name}-`);
  try {
    const subject = await profileSide(preset.subject, seconds, temp);
    const baseline = await profileSide(preset.baseline, seconds, temp);
    report(preset, subject, baseline);
  } finally {
    temp.remove();
  }
}

main().catch(async (err: unknown) => {
  console.error('\nprofile failed:', err instanceof Error ? err.message : err);
  await runCleanups();
  process.exit(1);
});
