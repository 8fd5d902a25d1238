// @module-tag postgres
import { afterEach, describe, expect, it } from 'vitest';
import { revokeHubDevice } from '../../server/hub/admin.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, deviceSecretName, joinCabinet, setSyncPaused } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { loadConfig } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps } from '../../server/deps.js';
import { apiClient, createOpportunity } from '../helpers/api.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { startTestServer, tempDir, testClock, type TestClock, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { fetchHub } from '../helpers/sync-node.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * Two installs syncing through a proxy that loses, repeats and holds requests and responses, a hub
 * that goes away and comes back, a PostgreSQL restart, a revoked device and a clock ahead. After
 * each, nothing is lost and nothing is applied twice.
 */
const FAST_SYNC = { scanIntervalMs: 200, pullWaitSeconds: 2, pushIntervalMs: 300, maxBackoffMs: 800, refusedRetryMs: 500 };

const fixture = useListeningHub();
const open: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

interface Pair {
  proxy: FaultProxy;
  a: TestServer;
  b: TestServer;
  cabinet: string;
  apiA: ReturnType<typeof apiClient>;
  apiB: ReturnType<typeof apiClient>;
}

/** A linked through the proxy, B directly; both run their sync engines. */
async function linkedPair(options: { clockA?: TestClock } = {}): Promise<Pair> {
  const proxy = await startFaultProxy(fixture.hub.url);
  open.push(proxy);
  const a = await startTestServer({ sync: FAST_SYNC, ...(options.clockA ? { clock: options.clockA } : {}) });
  open.push(a);
  const cabinet = await a.createCabinet('Cabinet Faults');
  await connectCabinet(
    a.deps,
    { cabinetId: cabinet, hubUrl: proxy.url, code: await fixture.hub.invite({ register: cabinet }), deviceName: 'A' },
    { fetch: fetchHub, records: syncedRecords() },
    CLI_ACTOR,
  );
  const dataDir = tempDir();
  const db = openDatabase(databaseFile(dataDir));
  await joinCabinet(
    { ...defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [], env: {} }) },
    {
      hubUrl: fixture.hub.url,
      code: await fixture.hub.invite({ join: cabinet }),
      deviceName: 'B',
      email: 'b@faults.fr',
      password: 'correct horse battery',
    },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  db.close();
  const b = await startTestServer({ dataDir, sync: FAST_SYNC });
  open.push(b);
  return { proxy, a, b, cabinet, apiA: apiClient(a, a.createKey(cabinet).key), apiB: apiClient(b, b.createKey(cabinet).key) };
}

/** The contact of every opportunity these tests create (each has its own title). */
const FAUTE = { last_name: 'Faute' };

/** The hub holds each of a device's changes once, numbered 1..n without a hole. */
async function expectNumbersOnce(cabinet: string): Promise<void> {
  const rows = await fixture.hub.database
    .sql`SELECT device_id, array_agg(number ORDER BY number) AS numbers FROM hub_changes WHERE cabinet_id = ${cabinet} GROUP BY device_id`;
  for (const row of rows) {
    const numbers = (row.numbers as (string | number)[]).map(Number);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  }
}

function titlesOf(server: TestServer, cabinet: string): string[] {
  return (
    server.deps.db.sqlite.prepare('SELECT title FROM opportunities WHERE cabinet_id = ? ORDER BY title').all(cabinet) as { title: string }[]
  ).map((r) => r.title);
}

