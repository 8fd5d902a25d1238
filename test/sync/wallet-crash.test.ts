// @module-tag postgres
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATUSES, type JobStatus } from '../../shared/automation.js';
import { walletSchema } from '../../shared/wallet.js';
import { createApiKey } from '../../server/api-keys/service.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { loadConfig } from '../../server/config.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps } from '../../server/deps.js';
import { createInvite } from '../../server/hub/pairing.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet } from '../../server/sync/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { CLI_WITH_TEST_INSURERS, runCourtier, startHubServeProcess, startServeProcess, stopChild } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { freePort } from '../helpers/free-port.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { fetchHub } from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { hubDeps } from '../../server/hub/deps.js';
import { openHubDatabase } from '../../server/hub/database.js';

/**
 * The wallet's exactly-once across kill -9, with the install and the hub real processes: a
 * `courtier serve` linked to a `courtier hub serve` on PostgreSQL (through a proxy that holds a
 * request or an answer on demand) is killed (SIGKILL) around its wallet exchange — once an enqueue
 * committed but before its answer, while its exchange has not reached the hub, and once the hub
 * stored the debit but before the install heard so — and started again each time. Every debit (and
 * every refund of a run a kill cut short) reaches the hub once, and the install's balance ends
 * equal to the hub's.
 */
const dataDir = tempDir();
/** The scripted insurers price at once; a run the kill cut short is taken up again 2 s later. */
const env = { COURTIER_DATA_DIR: dataDir, COURTIER_JOB_LEASE_SECONDS: '2' };
const COST = 10;
const JOBS = 3;
let pg: TestPostgres | undefined;
let hub: { child: ChildProcess } | undefined;
let install: { child: ChildProcess; url: string } | undefined;
let proxy: FaultProxy | undefined;

afterAll(async () => {
  await stopChild(install?.child);
  await proxy?.close();
  await stopChild(hub?.child);
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The cabinet set up on the install's data dir, in this process, and registered on the hub with its 200 credits. */
async function setUp(databaseUrl: string, hubUrl: string): Promise<{ cabinet: string; key: string }> {
  const db = openDatabase(databaseFile(dataDir));
  const hubDatabase = await openHubDatabase(databaseUrl);
  try {
    const deps = defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [createTestInsurer('crash-before')], env: {} });
    const { cabinet_id: cabinet } = await initCabinet(deps, {
      cabinet: 'Crash Wallet',
      email: 'w@example.fr',
      password: 'a long password',
    });
    const { key } = createApiKey(deps, cabinet, { name: 'k', environment: 'prod', scopes: ['automation:enqueue', 'automation:read'] });
    grantCredits(deps, cabinet, 200);
    setInsurerCredentials(deps, cabinet, 'crash-before', { login: 'broker', password: 'pw' });
    const { code } = await createInvite(hubDeps(hubDatabase, 'test'), { register: cabinet });
    await connectCabinet(
      deps,
      { cabinetId: cabinet, hubUrl, code, deviceName: 'Poste' },
      { fetch: fetchHub, records: syncedRecords() },
      CLI_ACTOR,
    );
    return { cabinet, key };
  } finally {
    db.close();
    await hubDatabase.close();
  }
}

