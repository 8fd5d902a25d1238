/**
 * Sync with a hub on PostgreSQL. A throwaway PostgreSQL cluster (test/helpers/postgres.ts),
 * the hub in a server child as `courtier hub serve` runs it, the installs in this process (their
 * services called directly, as the CLI calls them) or, for the HTTP rate, in a server child. Each
 * measure has its baseline in the same run:
 *
 *  1. connect + upload of 100,000 records of ~1 KB (connectCabinet + uploadQueue): goal <= 10 s,
 *     and >= 0.5x the rate of a bare bulk insert of the same rows into the same PostgreSQL (a plain
 *     table without indexes, INSERT … SELECT FROM jsonb_to_recordset, same batch size, one connection);
 *  2. join restoring them (joinCabinet + downloadAll into a fresh data dir): goal <= 15 s; baseline a
 *     bare SELECT of the same rows (same page size) + a bare INSERT into a plain SQLite table;
 *  3. an opportunity created on A visible on B, 50 creates/s for 10 s, both installs' sync engines
 *     running (B long-polls): p50 <= 300 ms, p99 <= 1 s; baseline a bare round trip through the
 *     hub (one device pushes one change, another's long poll wakes with it);
 *  4. POST /opportunities with sync on (cabinet connected, engine running) vs off: goal >= 0.8x; both
 *     servers running, loaded in turn (bench/lib/alternate.ts), each alone on CPU 0, the load, the hub
 *     and PostgreSQL on the others (a hub runs elsewhere);
 *  5. 8 devices of one cabinet pushing batches at once through the hub: goal >= 5,000 rows/s;
 *     baseline 8 concurrent bare bulk inserts of the same rows;
 *  6. 8 devices of 8 different cabinets, each pushing one change at a time, all at once: goal >= 3x
 *     the rate of one of them pushing alone (the pushes of different cabinets must not commit one
 *     after the other), the two in turn (bench/lib/alternate.ts). Plus, for information, the
 *     latency of a one-change push.
 *
 * PostgreSQL runs with its durable defaults (fsync, synchronous_commit, full_page_writes on): a
 * commit waits for the disk, as on a hub in production.
 *
 * On a 2-core machine the installs, the hub and PostgreSQL share the cores; every phase prints the
 * CPU each used, and what the rest of the machine took meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { devNull } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres, { type Sql } from 'postgres';
import type { Benchmark, BenchContext } from './benchmark.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { registerCleanup } from './lib/cleanup.js';
import { measureCreate } from './lib/create.js';
import type { CpuReader, Measurement } from './lib/load.js';
import { cpuCount, machineIdleMicros } from './lib/machine.js';
import { postgresCpuReader, postgresPids } from './lib/processes.js';
import { pinToCpus } from './lib/affinity.js';
import { compareAlternating, inPairs, pairRatios, roundRatiosLine, type Comparison } from './lib/alternate.js';
import { HUB_DATABASE_URL_ENV, SYNC_HUB_URL_ENV } from './lib/protocol.js';
import { BUSY_MACHINE_CORES, cpuPerRequest, formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { percentile } from './lib/latency.js';
import { startTestPostgres } from '../test/helpers/postgres.js';
import { OPPORTUNITY_STAGES } from '../shared/crm.js';
import { pathTo } from '../shared/endpoint.js';
import {
  pullChanges,
  pushChanges,
  SYNC_PROTOCOL_HEADER,
  SYNC_PROTOCOL_VERSION,
  type PullResponse,
  type SyncChange,
} from '../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../shared/sync-pairing.js';
import { formatHlc } from '../shared/hlc.js';
import { loadConfig } from '../server/config.js';
import { createOpportunity } from '../server/crm/service.js';
import { databaseFile, openDatabase } from '../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../server/deps.js';
import { connectHub } from '../server/hub/database.js';
import { hubDeps } from '../server/hub/deps.js';
import { createInvite, type InviteTarget } from '../server/hub/pairing.js';
import { createLogger, logDestination } from '../server/platform/logging.js';
import { createSyncEngine, type SyncEngine } from '../server/sync/engine.js';
import { PULL_PAGE } from '../server/sync/pull.js';
import { PUSH_BATCH } from '../server/sync/push.js';
import { syncedRecords } from '../server/sync/records.js';
import { connectCabinet, joinCabinet } from '../server/sync/service.js';
import { downloadAll, uploadQueue } from '../server/sync/transfer.js';
import { initCabinet } from '../server/tenancy/service.js';
import { CLI_ACTOR } from '../server/audit/service.js';

export const RECORDS = 100_000;
const LATENCY_RATE = 50;
const LATENCY_SECONDS = 10;
/** A change still missing this long after the last create is counted as this late. */
const LATENCY_DRAIN_MS = 10_000;
const DEVICES = 8;
const ROWS_PER_DEVICE = 5_000;
/** Phase 6: one device in each of this many cabinets. */
const CABINETS = 8;
/** Phase 6: one-change pushes each pushing device sends in a round. */
const PUSHES_PER_ROUND = 400;
/** The longest the installs' cursors may take to reach the hub's newest seq before the latency phase. */
const CATCH_UP_TIMEOUT_MS = 120_000;

const GOAL_UPLOAD_S = 10;
const GOAL_UPLOAD_RATIO = 0.5;
const GOAL_JOIN_S = 15;
const GOAL_P50_MS = 300;
const GOAL_P99_MS = 1_000;
const GOAL_POST_RATIO = 0.8;
const GOAL_HUB_ROWS_PER_S = 5_000;
const GOAL_CABINETS_RATIO = 3;

const PASSWORD = 'correct horse battery staple';
const PROTOCOL = { [SYNC_PROTOCOL_HEADER]: String(SYNC_PROTOCOL_VERSION) };
const PRODUCTS = ['auto', 'mrh', 'sante', 'prevoyance', 'rc-pro'] as const;
const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);

/** ~1 KB: 18 tags of 48 characters (the API takes up to 50 of 50), beside an ordinary opportunity. */
function tagsOf(i: number): string[] {
  return Array.from({ length: 18 }, (_, k) => `segment-${i % 97}-${k}-`.padEnd(48, 'abcdefghij'));
}

