// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDevisPdf, recordDevisPriced } from '../../server/devis/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { setSyncPaused } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { apiClient } from '../helpers/api.js';
import { runCourtier, syncConnectArgs, syncJoinArgs } from '../helpers/cli.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * Two installs of one cabinet through a hub on a real PostgreSQL: connected and joined with the
 * built CLI, then used through their HTTP APIs while their services sync in the background.
 */
const FAST_SYNC = { scanIntervalMs: 200, pullWaitSeconds: 5, pushIntervalMs: 500 };
const PASSWORD = 'correct horse battery';

const fixture = useListeningHub();
let a: TestServer;
let b: TestServer;
let receiverA: Receiver;
let receiverB: Receiver;
let cabinet: string;
let apiA: ReturnType<typeof apiClient>;
let apiB: ReturnType<typeof apiClient>;
let portal = '';
let heldBeforeConnecting = '';

function syncOptions(receiver: Receiver) {
  return {
    insurers: [sandboxInsurer({ portalUrl: () => portal })],
    config: { webhookAllowPrivateTargets: true, sandboxLatencyMs: 50 },
    webhooks: { extraCa: [receiver.ca] },
    sync: FAST_SYNC,
  };
}

beforeAll(async () => {
  [receiverA, receiverB] = await Promise.all([startReceiver(), startReceiver()]);
  a = await startTestServer(syncOptions(receiverA));
  portal = `${a.url}/sandbox/insurer`;
  cabinet = await a.createCabinet('Cabinet Dupont');
  grantCredits(a.deps, cabinet, 100);
  apiA = apiClient(a, a.createKey(cabinet).key);
  // Something held before connecting, to be uploaded by connect.
  const before = await apiA.post('/opportunities', { title: 'Avant la synchro', product: 'auto', contact: { last_name: 'Avant' } });
  expect(before.status).toBe(201);
  heldBeforeConnecting = String(before.body.id);

  const connected = await runCourtier([
    ...syncConnectArgs(cabinet, fixture.hub.url, await fixture.hub.invite({ register: cabinet })),
    '--json',
    '--data-dir',
    a.dataDir,
  ]);
  expect(connected.code, connected.stderr).toBe(0);
  expect(JSON.parse(connected.stdout)).toEqual({ device_id: expect.any(String), cabinet_id: cabinet, reconnected: false });

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
  expect(JSON.parse(joined.stdout)).toEqual({ cabinet_id: cabinet, user_id: expect.any(String), device_id: expect.any(String) });
  b = await startTestServer({ ...syncOptions(receiverB), dataDir: dataDirB });
  apiB = apiClient(b, b.createKey(cabinet).key);
}, 120_000);

afterAll(async () => {
  // One at a time: each install's long poll ends before the hub goes.
  await a?.close();
  await b?.close();
  await Promise.allSettled([receiverA?.close(), receiverB?.close()]);
});

