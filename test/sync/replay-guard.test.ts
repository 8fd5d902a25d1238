// @module-tag postgres
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { getConsoleJob } from '../../server/automation/console-jobs.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { findJob } from '../../server/automation/store.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { ApiError } from '../../server/errors.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { sandboxPortalPlugin } from '../../server/sandbox-portals/sandbox/index.js';
import { connectCabinet } from '../../server/sync/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { runCourtier, syncConnectArgs, syncJoinArgs } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { closeSyncNode, fetchHub, grantOnHub, joinNode, openSyncNode, pushNode } from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';

/**
 * Two installs of one cabinet through a hub on a real PostgreSQL, with real robots and the sandbox
 * insurer's portal: a pricing queued or running on A is seen by B's replay guard, so the same
 * pricing asked on B is answered with A's job — no second job, no second visit to the insurer —
 * and B's robots never touch A's job.
 */
const FAST_SYNC = { scanIntervalMs: 200, pullWaitSeconds: 5, pushIntervalMs: 300 };
const PASSWORD = 'correct horse battery';
const PRICING = { compagnie: 'allianz', produit: 'auto', dicData: AUTO_DIC_DATA };

const fixture = useListeningHub();
let portal: FastifyInstance;
let a: TestServer;
let b: TestServer;
let cabinet = '';

/** What the insurer's portal saw: the broker logins, and a gate that holds the quote's pages (a slow portal). */
const insurer = { logins: 0, gate: null as Promise<void> | null, open: () => undefined as void };

function closeGate(): void {
  insurer.gate = new Promise<void>((resolve) => (insurer.open = resolve));
}

beforeAll(async () => {
  portal = Fastify();
  portal.addHook('onRequest', async (request) => {
    if (request.method === 'POST' && request.url.startsWith('/sandbox/insurer/login')) insurer.logins += 1;
    if (request.url.startsWith('/sandbox/insurer/devis') && insurer.gate) await insurer.gate;
  });
  await portal.register(sandboxPortalPlugin, {
    prefix: '/sandbox/insurer',
    clock: { now: () => Date.now() },
    randomBytes,
    mode: () => 'normal',
    latencyMs: () => 0,
  });
  const portalUrl = `${await portal.listen({ host: '127.0.0.1', port: 0 })}/sandbox/insurer`;
  // Both installs' robots drive the same portal: a run on B would be a second login there.
  const options = { insurers: [sandboxInsurer({ portalUrl: () => portalUrl, timeouts: { navigationMs: 60_000 } })], sync: FAST_SYNC };

  a = await startTestServer(options);
  cabinet = await a.createCabinet('Cabinet Dupont');
  const connected = await runCourtier([
    ...syncConnectArgs(cabinet, fixture.hub.url, await fixture.hub.invite({ register: cabinet })),
    '--json',
    '--data-dir',
    a.dataDir,
  ]);
  expect(connected.code, connected.stderr).toBe(0);
  const dataDirB = tempDir();
  const joined = await runCourtier(
    [
      ...syncJoinArgs(fixture.hub.url, await fixture.hub.invite({ join: cabinet }), 'assistante@dupont.fr'),
      '--json',
      '--data-dir',
      dataDirB,
    ],
    { input: `${PASSWORD}\n` },
  );
  expect(joined.code, joined.stderr).toBe(0);
  b = await startTestServer({ ...options, dataDir: dataDirB });
  // The cabinet's one wallet, topped up on the hub: both installs show it once their sync exchanges it.
  await grantOnHub(fixture.hub, cabinet, 100);
  for (const node of [a, b])
    await eventually(
      () => creditBalance(node.deps, cabinet),
      (balance) => balance === 100,
      'the hub’s grant on each install',
    );
}, 120_000);

afterAll(async () => {
  insurer.open();
  await a?.close();
  await b?.close();
  await portal?.close();
});