/** Opportunity i as its row's columns (SQL names): the fields its change carries. */
export function opportunityFields(i: number, now: number): Record<string, unknown> {
  return {
    title: `Flotte ${i} véhicules`,
    product: PRODUCTS[i % PRODUCTS.length],
    stage: OPPORTUNITY_STAGES[i % OPPORTUNITY_STAGES.length],
    expected_value_cents: (i % 5000) * 100 + 50,
    source: 'api',
    contact: JSON.stringify({
      last_name: `Client ${i}`,
      first_name: null,
      company_name: `Société ${i}`,
      siret: null,
      email: `client${i}@example.fr`,
      phone: null,
    }),
    tags: JSON.stringify(tagsOf(i)),
    created_via: 'api',
    created_at: now - (RECORDS - i) * 1000,
    updated_at: now - (RECORDS - i) * 1000,
  };
}

export interface Install {
  deps: Deps;
  close(): void;
}

/** An install as the CLI opens one: its SQLite file, its secret store, no server. */
export function openInstall(dataDir: string): Install {
  const config = loadConfig({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'info' }, {});
  const db = openDatabase(databaseFile(dataDir));
  return { deps: defaultDeps(db, config, { env: {} }), close: () => db.close() };
}

/** The fast seed: RECORDS opportunities written straight into the table, in one transaction (no events, no outbox: sync is off). */
export function seedOpportunities(install: Install, cabinetId: string): number {
  const insert = install.deps.db.sqlite.prepare(
    `INSERT INTO opportunities (id, cabinet_id, title, product, stage, expected_value_cents, source, contact, tags, created_via, created_at, updated_at)
     VALUES (@id, @cabinet_id, @title, @product, @stage, @expected_value_cents, @source, @contact, @tags, @created_via, @created_at, @updated_at)`,
  );
  const now = Date.now();
  let bytes = 0;
  install.deps.db.sqlite.transaction(() => {
    for (let i = 0; i < RECORDS; i++) {
      const fields = opportunityFields(i, now);
      if (i === 0) bytes = JSON.stringify(fields).length;
      insert.run({ id: randomUUID(), cabinet_id: cabinetId, ...fields });
    }
  })();
  return bytes;
}

// --- CPU of each process over a phase -----------------------------------------------------------

interface PhaseCpu {
  seconds: number;
  /** Cores used, by process name, and by the rest of the machine ('other'). */
  cores: Record<string, number>;
}

/** Starts metering: the returned function ends the phase and tells each process's CPU, in cores. */
async function meter(readers: Record<string, CpuReader>): Promise<() => Promise<PhaseCpu>> {
  const read = async () =>
    Object.fromEntries(await Promise.all(Object.entries(readers).map(async ([name, r]) => [name, await r()] as const)));
  const before = await read();
  const idleBefore = machineIdleMicros();
  const started = performance.now();
  return async () => {
    const wall = (performance.now() - started) * 1000;
    const idle = machineIdleMicros() - idleBefore;
    const after = await read();
    const cores: Record<string, number> = {};
    let known = 0;
    for (const name of Object.keys(readers)) {
      cores[name] = ((after[name] ?? 0) - (before[name] ?? 0)) / wall;
      known += cores[name] ?? 0;
    }
    cores.other = Math.max(0, cpuCount() - idle / wall - known);
    return { seconds: wall / 1e6, cores };
  };
}

const pct = (cores: number | undefined) => (cores === undefined ? 'n/a' : `${Math.round(cores * 100)}%`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const CPU_COLUMNS = ['bench CPU', 'hub CPU', 'PostgreSQL CPU', 'other CPU'] as const;
const cpuCells = (cpu: PhaseCpu) => [pct(cpu.cores.bench), pct(cpu.cores.hub), pct(cpu.cores.postgres), pct(cpu.cores.other)];

function verdict(met: boolean): string {
  return met ? 'goal met' : 'MISSED';
}

// --- Talking to the hub directly (the baselines, the 8 devices) ---------------------------------

interface Device {
  id: string;
  headers: Record<string, string>;
}

async function pair(hubUrl: string, code: string, name: string, cabinet?: { id: string; name: string }): Promise<Device> {
  const response = await fetch(hubUrl + pathTo(pairDevice), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    body: JSON.stringify({ code, device_name: name, ...(cabinet ? { cabinet } : {}) }),
  });
  if (response.status !== 201) throw new Error(`pairing ${name} answered ${response.status}: ${await response.text()}`);
  const paired = (await response.json()) as PairResponse;
  return { id: paired.device_id, headers: { authorization: `Bearer ${paired.device_secret}`, ...PROTOCOL } };
}