describe('sync under faults', () => {
  it('loses nothing and applies nothing twice when pushes or their answers are dropped, duplicated or delayed', async () => {
    const { proxy, a, b, cabinet, apiA } = await linkedPair();
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.pending_changes === 0,
      'the first upload',
    );
    const push = { method: 'POST', path: /\/sync\/v1\/changes/ };
    proxy.inject(push, { kind: 'drop_response' });
    await createOpportunity(apiA, { title: 'réponse perdue', contact: FAUTE });
    await eventually(
      () => titlesOf(b, cabinet),
      (t) => t.includes('réponse perdue'),
      'the change whose answer was lost',
    );
    proxy.inject(push, { kind: 'drop_request' });
    await createOpportunity(apiA, { title: 'requête perdue', contact: FAUTE });
    proxy.inject(push, { kind: 'duplicate' });
    await createOpportunity(apiA, { title: 'requête doublée', contact: FAUTE });
    proxy.inject(push, { kind: 'delay', ms: 1500 });
    await createOpportunity(apiA, { title: 'requête retardée', contact: FAUTE });
    await eventually(
      () => titlesOf(b, cabinet).length,
      (n) => n === titlesOf(a, cabinet).length && n === 4,
      'every opportunity on B',
    );
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.pending_changes === 0 && s.state === 'idle',
      'A idle',
    );
    expect(titlesOf(b, cabinet)).toEqual(titlesOf(a, cabinet));
    await expectNumbersOnce(cabinet);
    // Pulls lost on the way back are pulled again from the same cursor.
    proxy.inject({ method: 'GET', path: /\/sync\/v1\/changes/ }, { kind: 'drop_response' }, 2);
    await createOpportunity(apiA, { title: 'tirage perdu', contact: FAUTE });
    await eventually(
      () => titlesOf(b, cabinet),
      (t) => t.includes('tirage perdu'),
      'after lost pulls',
    );
  }, 60_000);

  it('keeps working while the hub is down, says since when, and sends everything once it is back', async () => {
    const { proxy, a, b, cabinet, apiA } = await linkedPair();
    proxy.setDown(true);
    await createOpportunity(apiA, { title: 'hors ligne 1', contact: FAUTE });
    const offline = await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'offline',
      'the offline state',
    );
    expect(offline.last_error).toMatch(/^hub unreachable since \d\d:\d\d$/);
    await createOpportunity(apiA, { title: 'hors ligne 2', contact: FAUTE });
    expect(syncStatus(a.deps, cabinet).pending_changes).toBeGreaterThan(0);
    // Retried on a timer, with no new write to wake it.
    const seenBefore = proxy.seen.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(proxy.seen.length).toBeGreaterThan(seenBefore);
    proxy.setDown(false);
    await eventually(
      () => titlesOf(b, cabinet),
      (t) => t.includes('hors ligne 1') && t.includes('hors ligne 2'),
      'the queued changes on B',
    );
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'idle' && s.last_error === null && s.pending_changes === 0,
      'A back to idle',
    );
    await expectNumbersOnce(cabinet);
  }, 60_000);

  it('survives a PostgreSQL restart in the middle of pushes', async () => {
    const { a, b, cabinet, apiA } = await linkedPair();
    const writes = (async () => {
      for (let i = 0; i < 20; i += 1) {
        await createOpportunity(apiA, { title: `pendant le redémarrage ${String(i).padStart(2, '0')}`, contact: FAUTE });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await fixture.pg.restart();
    await writes;
    await eventually(
      () => titlesOf(b, cabinet).length,
      (n) => n === 20,
      'all 20 on B',
      40_000,
    );
    expect(titlesOf(b, cabinet)).toEqual(titlesOf(a, cabinet));
    await expectNumbersOnce(cabinet);
  }, 60_000);

  it('stops a revoked device at once and keeps its queue', async () => {
    const { a, cabinet, apiA } = await linkedPair();
    const status = syncStatus(a.deps, cabinet);
    await revokeHubDevice(fixture.hub.deps, String(status.device_id));
    await createOpportunity(apiA, { title: 'après révocation', contact: FAUTE });
    const refused = await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'error',
      'the refusal',
    );
    expect(refused).toMatchObject({ last_error: 'this device was revoked on the hub', last_error_code: 'device_revoked' });
    expect(refused.pending_changes).toBeGreaterThan(0);
  });

  it('says so, and keeps serving, when the device credential is gone from the secret store', async () => {
    const { a, cabinet, apiA } = await linkedPair();
    a.deps.secrets.delete(deviceSecretName(cabinet));
    // A new runner (after a pause) has to read the credential again.
    setSyncPaused(a.deps, cabinet, true, CLI_ACTOR);
    await new Promise((r) => setTimeout(r, 600));
    setSyncPaused(a.deps, cabinet, false, CLI_ACTOR);
    const refused = await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'error',
      'the refusal',
    );
    expect(refused).toMatchObject({ last_error_code: 'sync_off', last_error: expect.stringMatching(/credential is missing/) });
    await createOpportunity(apiA, { title: 'toujours en service', contact: FAUTE });
  });

  it('tells an install too old for the cabinet to update, and keeps its changes', async () => {
    const { a, cabinet, apiA } = await linkedPair();
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.pending_changes === 0,
      'the first upload',
    );
    // Another install of the cabinet speaks protocol 3: this one (1) is more than one version behind.
    await fixture.hub.database.sql`UPDATE hub_cabinets SET highest_protocol = 3 WHERE id = ${cabinet}`;
    await createOpportunity(apiA, { title: 'version trop ancienne', contact: FAUTE });
    const refused = await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'error',
      'the 426 refusal',
    );
    expect(refused).toMatchObject({ last_error_code: 'sync_protocol_too_old', last_error: expect.stringMatching(/too old.*update it/) });
    expect(refused.pending_changes).toBeGreaterThan(0);
  });

  it('refuses an install whose clock is 10 minutes ahead, keeps its changes, and sends them once the clock is right', async () => {
    const clockA = testClock(Date.now());
    const { b, cabinet, apiA, a } = await linkedPair({ clockA });
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.pending_changes === 0,
      'the first upload',
    );
    clockA.set(Date.now() + 10 * 60_000);
    await createOpportunity(apiA, { title: 'horloge en avance', contact: FAUTE });
    const refused = await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.state === 'error' && s.last_error_code === 'clock_skew',
      'the clock_skew refusal',
    );
    expect(refused.last_error).toMatch(/clock is 10 minutes ahead of the hub's/);
    expect(refused.pending_changes).toBeGreaterThan(0);
    expect(titlesOf(b, cabinet)).not.toContain('horloge en avance');
    clockA.set(Date.now());
    await eventually(
      () => titlesOf(b, cabinet),
      (t) => t.includes('horloge en avance'),
      'the change after the clock was set right',
    );
  }, 60_000);
});