describe('the replay guard across the installs of a cabinet', () => {
  it('answers on B with the job A queued or is running for the same pricing: no job, no debit, no insurer visit on B; B sees it finish', async () => {
    const apiA = apiClient(a, a.createKey(cabinet, { environment: 'test' }).key);
    const apiB = apiClient(b, b.createKey(cabinet, { environment: 'test' }).key);
    // Every lease B's database is asked to write, whatever writes it.
    b.deps.db.sqlite.exec(`CREATE TEMP TABLE leases_on_b (job_id TEXT);
      CREATE TEMP TRIGGER lease_taken_on_b AFTER UPDATE OF lease_until ON main.jobs WHEN NEW.lease_until IS NOT NULL BEGIN INSERT INTO leases_on_b VALUES (NEW.id); END;
      CREATE TEMP TRIGGER lease_pulled_on_b AFTER INSERT ON main.jobs WHEN NEW.lease_until IS NOT NULL BEGIN INSERT INTO leases_on_b VALUES (NEW.id); END;`);

    // A's robots are stopped: its pricing waits in its queue.
    await a.app.robotWorker.stop();
    closeGate();
    const enqueued = await apiA.post('/automation/tarifications', PRICING);
    expect(enqueued.status).toBe(202);
    const jobId = String(enqueued.body.job_id);
    const queuedOnB = await eventually(
      () => apiB.get(`/automation/jobs/${jobId}`),
      (res) => res.status === 200,
      'A’s queued job on B',
    );
    expect(queuedOnB.body).toMatchObject({ status: 'pending', credits_consumed: 10 });
    expect(getConsoleJob(b.deps, cabinet, jobId).elsewhere).toBe(true);
    expect(getConsoleJob(a.deps, cabinet, jobId).elsewhere).toBe(false);

    // B asks for the same pricing: the guard answers with A's job.
    const asked = await apiB.post('/automation/tarifications', PRICING);
    expect(asked.status).toBe(429);
    expect(asked.body).toMatchObject({ error: 'rpa_replay_detected', details: { job_id: jobId, retry_after_seconds: expect.any(Number) } });
    expect(asked.body.message).toContain('on another computer of the cabinet');
    // B cannot cancel it: A's robots run it.
    const cancel = await apiB.post(`/automation/jobs/${jobId}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error).toBe('job_runs_elsewhere');

    // A's robots start: the job runs on A (held at the portal's quote pages), and B sees it running.
    a.app.robotWorker.start();
    await eventually(
      () => apiB.get(`/automation/jobs/${jobId}`),
      (res) => res.body.status === 'running',
      'A’s running job on B',
      30_000,
    );
    const askedAgain = await apiB.post('/automation/tarifications', PRICING);
    expect(askedAgain.status).toBe(429);
    expect(askedAgain.body.details).toMatchObject({ job_id: jobId });

    // The portal answers: A's job finishes, and B sees it finished, with A's price and credits.
    insurer.open();
    const done = await eventually(
      () => apiA.get(`/automation/jobs/${jobId}`),
      (res) => ['completed', 'partial', 'failed', 'cancelled'].includes(String(res.body.status)),
      'A’s job',
      90_000,
    );
    expect(done.body.status).toBe('completed');
    const doneOnB = await eventually(
      () => apiB.get(`/automation/jobs/${jobId}`),
      (res) => res.body.status === 'completed',
      'A’s finished job on B',
      30_000,
    );
    expect(doneOnB.body.result).toEqual(done.body.result);
    expect(doneOnB.body.credits_consumed).toBe(done.body.credits_consumed);

    // B made no job, paid nothing and never leased A's; the insurer saw one login, A's.
    const listedOnB = await apiB.get('/automation/jobs');
    expect((listedOnB.body.data as { job_id: string }[]).map((job) => job.job_id)).toEqual([jobId]);
    // One wallet: B shows what A's run cost the cabinet, and holds no entry of its own.
    const wallet = await eventually(
      () => apiB.get('/wallet'),
      (res) => res.body.balance === 100 - Number(done.body.credits_consumed),
      'A’s debit on B’s wallet',
    );
    expect((wallet.body.ledger as { kind: string; job_id: string | null }[]).map((entry) => [entry.kind, entry.job_id])).toEqual([
      ['debit', jobId],
      ['grant', null],
    ]);
    expect(b.deps.db.sqlite.prepare("SELECT count(*) AS own FROM wallet_ledger WHERE hub_state IS NOT 'mirrored'").get()).toEqual({
      own: 0,
    });
    expect(b.deps.db.sqlite.prepare('SELECT job_id FROM leases_on_b').all()).toEqual([]);
    expect(b.deps.db.sqlite.prepare('SELECT enqueue_number, lease_until, attempts FROM jobs WHERE id = ?').get(jobId)).toEqual({
      enqueue_number: null,
      lease_until: null,
      attempts: 1,
    });
    expect(insurer.logins).toBe(1);
  }, 180_000);
});

describe('an install connecting with jobs in its queue', () => {
  it('uploads them with the rest: an install joining afterwards sees them queued, and its guard answers with them', async () => {
    const opened = openSyncNode(Date.now(), undefined, undefined, [createTestInsurer()]);
    const { cabinet_id: cabinetId } = await initCabinet(opened.deps, {
      cabinet: 'Cabinet Martin',
      email: 'a@martin.fr',
      password: PASSWORD,
    });
    const first = { ...opened, cabinetId };
    const request = { compagnie: 'testco', produit: 'auto', dicData: { postcode: '33000', birth_date: '1984-03-09', formula: 'tiers' } };
    let joined: typeof first | undefined;
    try {
      setInsurerCredentials(first.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
      grantCredits(first.deps, cabinetId, 100);
      // Enqueued before the cabinet syncs, and never run (no robots in this process): the snapshot carries it.
      const queued = enqueueTarification(first.deps, cabinetId, request, 'prod');
      await connectCabinet(
        first.deps,
        { cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ register: cabinetId }), deviceName: 'Poste A' },
        { fetch: fetchHub, records: first.records },
        CLI_ACTOR,
      );
      await pushNode(first);
      joined = await joinNode(fixture.hub, cabinetId, Date.now(), 'B', [createTestInsurer()]);
      expect(findJob(joined.deps.db.orm, cabinetId, queued.job_id)).toMatchObject({
        status: 'pending',
        enqueueNumber: null,
        leaseUntil: null,
      });
      setInsurerCredentials(joined.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
      let refusal: unknown;
      try {
        enqueueTarification(joined.deps, cabinetId, request, 'prod');
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toBeInstanceOf(ApiError);
      expect(refusal).toMatchObject({ code: 'rpa_replay_detected', details: { job_id: queued.job_id } });
    } finally {
      closeSyncNode(first);
      if (joined) closeSyncNode(joined);
    }
  });
});