async function push(hubUrl: string, device: Device, body: string): Promise<void> {
  const response = await fetch(hubUrl + pathTo(pushChanges), {
    method: 'POST',
    headers: { ...device.headers, 'content-type': 'application/json' },
    body,
  });
  if (response.status !== 200) throw new Error(`push answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  await response.arrayBuffer();
}

function changeOf(device: Device, number: number, recordId: string, fields: Record<string, unknown>): SyncChange {
  return {
    number,
    kind: 'opportunity',
    record_id: recordId,
    op: 'upsert',
    hlc: formatHlc({ time: Date.now(), counter: number % 1000, device: device.id }),
    fields,
  };
}

// --- Bare baselines -----------------------------------------------------------------------------

const BARE_TABLE = `CREATE TABLE bare_changes (cabinet_id text, seq bigint, device_id text, number bigint, kind text, record_id text, op text, hlc text, fields jsonb, received_at timestamptz)`;

interface BareRow {
  number: number;
  kind: string;
  record_id: string;
  op: string;
  hlc: string;
  fields: unknown;
}

/** The hub's own INSERT (store.ts insertChanges) into the plain table: one statement per batch. */
async function bareInsert(sql: Sql, cabinetId: string, deviceId: string, firstSeq: number, rowsJson: string): Promise<void> {
  await sql`
    INSERT INTO bare_changes (cabinet_id, seq, device_id, number, kind, record_id, op, hlc, fields, received_at)
    SELECT ${cabinetId}, ${firstSeq}::bigint + r.i, ${deviceId}, r.number, r.kind, r.record_id, r.op, r.hlc, r.fields, now()
    FROM jsonb_to_recordset(${rowsJson}::text::jsonb) AS r(i int, number bigint, kind text, record_id text, op text, hlc text, fields jsonb)`;
}

function batchJson(rows: readonly BareRow[]): string {
  return JSON.stringify(rows.map((r, i) => ({ i, ...r })));
}

function batches<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

// --- The benchmark ------------------------------------------------------------------------------

interface Env {
  ctx: BenchContext;
  hubUrl: string;
  hubPid: number;
  pgPort: number;
  /** Plain client of the hub's database (the baselines' reads, checks), and of a database of its own for the bare tables. */
  hubSql: Sql;
  bareSql: Sql;
  readers: Record<string, CpuReader>;
  invite(target: InviteTarget): Promise<string>;
}

interface Results {
  lines: string[];
  met: boolean[];
  summary: string[];
  /** The most the rest of the machine took during a measured phase, in cores. */
  worstOther: number;
}

function noteOther(results: Results, ...cores: (number | undefined)[]): void {
  results.worstOther = Math.max(results.worstOther, ...cores.map((c) => c ?? 0));
}

async function uploadAndJoin(env: Env, results: Results): Promise<{ a: Install; b: Install; cabinetId: string }> {
  const { ctx, hubUrl } = env;
  const records = syncedRecords();
  const a = openInstall(ctx.tempDir('install-a'));
  const { cabinet_id: cabinetId } = await initCabinet(a.deps, { cabinet: 'Cabinet Sync Bench', email: 'a@example.fr', password: PASSWORD });
  const seedStarted = performance.now();
  const bytes = seedOpportunities(a, cabinetId);
  console.log(
    `   seeded ${int.format(RECORDS)} opportunities on A in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s; one record's fields: ${bytes} bytes of JSON`,
  );

  // 1. connect + upload.
  const code = await env.invite({ register: cabinetId });
  const uploadCpu = await meter(env.readers);
  const started = performance.now();
  const connected = await connectCabinet(a.deps, { cabinetId, hubUrl, code, deviceName: 'A' }, { fetch: fetchHub, records }, CLI_ACTOR);
  const queuedAt = performance.now();
  const sent = await uploadQueue(a.deps, records, cabinetId, fetchHub, () => undefined);
  const uploadSeconds = (performance.now() - started) / 1000;
  const upload = await uploadCpu();
  // The opportunities, and the cabinet's administrator: the staff list syncs too.
  const uploaded = RECORDS + 1;
  if (connected.queued !== uploaded || sent !== uploaded)
    throw new Error(`connect queued ${connected.queued} and uploaded ${sent} changes, not ${uploaded}`);

  // Baseline: the same rows (read back from the hub, untimed), bulk-inserted in batches of the push's size.
  const stored = await env.hubSql<
    BareRow[]
  >`SELECT number, kind, record_id, op, hlc, fields FROM hub_changes WHERE cabinet_id = ${cabinetId} ORDER BY seq`;
  const storedRows = stored.map((r) => ({
    number: Number(r.number),
    kind: r.kind,
    record_id: r.record_id,
    op: r.op,
    hlc: r.hlc,
    fields: r.fields,
  }));
  await env.bareSql.unsafe(BARE_TABLE);
  const bareUploadCpu = await meter(env.readers);
  const bareStarted = performance.now();
  let seq = 1;
  for (const batch of batches(storedRows, PUSH_BATCH)) {
    await bareInsert(env.bareSql, cabinetId, connected.device_id, seq, batchJson(batch));
    seq += batch.length;
  }
  const bareUploadSeconds = (performance.now() - bareStarted) / 1000;
  const bareUpload = await bareUploadCpu();
  await env.bareSql`TRUNCATE bare_changes`;

  // 2. join into a fresh data dir.
  const b = openInstall(ctx.tempDir('install-b'));
  const joinCode = await env.invite({ join: cabinetId });
  const joinCpu = await meter(env.readers);
  const joinStarted = performance.now();
  await joinCabinet(
    b.deps,
    { hubUrl, code: joinCode, deviceName: 'B', email: 'b@example.fr', password: PASSWORD },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  const joinedAt = performance.now();
  const received = await downloadAll(b.deps, records, cabinetId, fetchHub, () => undefined);
  const joinSeconds = (performance.now() - joinStarted) / 1000;
  const join = await joinCpu();
  const onB = b.deps.db.sqlite.prepare<[string], number>('SELECT count(*) FROM opportunities WHERE cabinet_id = ?').pluck().get(cabinetId);
  if (onB !== RECORDS) throw new Error(`B holds ${onB} opportunities after the join, not ${RECORDS} (${received} changes applied)`);

  // Baseline: the same rows read in pages of the pull's size, each page inserted into a plain SQLite table in one transaction.
  const bare = openInstall(ctx.tempDir('bare-sqlite'));
  bare.deps.db.sqlite.exec('CREATE TABLE bare_rows (id TEXT PRIMARY KEY, kind TEXT NOT NULL, hlc TEXT NOT NULL, fields TEXT NOT NULL)');
  const insertRow = bare.deps.db.sqlite.prepare('INSERT INTO bare_rows (id, kind, hlc, fields) VALUES (?, ?, ?, ?)');
  const bareJoinCpu = await meter(env.readers);
  const bareJoinStarted = performance.now();
  let bareReceived = 0;
  for (let after = 0; ;) {
    const page = await env.hubSql<{ seq: string; record_id: string; kind: string; hlc: string; fields: string }[]>`
      SELECT seq, record_id, kind, hlc, fields::text AS fields FROM hub_changes
      WHERE cabinet_id = ${cabinetId} AND seq > ${after} ORDER BY seq LIMIT ${PULL_PAGE}`;
    bare.deps.db.sqlite.transaction(() => {
      for (const row of page) insertRow.run(row.record_id, row.kind, row.hlc, row.fields);
    })();
    bareReceived += page.length;
    const last = page[page.length - 1];
    if (!last || page.length < PULL_PAGE) break;
    after = Number(last.seq);
  }
  const bareJoinSeconds = (performance.now() - bareJoinStarted) / 1000;
  const bareJoin = await bareJoinCpu();
  bare.close();
  if (bareReceived !== uploaded) throw new Error(`the bare read found ${bareReceived} rows, not ${uploaded}`);

  const rate = (s: number) => int.format(RECORDS / s);
  console.log(
    formatTable(
      ['phase', 'records', 'seconds', 'records/s', ...CPU_COLUMNS],
      [
        [
          '1. connect + upload (connectCabinet + uploadQueue)',
          int.format(RECORDS),
          uploadSeconds.toFixed(2),
          rate(uploadSeconds),
          ...cpuCells(upload),
        ],
        ['     of which connect (pair, queue every record)', '', ((queuedAt - started) / 1000).toFixed(2), '', '', '', '', ''],
        [
          `   bare bulk INSERT into PostgreSQL, batches of ${PUSH_BATCH}`,
          int.format(RECORDS),
          bareUploadSeconds.toFixed(2),
          rate(bareUploadSeconds),
          ...cpuCells(bareUpload),
        ],
        [
          '2. join + download (joinCabinet + downloadAll)',
          int.format(RECORDS),
          joinSeconds.toFixed(2),
          rate(joinSeconds),
          ...cpuCells(join),
        ],
        ['     of which join (pair, account, link)', '', ((joinedAt - joinStarted) / 1000).toFixed(2), '', '', '', '', ''],
        [
          `   bare SELECT (pages of ${PULL_PAGE}) + SQLite INSERT`,
          int.format(RECORDS),
          bareJoinSeconds.toFixed(2),
          rate(bareJoinSeconds),
          ...cpuCells(bareJoin),
        ],
      ],
    ),
  );
  noteOther(results, upload.cores.other, bareUpload.cores.other, join.cores.other, bareJoin.cores.other);
  const uploadRatio = bareUploadSeconds / uploadSeconds;
  const uploadTimeMet = uploadSeconds <= GOAL_UPLOAD_S;
  const uploadRatioMet = uploadRatio >= GOAL_UPLOAD_RATIO;
  const joinMet = joinSeconds <= GOAL_JOIN_S;
  const joinRatio = bareJoinSeconds / joinSeconds;
  results.lines.push(
    `1. upload of ${int.format(RECORDS)} records: ${uploadSeconds.toFixed(1)} s (goal <= ${GOAL_UPLOAD_S} s) ${verdict(uploadTimeMet)}`,
    `1. upload rate / bare bulk insert rate: ${uploadRatio.toFixed(2)} (${rate(uploadSeconds)} vs ${rate(bareUploadSeconds)} records/s; goal >= ${GOAL_UPLOAD_RATIO}) ${verdict(uploadRatioMet)}`,
    `2. join restoring ${int.format(RECORDS)} records: ${joinSeconds.toFixed(1)} s (goal <= ${GOAL_JOIN_S} s) ${verdict(joinMet)}; join rate / bare SELECT + INSERT rate: ${joinRatio.toFixed(2)} (${rate(joinSeconds)} vs ${rate(bareJoinSeconds)} records/s; no goal)`,
  );
  results.met.push(uploadTimeMet, uploadRatioMet, joinMet);
  results.summary.push(
    `upload ${uploadSeconds.toFixed(1)} s (${uploadRatio.toFixed(2)}x bare)`,
    `join ${joinSeconds.toFixed(1)} s (${joinRatio.toFixed(2)}x bare)`,
  );
  return { a, b, cabinetId };
}

/** Waits until the install's pull cursor reaches the newest seq of its cabinet on the hub. */
async function caughtUp(env: Env, install: Install, cabinetId: string): Promise<void> {
  const [row] = await env.hubSql<{ last: string }[]>`SELECT coalesce(max(seq), 0) AS last FROM hub_changes WHERE cabinet_id = ${cabinetId}`;
  const last = Number(row?.last ?? 0);
  const cursor = install.deps.db.sqlite.prepare<[string], number>('SELECT pull_cursor FROM sync_connections WHERE cabinet_id = ?').pluck();
  const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
  while ((cursor.get(cabinetId) ?? 0) < last) {
    if (Date.now() > deadline) throw new Error(`an install did not pull up to seq ${last} within ${CATCH_UP_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
}

/** Calls `act(k)` at a steady rate, `count` times; waits for each before the next is due. */
async function atRate(rate: number, count: number, act: (k: number) => void | Promise<void>): Promise<number> {
  const started = performance.now();
  for (let k = 0; k < count; k++) {
    const wait = started + (k * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    await act(k);
  }
  return (performance.now() - started) / 1000;
}

interface LatencyFigures {
  sorted: number[];
  missing: number;
  sentSeconds: number;
  cpu: PhaseCpu;
}

async function engineLatency(env: Env, a: Install, b: Install, cabinetId: string): Promise<LatencyFigures> {
  const records = syncedRecords();
  const logger = createLogger({ level: 'warn', stream: logDestination(devNull) });
  const engines: SyncEngine[] = [createSyncEngine(a.deps, { logger, records }), createSyncEngine(b.deps, { logger, records })];
  for (const engine of engines) engine.start();
  try {
    // Both installs' cursors reach the hub's newest seq (A's moves past its own upload, which the hub leaves out) before measuring.
    const catchUpStarted = performance.now();
    await Promise.all([caughtUp(env, a, cabinetId), caughtUp(env, b, cabinetId)]);
    console.log(
      `   both installs' pull cursors reached the hub's newest seq ${((performance.now() - catchUpStarted) / 1000).toFixed(1)} s after their engines started (A's own ${int.format(RECORDS)} uploaded changes are left out by the hub)`,
    );

    const exists = b.deps.db.sqlite.prepare<[string], number>('SELECT 1 FROM opportunities WHERE id = ?').pluck();
    const pending = new Map<string, number>();
    const latencies: number[] = [];
    const poll = setInterval(() => {
      const now = performance.now();
      for (const [id, committedAt] of pending) {
        if (exists.get(id) === undefined) continue;
        latencies.push(now - committedAt);
        pending.delete(id);
      }
    }, 1);
    try {
      const stop = await meter(env.readers);
      const count = LATENCY_RATE * LATENCY_SECONDS;
      const sentSeconds = await atRate(LATENCY_RATE, count, (k) => {
        const created = createOpportunity(
          a.deps,
          cabinetId,
          {
            title: `Latence ${k}`,
            product: 'auto',
            stage: 'new',
            expected_value_eur: 1000 + k,
            contact: { last_name: `Client ${k}`, email: `latence${k}@example.fr` },
            tags: ['bench'],
          },
          'api',
        );
        // createOpportunity returns after its transaction committed.
        pending.set(created.opportunity_id, performance.now());
      });
      const deadline = performance.now() + LATENCY_DRAIN_MS;
      while (pending.size > 0 && performance.now() < deadline) await sleep(10);
      const cpu = await stop();
      const missing = pending.size;
      for (const committedAt of pending.values()) latencies.push(performance.now() - committedAt);
      return { sorted: latencies.sort((x, y) => x - y), missing, sentSeconds, cpu };
    } finally {
      clearInterval(poll);
    }
  } finally {
    await Promise.all(engines.map((engine) => engine.stop()));
  }
}

/** Baseline of 3: device X pushes one change at the same rate; device Y long-polls and notes when each arrives. */
async function bareRoundTrip(env: Env): Promise<LatencyFigures> {
  const cabinet = { id: randomUUID(), name: 'Cabinet Round Trip' };
  const x = await pair(env.hubUrl, await env.invite({ register: cabinet.id }), 'X', cabinet);
  const y = await pair(env.hubUrl, await env.invite({ join: cabinet.id }), 'Y');
  const sentAt = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  const abort = new AbortController();
  let after = 0;
  const pulling = (async () => {
    while (!abort.signal.aborted) {
      const response = await fetch(env.hubUrl + pathTo(pullChanges, {}, { after, limit: PULL_PAGE, wait: 25 }), {
        headers: y.headers,
        signal: abort.signal,
      });
      const page = (await response.json()) as PullResponse;
      const now = performance.now();
      for (const change of page.changes) arrivedAt.set(change.record_id, now);
      after = page.last_seq;
    }
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) throw err;
  });
  try {
    await sleep(200); // Y's first long poll is waiting.
    const stop = await meter(env.readers);
    const count = LATENCY_RATE * LATENCY_SECONDS;
    const now = Date.now();
    const sentSeconds = await atRate(LATENCY_RATE, count, async (k) => {
      const recordId = `round-trip-${k}`;
      const fields = { ...opportunityFields(k, now), tags: '["bench"]' };
      sentAt.set(recordId, performance.now());
      await push(env.hubUrl, x, JSON.stringify({ changes: [changeOf(x, k + 1, recordId, fields)] }));
    });
    const deadline = performance.now() + LATENCY_DRAIN_MS;
    while (arrivedAt.size < count && performance.now() < deadline) await sleep(10);
    const cpu = await stop();
    const latencies: number[] = [];
    let missing = 0;
    for (const [id, sent] of sentAt) {
      const arrived = arrivedAt.get(id);
      if (arrived === undefined) missing += 1;
      latencies.push((arrived ?? performance.now()) - sent);
    }
    return { sorted: latencies.sort((p, q) => p - q), missing, sentSeconds, cpu };
  } finally {
    abort.abort();
    await pulling;
  }
}

async function latencyPhase(env: Env, a: Install, b: Install, cabinetId: string, results: Results): Promise<void> {
  const engine = await engineLatency(env, a, b, cabinetId);
  const bare = await bareRoundTrip(env);
  const row = (name: string, f: LatencyFigures) => [
    name,
    `${int.format(f.sorted.length)} in ${f.sentSeconds.toFixed(1)} s`,
    String(f.missing),
    percentile(f.sorted, 50).toFixed(1),
    percentile(f.sorted, 99).toFixed(1),
    (f.sorted.at(-1) ?? Number.NaN).toFixed(1),
    ...cpuCells(f.cpu),
  ];
  console.log(
    formatTable(
      ['3. commit on A -> row on B, 50 creates/s', 'changes', 'missing', 'p50 ms', 'p99 ms', 'max ms', ...CPU_COLUMNS],
      [row('engines (A pushes, B long-polls and applies)', engine), row('bare: push one change, woken pull (X -> hub -> Y)', bare)],
    ),
  );
  noteOther(results, engine.cpu.cores.other, bare.cpu.cores.other);
  if (engine.missing > 0)
    console.log(`   ${engine.missing} creates had not reached B ${LATENCY_DRAIN_MS / 1000} s after the last one: counted at that bound`);
  const p50 = percentile(engine.sorted, 50);
  const p99 = percentile(engine.sorted, 99);
  const met = p50 <= GOAL_P50_MS && p99 <= GOAL_P99_MS && engine.missing === 0;
  results.lines.push(
    `3. A->B at ${LATENCY_RATE}/s: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (goal p50 <= ${GOAL_P50_MS}, p99 <= ${GOAL_P99_MS}); bare round trip p50 ${percentile(bare.sorted, 50).toFixed(1)} ms, p99 ${percentile(bare.sorted, 99).toFixed(1)} ms, ratio of p50s ${(p50 / percentile(bare.sorted, 50)).toFixed(1)} ${verdict(met)}`,
  );
  results.met.push(met);
  results.summary.push(`A->B p50 ${p50.toFixed(0)} ms p99 ${p99.toFixed(0)} ms`);
}

/**
 * The install's servers on CPU 0 (one of them loaded at a time); this process (the load), the hub
 * and PostgreSQL on the others. A hub runs on another machine: on a shared 2-core machine its work (and PostgreSQL's)
 * would take the server's core and be charged to sync. False when the CPUs cannot be pinned.
 */
function isolateServers(env: Env, serverPids: readonly number[]): boolean {
  const n = cpuCount();
  return n >= 2 && pinToCpus(serverPids, '0') && pinToCpus([process.pid, env.hubPid, ...postgresPids(env.pgPort)], `1-${n - 1}`);
}

function releaseCpus(env: Env): void {
  pinToCpus([process.pid, env.hubPid, ...postgresPids(env.pgPort)], `0-${cpuCount() - 1}`);
}

/** The changes of the syncing server (device `bench`) the hub holds. */
async function benchChangesOnHub(env: Env): Promise<number> {
  const [onHub] = await env.hubSql<
    { n: string }[]
  >`SELECT count(*) AS n FROM hub_changes h JOIN hub_devices d ON d.id = h.device_id WHERE d.name = 'bench'`;
  return Number(onHub?.n ?? 0);
}

/**
 * Waits until the syncing server has pushed what its round created (the hub's count holds still
 * for longer than the engine gathers changes), so that its pushes never run during the other side's round.
 */
async function untilPushed(env: Env): Promise<void> {
  let last = await benchChangesOnHub(env);
  for (let waited = 0; waited < 60_000; waited += 300) {
    await sleep(300);
    const now = await benchChangesOnHub(env);
    if (now === last) return;
    last = now;
  }
  throw new Error('the syncing server was still pushing a minute after its round');
}

/**
 * 4. The same creates on a server with sync off and one with sync on, both alive, in rounds in turn
 * (compareAlternating): this VM's speed swings within a minute, and one run of each side after the
 * other measured the swing more than the sync. Each server alone on CPU 0 while it is loaded.
 */
async function postPhase(env: Env, results: Results): Promise<void> {
  const side = { hub: env.readers.hub, postgres: env.readers.postgres };
  const sideReaders = Object.fromEntries(Object.entries(side).filter((entry): entry is [string, CpuReader] => entry[1] !== undefined));
  const offServer = await startServerChild('courtier', env.ctx.tempDir('courtier'), env.ctx.child);
  let onServer: ServerChild | undefined;
  let comparison: Comparison;
  let isolated: boolean;
  try {
    process.env[SYNC_HUB_URL_ENV] = env.hubUrl;
    try {
      onServer = await startServerChild('courtier-sync', env.ctx.tempDir('courtier-sync'), env.ctx.child);
    } finally {
      delete process.env[SYNC_HUB_URL_ENV];
    }
    const syncing = onServer;
    isolated = isolateServers(env, [offServer.pid, syncing.pid]);
    comparison = await compareAlternating(
      (options) => measureCreate(offServer, options, sideReaders),
      async (options) => {
        const measured = await measureCreate(syncing, options, sideReaders);
        await untilPushed(env);
        return measured;
      },
      env.ctx.load,
    );
  } finally {
    releaseCpus(env);
    await onServer?.stop();
    await offServer.stop();
  }
  const { baseline: off, subject: on, ratio } = comparison;
  const header = [...MEASUREMENT_HEADER.slice(0, -1), 'hub CPU', 'PostgreSQL CPU', 'other CPU'];
  const row = (name: string, m: Measurement) => [
    ...measurementRow(name, m).slice(0, -1),
    pct(m.sideCores.hub),
    pct(m.sideCores.postgres),
    pct(m.otherCores),
  ];
  console.log(formatTable(header, [row('4. POST /opportunities, sync off', off), row('   POST /opportunities, sync on', on)]));
  console.log(
    `   the syncing server pushed ${int.format(await benchChangesOnHub(env))} changes to the hub (an opportunity and its event per create, warm-ups included)`,
  );
  console.log(`   ${roundRatiosLine(comparison)}; ${comparison.schedule}`);
  console.log(
    isolated
      ? `   each server child alone on CPU 0 while it is loaded; the load generator (this process), the hub and PostgreSQL on the other CPUs, as when the hub runs elsewhere`
      : '   the CPUs could not be pinned (taskset): every process shared every CPU, so the hub’s and PostgreSQL’s work is charged to the syncing server',
  );
  noteOther(results, off.otherCores, on.otherCores);
  const met = ratio >= GOAL_POST_RATIO;
  results.lines.push(
    `4. POST /opportunities sync on / off: ${ratio.toFixed(2)} (${int.format(on.requestsPerSecond)} vs ${int.format(off.requestsPerSecond)} created/s; µs server CPU per create ${cpuPerRequest(on).toFixed(0)} vs ${cpuPerRequest(off).toFixed(0)}; goal >= ${GOAL_POST_RATIO}) ${verdict(met)}`,
  );
  results.met.push(met);
  results.summary.push(`POST on/off ${ratio.toFixed(2)}`);
}

async function devicesPhase(env: Env, results: Results): Promise<void> {
  const cabinet = { id: randomUUID(), name: 'Cabinet Huit Postes' };
  const devices: Device[] = [await pair(env.hubUrl, await env.invite({ register: cabinet.id }), 'poste-0', cabinet)];
  for (let d = 1; d < DEVICES; d++) devices.push(await pair(env.hubUrl, await env.invite({ join: cabinet.id }), `poste-${d}`));
  const now = Date.now();
  const rowsOf = devices.map((device, d) =>
    Array.from({ length: ROWS_PER_DEVICE }, (_, n) =>
      changeOf(device, n + 1, `poste-${d}-${n}`, opportunityFields(d * ROWS_PER_DEVICE + n, now)),
    ),
  );
  // Bodies made before the clock starts: what is timed is the hub, not this process's JSON.
  const bodies = rowsOf.map((rows) => batches(rows, PUSH_BATCH).map((batch) => JSON.stringify({ changes: batch })));
  const total = DEVICES * ROWS_PER_DEVICE;

  const hubCpu = await meter(env.readers);
  const started = performance.now();
  await Promise.all(
    devices.map(async (device, d) => {
      for (const body of bodies[d] ?? []) await push(env.hubUrl, device, body);
    }),
  );
  const hubSeconds = (performance.now() - started) / 1000;
  const hubPhase = await hubCpu();
  const [stored] = await env.hubSql<{ n: string }[]>`SELECT count(*) AS n FROM hub_changes WHERE cabinet_id = ${cabinet.id}`;
  if (Number(stored?.n) !== total) throw new Error(`the hub holds ${stored?.n} of the ${total} changes pushed`);

  const bareBodies = rowsOf.map((rows) => batches(rows, PUSH_BATCH).map((batch) => batchJson(batch)));
  const bareCpu = await meter(env.readers);
  const bareStarted = performance.now();
  await Promise.all(
    devices.map(async (device, d) => {
      let seq = d * ROWS_PER_DEVICE + 1;
      for (const rows of bareBodies[d] ?? []) {
        await bareInsert(env.bareSql, cabinet.id, device.id, seq, rows);
        seq += PUSH_BATCH;
      }
    }),
  );
  const bareSeconds = (performance.now() - bareStarted) / 1000;
  const barePhase = await bareCpu();

  console.log(
    formatTable(
      [`5. ${DEVICES} devices x ${int.format(ROWS_PER_DEVICE)} rows, batches of ${PUSH_BATCH}`, 'seconds', 'rows/s', ...CPU_COLUMNS],
      [
        ['push through the hub, all at once', hubSeconds.toFixed(2), int.format(total / hubSeconds), ...cpuCells(hubPhase)],
        [
          `bare: ${DEVICES} concurrent bulk INSERTs into PostgreSQL`,
          bareSeconds.toFixed(2),
          int.format(total / bareSeconds),
          ...cpuCells(barePhase),
        ],
      ],
    ),
  );
  noteOther(results, hubPhase.cores.other, barePhase.cores.other);
  const rate = total / hubSeconds;
  const met = rate >= GOAL_HUB_ROWS_PER_S;
  results.lines.push(
    `5. ${DEVICES} devices pushing at once: ${int.format(rate)} rows/s at the hub (goal >= ${int.format(GOAL_HUB_ROWS_PER_S)}); bare ${int.format(total / bareSeconds)} rows/s, hub/bare ${(bareSeconds / hubSeconds).toFixed(2)} ${verdict(met)}`,
  );
  results.met.push(met);
  results.summary.push(`${DEVICES} devices ${int.format(rate)} rows/s`);
}

interface PushRound {
  pushes: number;
  seconds: number;
  /** Each push's time, request to answer, in ms. */
  latencies: number[];
  cpu: PhaseCpu;
}

/** Rounds as one run: pushes over their summed time; CPU shares weighted by each round's time, 'other' the worst round's. */
function pooledRounds(rounds: readonly PushRound[]): PushRound {
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const names = [...new Set(rounds.flatMap((r) => Object.keys(r.cpu.cores)))];
  const cores = Object.fromEntries(
    names.map((name) => [name, rounds.reduce((sum, r) => sum + (r.cpu.cores[name] ?? 0) * r.seconds, 0) / seconds]),
  );
  cores.other = Math.max(...rounds.map((r) => r.cpu.cores.other ?? 0));
  return {
    pushes: rounds.reduce((sum, r) => sum + r.pushes, 0),
    seconds,
    latencies: rounds.flatMap((r) => r.latencies).sort((p, q) => p - q),
    cpu: { seconds, cores },
  };
}

/**
 * 6. One device in each of 8 cabinets, each pushing one change per push, one push after the other,
 * all 8 at once; against one of them pushing alone. Nothing is shared between the cabinets but the
 * hub and PostgreSQL: the 8 should go as far as the machine's cores and the disk's flushes take them.
 */
async function cabinetsPhase(env: Env, results: Results): Promise<void> {
  const devices: Device[] = [];
  for (let c = 0; c < CABINETS; c++) {
    const cabinet = { id: randomUUID(), name: `Cabinet Seul ${c}` };
    devices.push(await pair(env.hubUrl, await env.invite({ register: cabinet.id }), `seul-${c}`, cabinet));
  }
  const pushed = new Map(devices.map((device) => [device.id, 0]));
  const now = Date.now();
  /** The device's next `count` one-change bodies, made before the clock starts. */
  const bodiesOf = (device: Device, count: number) =>
    Array.from({ length: count }, () => {
      const n = (pushed.get(device.id) ?? 0) + 1;
      pushed.set(device.id, n);
      return JSON.stringify({ changes: [changeOf(device, n, `${device.id}-${n}`, opportunityFields(n, now))] });
    });
  const round = async (pushing: number, count: number): Promise<PushRound> => {
    const work = devices.slice(0, pushing).map((device) => ({ device, bodies: bodiesOf(device, count) }));
    const latencies: number[] = [];
    const stop = await meter(env.readers);
    const started = performance.now();
    await Promise.all(
      work.map(async ({ device, bodies }) => {
        for (const body of bodies) {
          const t = performance.now();
          await push(env.hubUrl, device, body);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = await stop();
    return { pushes: pushing * count, seconds, latencies, cpu };
  };
  // Warm-up: every device's connection to the hub, and the hub's path for a one-change push.
  await round(CABINETS, 20);
  const rounds = await inPairs(
    () => round(1, PUSHES_PER_ROUND),
    () => round(CABINETS, PUSHES_PER_ROUND),
  );
  for (const [deviceId, count] of pushed) {
    const [stored] = await env.hubSql<{ n: string }[]>`SELECT count(*) AS n FROM hub_changes WHERE device_id = ${deviceId}`;
    if (Number(stored?.n) !== count) throw new Error(`the hub holds ${stored?.n} of the ${count} changes device ${deviceId} pushed`);
  }
  const alone = pooledRounds(rounds.baseline);
  const together = pooledRounds(rounds.subject);
  const rate = (r: PushRound) => r.pushes / r.seconds;
  const row = (name: string, r: PushRound) => [
    name,
    int.format(r.pushes),
    r.seconds.toFixed(2),
    int.format(rate(r)),
    percentile(r.latencies, 50).toFixed(2),
    percentile(r.latencies, 99).toFixed(2),
    ...cpuCells(r.cpu),
  ];
  console.log(
    formatTable(
      [
        `6. one change per push, ${PUSHES_PER_ROUND} pushes per device a round`,
        'pushes',
        'seconds',
        'pushes/s',
        'p50 ms',
        'p99 ms',
        ...CPU_COLUMNS,
      ],
      [row('one device alone', alone), row(`${CABINETS} devices of ${CABINETS} cabinets at once`, together)],
    ),
  );
  console.log(
    `   ${roundRatiosLine({ roundRatios: pairRatios(rounds, rate) })}; each side 4 rounds, in pairs AB BA AB BA, after a warm-up of 20 pushes per device`,
  );
  noteOther(results, alone.cpu.cores.other, together.cpu.cores.other);
  // Pushes that do not wait on one another are bounded by the cores they share: what the CPU allows tells a lock from a full machine.
  const cpuPerPush = (r: PushRound) =>
    (((r.cpu.cores.bench ?? 0) + (r.cpu.cores.hub ?? 0) + (r.cpu.cores.postgres ?? 0)) * r.seconds) / r.pushes;
  const ceiling = cpuCount() / cpuPerPush(alone);
  console.log(
    `   CPU per push (this process, the hub, PostgreSQL): ${(cpuPerPush(alone) * 1000).toFixed(2)} ms alone, ${(cpuPerPush(together) * 1000).toFixed(2)} ms at once; ${cpuCount()} cores allow at most ${int.format(ceiling)} pushes/s (${(ceiling / rate(alone)).toFixed(2)}x one device alone), of which the ${CABINETS} reached ${pct(rate(together) / ceiling)}`,
  );
  const ratio = rate(together) / rate(alone);
  const met = ratio >= GOAL_CABINETS_RATIO;
  results.lines.push(
    `6. ${CABINETS} devices of ${CABINETS} cabinets pushing one change at a time, at once: ${int.format(rate(together))} pushes/s, ${ratio.toFixed(2)}x one device alone (${int.format(rate(alone))}/s, p50 ${percentile(alone.latencies, 50).toFixed(2)} ms; goal >= ${GOAL_CABINETS_RATIO}x) ${verdict(met)}`,
  );
  results.met.push(met);
  results.summary.push(`${CABINETS} cabinets ${ratio.toFixed(2)}x one alone`);
}

export const benchmark: Benchmark = {
  name: 'sync',
  description: `sync through a hub on a throwaway durable PostgreSQL: upload and join of ${int.format(RECORDS)} records, A->B latency at ${LATENCY_RATE}/s, POST rate with sync on/off, ${DEVICES} devices pushing at once, ${CABINETS} cabinets' one-change pushes at once`,
  async run(ctx) {
    // PostgreSQL's durable defaults, as a hub runs: every commit waits for its WAL on disk.
    const pg = await startTestPostgres({ durable: true });
    const unregisterPg = registerCleanup({ run: () => pg.stop(), runSync: () => undefined });
    const opened: { close(): unknown }[] = [];
    let hub: ServerChild | undefined;
    try {
      const hubDatabaseUrl = await pg.createDatabase();
      const pgCpu = postgresCpuReader(Number(new URL(pg.url).port));
      if (!pgCpu) console.log('   PostgreSQL CPU: its server process was not found in /proc; shown as n/a');
      process.env[HUB_DATABASE_URL_ENV] = hubDatabaseUrl;
      hub = await startServerChild('hub', ctx.tempDir('hub'), ctx.child);
      const hubChild = hub;
      const hubDatabase = connectHub(hubDatabaseUrl, { max: 2 });
      const hubSql = postgres(hubDatabaseUrl, { max: 2, onnotice: () => undefined });
      const bareSql = postgres(await pg.createDatabase(), { max: DEVICES, onnotice: () => undefined });
      opened.push({ close: () => hubDatabase.close() }, { close: () => hubSql.end() }, { close: () => bareSql.end() });
      const invites = hubDeps(hubDatabase, 'bench');
      const readers: Record<string, CpuReader> = {
        bench: () => {
          const usage = process.cpuUsage();
          return usage.user + usage.system;
        },
        hub: () => hubChild.cpuMicros(),
        ...(pgCpu ? { postgres: pgCpu } : {}),
      };
      const env: Env = {
        ctx,
        hubUrl: hub.origin,
        hubPid: hub.pid,
        pgPort: Number(new URL(pg.url).port),
        hubSql,
        bareSql,
        readers,
        invite: async (target) => (await createInvite(invites, target)).code,
      };
      const durability = await hubSql<{ name: string; setting: string }[]>`
        SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes') ORDER BY name`;
      const settings = durability.map((row) => `${row.name}=${row.setting}`).join(', ');
      console.log(
        `   hub: ${hub.origin} (a child process) on PostgreSQL ${pg.url.replace(/\/postgres$/, '')} (${settings}); installs A and B in this process`,
      );

      const results: Results = { lines: [], met: [], summary: [], worstOther: 0 };
      const { a, b, cabinetId } = await uploadAndJoin(env, results);
      opened.push(a, b);
      await latencyPhase(env, a, b, cabinetId, results);
      await postPhase(env, results);
      await devicesPhase(env, results);
      await cabinetsPhase(env, results);

      for (const line of results.lines) console.log(line);
      console.log(
        "   'other CPU': what the rest of the machine used meanwhile, beside this process, the hub child, PostgreSQL (and the server child in 4)",
      );
      if (results.worstOther > BUSY_MACHINE_CORES) {
        console.log(
          `WARNING: other processes took up to ${pct(results.worstOther)} of a core during a measured phase; run again on a quiet machine before recording these figures`,
        );
      }
      const goalMet = results.met.every(Boolean);
      return {
        goalMet,
        summary: `${results.summary.join(', ')}: ${goalMet ? 'all goals met' : `MISSED (${results.met.filter((m) => !m).length} of ${results.met.length} goals)`}`,
      };
    } finally {
      delete process.env[HUB_DATABASE_URL_ENV];
      for (const item of opened.reverse()) await item.close();
      await hub?.stop();
      await pg.stop();
      unregisterPg();
    }
  },
};