describe('sync end to end: two installs, one hub, real PostgreSQL', () => {
  it('restores on B what A held before connecting (join downloads everything), and brings B’s edit of it back to A', async () => {
    const listed = await apiB.get('/opportunities');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('Avant la synchro');
    // Connect wrote no field clocks for what it uploaded: B's later edit must still win on A.
    expect((await apiB.patch(`/opportunities/${heldBeforeConnecting}`, { stage: 'won' })).status).toBe(200);
    await eventually(
      () => apiA.get(`/opportunities/${heldBeforeConnecting}`),
      (r) => r.body.stage === 'won',
      'B’s edit on A',
    );
  });

  it('lists on B an opportunity created on A, and brings a stage change on B back to A', async () => {
    const created = await apiA.post('/opportunities', {
      title: 'Flotte 12 véhicules',
      product: 'auto',
      contact: { last_name: 'Garage Martin' },
      expected_value_eur: 4800,
    });
    const id = String(created.body.id);
    const onB = await eventually(
      () => apiB.get(`/opportunities/${id}`),
      (r) => r.status === 200,
      'the opportunity on B',
    );
    expect(onB.body).toMatchObject({ title: 'Flotte 12 véhicules', expected_value_eur: 4800, stage: 'new' });

    expect((await apiB.patch(`/opportunities/${id}`, { stage: 'qualified' })).status).toBe(200);
    await eventually(
      () => apiA.get(`/opportunities/${id}`),
      (r) => r.body.stage === 'qualified',
      'the stage on A',
    );
  });

  it('keeps both edits when A and B change different fields of one record at the same time', async () => {
    const created = await apiA.post('/opportunities', { title: 'MRH', product: 'mrh', contact: { last_name: 'Petit' } });
    const id = String(created.body.id);
    await eventually(
      () => apiB.get(`/opportunities/${id}`),
      (r) => r.status === 200,
      'the opportunity on B',
    );
    setSyncPaused(a.deps, cabinet, true, CLI_ACTOR);
    setSyncPaused(b.deps, cabinet, true, CLI_ACTOR);
    await apiA.patch(`/opportunities/${id}`, { title: 'MRH résidence principale' });
    await apiB.patch(`/opportunities/${id}`, { expected_value_eur: 650 });
    setSyncPaused(a.deps, cabinet, false, CLI_ACTOR);
    setSyncPaused(b.deps, cabinet, false, CLI_ACTOR);
    for (const api of [apiA, apiB]) {
      await eventually(
        () => api.get(`/opportunities/${id}`),
        (r) => r.body.title === 'MRH résidence principale' && r.body.expected_value_eur === 650,
        'both edits',
      );
    }
  });

  it('erases on B a client erased on A, even after B edited it offline', async () => {
    const created = await apiA.post('/clients', { first_name: 'Paul', last_name: 'Durand', email: 'paul.durand@example.fr' });
    const id = String(created.body.id);
    await eventually(
      () => apiB.get(`/clients/${id}`),
      (r) => r.status === 200,
      'the client on B',
    );
    setSyncPaused(b.deps, cabinet, true, CLI_ACTOR);
    expect((await apiA.delete(`/clients/${id}`)).status).toBe(204);
    await eventually(
      () => syncStatus(a.deps, cabinet),
      (s) => s.pending_changes === 0,
      'the erasure on the hub',
    );
    expect((await apiB.patch(`/clients/${id}`, { email: 'paul.nouveau@example.fr' })).status).toBe(200);
    setSyncPaused(b.deps, cabinet, false, CLI_ACTOR);
    await eventually(
      () => apiB.get(`/clients/${id}`),
      (r) => r.status === 404,
      'the erasure on B',
    );
    await eventually(
      () => syncStatus(b.deps, cabinet),
      (s) => s.pending_changes === 0,
      'B’s queue sent',
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect((await apiA.get(`/clients/${id}`)).status).toBe(404);
    for (const node of [a, b]) {
      const row = node.deps.db.sqlite.prepare('SELECT first_name, last_name, email FROM clients WHERE id = ?').get(id);
      expect(row).toEqual({ first_name: null, last_name: null, email: null });
    }
    // The hub keeps none of it either: every stored copy of the client and of its events is wiped.
    const onHub = await fixture.hub.database.sql`SELECT fields::text AS text FROM hub_changes WHERE cabinet_id = ${cabinet}`;
    for (const change of onHub) expect(String(change.text)).not.toMatch(/Durand|paul\.nouveau|paul\.durand/);
  });

  it('serves on B the PDF of a quote the sandbox robot priced on A', async () => {
    const test = apiClient(a, a.createKey(cabinet, { environment: 'test' }).key);
    const client = await test.post('/clients', { first_name: 'Jeanne', last_name: 'Martin' });
    const enqueued = await test.post('/automation/tarifications', {
      compagnie: 'allianz',
      produit: 'auto',
      client_id: client.body.id,
      dicData: AUTO_DIC_DATA,
    });
    expect(enqueued.status).toBe(202);

    const job = await eventually(
      () => test.get(`/automation/jobs/${String(enqueued.body.job_id)}`),
      (r) => ['completed', 'partial', 'failed', 'cancelled'].includes(String(r.body.status)),
      'the job',
      90_000,
    );
    expect(job.body.status).toBe('completed');
    const devisId = String(job.body.devis_id);
    const onB = await eventually(
      () => apiB.get(`/devis/${devisId}`),
      (r) => r.status === 200 && r.body.status === 'priced',
      'the priced quote on B',
      30_000,
    );
    expect(onB.body.tarif_eur).toBe(job.body.result && (job.body.result as { tarif_eur: number }).tarif_eur);
    const link = await apiB.get(`/devis/${devisId}/pdf`);
    expect(link.status).toBe(302);
    const pdf = await b.request(String(link.headers.get('location')));
    expect(pdf.status).toBe(200);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.equals(readDevisPdf(a.deps, cabinet, devisId))).toBe(true);
    // The finished job's history and result came along, with the credits A's wallet paid for it.
    const jobOnB = await eventually(
      () => apiB.get(`/automation/jobs/${String(enqueued.body.job_id)}`),
      (r) => r.body.status === 'completed',
      'the job on B',
    );
    expect(job.body.credits_consumed).toBeGreaterThan(0);
    expect(jobOnB.body.credits_consumed).toBe(job.body.credits_consumed);
  }, 150_000);

  it('serves on B the other documents and the offers of a quote priced on A', async () => {
    const client = await apiA.post('/clients', { first_name: 'Paul', last_name: 'Durand' });
    const draft = await apiA.post('/devis', { client_id: client.body.id, compagnie: 'horizon', produit: 'voiture' });
    const devisId = String(draft.body.id);
    const conditions = Buffer.from('%PDF-1.4\n% conditions generales horizon\n%%EOF\n');
    const offre = {
      formule: 'tiers',
      libelle: 'Tiers',
      prime_annuelle_eur: 300,
      prime_mensuelle_eur: 25,
      franchise_eur: null,
      garanties: [],
    };
    recordDevisPriced(a.deps, cabinet, devisId, {
      tarifEur: 300,
      pdf: Buffer.from('%PDF-1.4\n% devis\n%%EOF\n'),
      offres: [offre],
      documents: [{ kind: 'conditions', label: 'Conditions générales', pdf: conditions }],
    });
    const onB = await eventually(
      () => apiB.get(`/devis/${devisId}`),
      (r) => r.status === 200 && r.body.status === 'priced',
      'the priced quote on B',
      30_000,
    );
    expect(onB.body).toMatchObject({ offres: [offre], documents: [{ position: 1, kind: 'conditions', label: 'Conditions générales' }] });
    const link = await apiB.get(`/devis/${devisId}/documents/1`);
    expect(link.status).toBe(302);
    const file = await b.request(String(link.headers.get('location')));
    expect(Buffer.from(await file.arrayBuffer()).equals(conditions)).toBe(true);
  }, 60_000);

  it('delivers an event made on A to a webhook subscribed on B, with the id A’s own subscriber saw, once each', async () => {
    const hookA = await apiA.post('/webhooks', { url: receiverA.url, events: ['opportunity.created'] });
    const hookB = await apiB.post('/webhooks', { url: receiverB.url, events: ['opportunity.created'] });
    expect([hookA.status, hookB.status]).toEqual([201, 201]);
    const created = await apiA.post('/opportunities', {
      title: 'Multirisque pro',
      product: 'rc_pro',
      contact: { last_name: 'Dupuis', company_name: 'Boulangerie Dupuis' },
    });
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    const [seenA] = await receiverA.waitFor(1, 20_000);
    const [seenB] = await receiverB.waitFor(1, 20_000);
    const envelopeA = JSON.parse(String(seenA?.rawBody)) as { id: string; type: string; data: { opportunity_id: string } };
    const envelopeB = JSON.parse(String(seenB?.rawBody)) as { id: string; type: string; data: { opportunity_id: string } };
    expect(envelopeA).toMatchObject({ type: 'opportunity.created', data: { opportunity_id: id } });
    expect(envelopeB.id).toBe(envelopeA.id);
    expect(envelopeB.data.opportunity_id).toBe(id);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiverA.received).toHaveLength(1);
    expect(receiverB.received).toHaveLength(1);
  });

  it('reports the link in sync status through the CLI', async () => {
    const status = await runCourtier(['sync', 'status', '--cabinet', cabinet, '--json', '--data-dir', b.dataDir]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      state: expect.stringMatching(/^(idle|syncing)$/),
      hub_url: fixture.hub.url,
      device_id: expect.any(String),
      pending_changes: expect.any(Number),
      last_error: null,
    });
  });
});
