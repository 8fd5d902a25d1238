// @module-tag postgres
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../server/api-keys/service.js';
import { loadConfig } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, joinCabinet } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { hubInvite, startHubServeProcess, startServeProcess } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { fetchHub } from '../helpers/sync-node.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * kill -9 of an install at the points of a push, and of a hub process: each install and the hub
 * are real `courtier` processes; a proxy between the install and the hub holds the push where the
 * test wants the crash. After a restart, nothing is lost and nothing is applied twice.
 */
const PUSH = { method: 'POST', path: /\/sync\/v1\/changes/ };

let pg: TestPostgres;
let databaseUrl: string;
let hub: { child: ChildProcess; url: string };
let proxy: FaultProxy;
let cabinet: string;
let dirA: string;
let dirB: string;
let keyA: string;
let keyB: string;
const children: ChildProcess[] = [];

function withDeps<T>(dataDir: string, body: (deps: Deps) => Promise<T> | T): Promise<T> {
  const db = openDatabase(databaseFile(dataDir));
  return Promise.resolve(body(defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [], env: {} }))).finally(() => db.close());
}

async function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const started = await startServeProcess(['--data-dir', dataDir]);
  children.push(started.child);
  return started;
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function create(url: string, key: string, title: string): Promise<void> {
  const res = await fetch(`${url}/api/v1/public/opportunities`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ title, product: 'auto', contact: { last_name: 'Crash' } }),
  });
  expect(res.status).toBe(201);
}

async function titles(url: string, key: string): Promise<string[]> {
  const res = await fetch(`${url}/api/v1/public/opportunities?limit=100`, { headers: { 'x-api-key': key } });
  const body = (await res.json()) as { data: { title: string }[] };
  return body.data.map((o) => o.title).sort();
}

/** Each of a device's changes is on the hub once, numbered 1..n. */
async function expectNumbersOnce(): Promise<void> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(databaseUrl, { max: 1 });
  try {
    const rows =
      await sql`SELECT device_id, array_agg(number ORDER BY number) AS numbers FROM hub_changes WHERE cabinet_id = ${cabinet} GROUP BY device_id`;
    for (const row of rows) {
      const numbers = (row.numbers as (string | number)[]).map(Number);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    }
  } finally {
    await sql.end();
  }
}

beforeAll(async () => {
  pg = await startTestPostgres();
  databaseUrl = await pg.createDatabase();
  hub = await startHubServeProcess(['--database-url', databaseUrl]);
  children.push(hub.child);
  proxy = await startFaultProxy(hub.url);
  dirA = tempDir();
  dirB = tempDir();
  ({ cabinet, keyA } = await withDeps(dirA, async (deps) => {
    const { cabinet_id } = await initCabinet(deps, { cabinet: 'Cabinet Crash', email: 'a@crash.fr', password: 'correct horse battery' });
    const registerCode = await hubInvite(databaseUrl, { register: cabinet_id });
    await connectCabinet(
      deps,
      { cabinetId: cabinet_id, hubUrl: proxy.url, code: registerCode, deviceName: 'A' },
      { fetch: fetchHub, records: syncedRecords() },
      CLI_ACTOR,
    );
    return {
      cabinet: cabinet_id,
      keyA: createApiKey(deps, cabinet_id, { name: 'a', environment: 'prod', scopes: ['crm:read', 'crm:write'] }).key,
    };
  }));
  const joinCode = await hubInvite(databaseUrl, { join: cabinet });
  keyB = await withDeps(dirB, async (deps) => {
    await joinCabinet(
      deps,
      { hubUrl: hub.url, code: joinCode, deviceName: 'B', email: 'b@crash.fr', password: 'correct horse battery' },
      { fetch: fetchHub },
      CLI_ACTOR,
    );
    return createApiKey(deps, cabinet, { name: 'b', environment: 'prod', scopes: ['crm:read', 'crm:write'] }).key;
  });
}, 90_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await proxy?.close();
  await pg?.stop();
});

describe('kill -9 during a push', () => {
  for (const point of [
    'while the request is held, which is then lost',
    'while the request is held, which then reaches the hub',
    'after the hub committed, before the acknowledgement',
  ] as const) {
    it(`loses nothing and applies nothing twice when the install dies ${point}`, async () => {
      const a = await serve(dirA);
      const b = await serve(dirB);
      const title = `crash: ${point}`;
      const held = new Promise<(forward?: boolean) => void>((resolve) => {
        if (point.startsWith('after')) proxy.inject(PUSH, { kind: 'hold_response', held: (release) => resolve(() => release()) });
        else proxy.inject(PUSH, { kind: 'hold_request', held: resolve });
      });
      await create(a.url, keyA, title);
      const release = await held;
      await kill9(a.child);
      release(!point.endsWith('lost'));
      const restarted = await serve(dirA);
      await eventually(
        () => titles(b.url, keyB),
        (t) => t.includes(title),
        'the change on B',
        30_000,
      );
      await eventually(
        () => withDeps(dirA, (deps) => syncStatus(deps, cabinet).pending_changes),
        (n) => n === 0,
        'A’s queue emptied',
        30_000,
      );
      expect((await titles(b.url, keyB)).filter((t) => t === title)).toHaveLength(1);
      expect(await titles(b.url, keyB)).toEqual(await titles(restarted.url, keyA));
      await expectNumbersOnce();
      await kill9(restarted.child);
      await kill9(b.child);
    }, 90_000);
  }

  it('catches up after a hub process is killed with a push in flight and started again', async () => {
    const a = await serve(dirA);
    const b = await serve(dirB);
    const held = new Promise<(forward?: boolean) => void>((resolve) => proxy.inject(PUSH, { kind: 'hold_request', held: resolve }));
    await create(a.url, keyA, 'hub tué');
    const release = await held;
    await kill9(hub.child);
    release(true);
    await create(a.url, keyA, 'hub absent');
    const port = new URL(hub.url).port;
    hub = await startHubServeProcess(['--database-url', databaseUrl, '--port', port]);
    children.push(hub.child);
    await eventually(
      () => titles(b.url, keyB),
      (t) => t.includes('hub tué') && t.includes('hub absent'),
      'both changes on B',
      60_000,
    );
    expect(await titles(b.url, keyB)).toEqual(await titles(a.url, keyA));
    await expectNumbersOnce();
    await kill9(a.child);
    await kill9(b.child);
  }, 120_000);
});