async function killInstall(): Promise<void> {
  const child = install?.child;
  install = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

describe('the cabinet’s wallet across kill -9 of an install', () => {
  it('counts each debit and refund once on the hub, and the install settles on the hub’s balance', async () => {
    pg = await startTestPostgres();
    const databaseUrl = await pg.createDatabase();
    const hubPort = await freePort();
    hub = await startHubServeProcess(['--database-url', databaseUrl, '--port', String(hubPort)]);
    proxy = await startFaultProxy(`http://127.0.0.1:${hubPort}`);
    const { cabinet, key } = await setUp(databaseUrl, proxy.url);
    const hubSql = postgres(databaseUrl, { max: 1 });
    const onHub = async (entryIds: string[]) =>
      (await hubSql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_wallet_entries WHERE entry_id = ANY(${entryIds})`)[0]?.n;
    const pendingHere = () => {
      const db = openDatabase(databaseFile(dataDir));
      try {
        return db.sqlite.prepare("SELECT entry_id FROM wallet_ledger WHERE hub_state = 'pending'").pluck().all() as string[];
      } finally {
        db.close();
      }
    };

    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    let ref = 0;
    const enqueue = (url: string, crash = false) => {
      ref += 1;
      const body = JSON.stringify({ compagnie: 'crash-before', produit: 'auto', dicData: { ref: `r${ref}` } });
      return fetch(`${url}/api/v1/public/automation/tarifications`, {
        method: 'POST',
        headers: { ...headers, ...(crash ? { 'X-Test-Crash': 'after-commit' } : {}) },
        body,
      }).then(
        (res) => res.status,
        () => 'killed' as const,
      );
    };
    const wallet = (url: string) =>
      fetch(`${url}/api/v1/public/wallet`, { headers }).then(async (res) => walletSchema.parse(await res.json()));
    /** Started again, the install first exchanges what a kill left pending (or its opening): the next fault is for the next exchange. */
    const restart = async () => {
      const exchanges = () => (proxy?.seen ?? []).filter((line) => line.endsWith('/sync/v1/wallet')).length;
      const before = exchanges();
      install = await startServeProcess([], env, CLI_WITH_TEST_INSURERS);
      const url = install.url;
      // Every entry acknowledged, the opening included (it counts in no unconfirmed credits).
      await eventually(
        async () => exchanges() > before && (await wallet(url)).unconfirmed_credits === 0 && pendingHere().length === 0,
        (done) => done,
        'the pending entries sent',
        20_000,
      );
      return url;
    };
    const carriesDebit = (text: string) =>
      (JSON.parse(text) as { entries?: { kind: string }[] }).entries?.some((e) => e.kind === 'debit') === true;
    /** The next wallet exchange that sends a debit: its request (the hub never sees it) or answer (the hub stored it) is held, and the install killed meanwhile. */
    const killDuring = async (held: 'hold_request' | 'hold_response') => {
      const url = await restart();
      let release: (() => void) | undefined;
      const reached = new Promise<void>((resolve) => {
        const hold = (go: () => void) => {
          release = go;
          resolve();
        };
        // A held request is dropped once the install is dead; a held answer goes to a closed socket.
        const fault =
          held === 'hold_request'
            ? { kind: held, held: (go: (forward?: boolean) => void) => hold(() => go(false)) }
            : { kind: held, held: hold };
        // The exchange that carries the debit, not an empty one the pull loop may send first.
        proxy?.inject({ method: 'POST', path: /\/wallet$/, body: carriesDebit }, fault);
      });
      expect(await enqueue(url)).toBe(202);
      await reached;
      const pending = pendingHere();
      await killInstall();
      release?.();
      return { pending: pending.length, onHub: await onHub(pending) };
    };

    // Killed once the enqueue committed, before its answer: the debit not sent yet.
    expect(await enqueue(await restart(), true)).toBe('killed');
    await killInstall();
    expect(pendingHere()).toHaveLength(1);
    // Killed while its exchange is on its way: the hub has not seen it.
    expect(await killDuring('hold_request')).toEqual({ pending: 1, onHub: 0 });
    // Killed once the hub stored the debit, before the install heard so: sent again, it must not count twice.
    expect(await killDuring('hold_response')).toEqual({ pending: 1, onHub: 1 });

    const url = await restart();
    type Listed = { job_id: string; status: JobStatus; credits_consumed: number };
    const jobs = () =>
      fetch(`${url}/api/v1/public/automation/jobs?limit=50`, { headers }).then(
        async (res) => ((await res.json()) as { data: Listed[] }).data,
      );
    const finished = await eventually(
      jobs,
      (all) => all.length === JOBS && all.every((j) => TERMINAL_STATUSES.includes(j.status)),
      'every job finished',
      30_000,
    );
    const spent = finished.reduce((total, job) => total + job.credits_consumed, 0);
    await eventually(
      () => wallet(url),
      (w) => w.unconfirmed_credits === 0 && w.balance === 200 - spent,
      'the install settled with the hub',
      20_000,
    );

    try {
      const entries = await hubSql<{ job_id: string; kind: string; n: number }[]>`
        SELECT job_id, kind, count(*)::int AS n FROM hub_wallet_entries WHERE cabinet_id = ${cabinet} AND job_id IS NOT NULL GROUP BY job_id, kind`;
      expect(
        entries
          .filter((e) => e.kind === 'debit')
          .map((e) => e.job_id)
          .sort(),
      ).toEqual(finished.map((j) => j.job_id).sort());
      expect(entries.every((e) => e.n === 1)).toBe(true);
      const refunded = finished.filter((j) => j.credits_consumed === 0).map((j) => j.job_id);
      expect(
        entries
          .filter((e) => e.kind === 'refund')
          .map((e) => e.job_id)
          .sort(),
      ).toEqual(refunded.sort());
      expect(spent).toBe(COST * (JOBS - refunded.length));
    } finally {
      await hubSql.end();
    }
    const shown = await runCourtier(['hub', 'credits', 'balance', '--cabinet', cabinet, '--database-url', databaseUrl, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ balance: 200 - spent });
  }, 120_000);
});
