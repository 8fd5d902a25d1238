import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PulledChange, SyncedKind } from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { listSyncConflicts } from '../../server/sync/conflicts.js';
import { grantCredits } from '../../server/wallet/service.js';
import { sha256 } from '../helpers/hub.js';
import { apiClient } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { fetchHub } from '../helpers/sync-node.js';
import { createTestInsurer, type TestInsurer } from '../helpers/test-insurer.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * A hostile hub (its operator, or whoever took it over) — or a device whose changes a hub passed on
 * — against a real install: whatever a pulled page holds, the install runs no robot it did not
 * enqueue, lets no erasure freeze a record, keeps its listings, webhooks and sync working, stores
 * no PDF that does not match its hash, follows no redirect and reads no answer without a limit.
 */

const FAST_SYNC = { scanIntervalMs: 100, pullWaitSeconds: 1, pushIntervalMs: 200, refusedRetryMs: 200, maxBackoffMs: 500 };
const REMOTE = randomUUID();
const NOW = Date.now();

let server: TestServer;
let testco: TestInsurer;
let receiver: Receiver;
let sentinel: Server;
let sentinelHits = 0;
let sentinelUrl = '';

beforeAll(async () => {
  testco = createTestInsurer();
  receiver = await startReceiver();
  server = await startTestServer({
    insurers: [testco],
    sync: FAST_SYNC,
    config: { webhookAllowPrivateTargets: true },
    webhooks: { extraCa: [receiver.ca] },
  });
  // Where a redirect from the hub would lead: something on this machine or the LAN.
  sentinel = createServer((_req, res) => {
    sentinelHits += 1;
    res.end('%PDF from elsewhere');
  });
  await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', resolve));
  const address = sentinel.address();
  sentinelUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/internal`;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await new Promise<void>((resolve) => sentinel?.close(() => resolve()));
});

let seq = 0;
function pulled(kind: SyncedKind, recordId: string, fields: Record<string, unknown>, op: 'upsert' | 'erase' = 'upsert'): PulledChange {
  seq += 1;
  return { seq, device_id: REMOTE, kind, record_id: recordId, op, hlc: formatHlc({ time: NOW, counter: seq, device: REMOTE }), fields };
}

const devisRow = (overrides: Record<string, unknown> = {}) => ({
  status: 'priced',
  client_id: null,
  opportunity_id: null,
  compagnie: 'testco',
  produit: 'auto',
  dic_data: '{}',
  tarif_cents: 43210,
  suspens: null,
  job_id: null,
  pdf_sha256: null,
  contract_id: null,
  signed_at: null,
  created_at: NOW,
  updated_at: NOW,
  ...overrides,
});

async function connected(fakeHub: FakeHub, name: string, credits = 0): Promise<{ cabinetId: string; api: ReturnType<typeof apiClient> }> {
  const cabinetId = await server.createCabinet(name);
  // Before connecting: the balance the install brings to the cabinet's wallet.
  if (credits > 0) grantCredits(server.deps, cabinetId, credits);
  await connectCabinet(
    server.deps,
    { cabinetId, hubUrl: fakeHub.url, code: 'ANY-CODE', deviceName: 'poste' },
    { fetch: fetchHub, records: syncedRecords() },
    CLI_ACTOR,
  );
  return { cabinetId, api: apiClient(server, server.createKey(cabinetId).key) };
}

describe('a hostile hub’s pages', () => {
  let hub: FakeHub;
  beforeAll(async () => {
    hub = await startFakeHub();
  });
  afterAll(() => hub.close());

  it('are applied change by change: what the install’s rules refuse is set aside, the rest applies, and nothing runs or breaks', async () => {
    const { cabinetId, api } = await connected(hub, 'Cabinet Cible', 100);
    setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker', password: 'pw' });
    // Another cabinet of this install, whose client's id the hub will reuse.
    const neighbour = await server.createCabinet('Cabinet Voisin');
    const neighbourApi = apiClient(server, server.createKey(neighbour).key);
    const neighbourClient = String((await neighbourApi.post('/clients', { last_name: 'Voisin' })).body.id);
    expect((await api.post('/webhooks', { url: receiver.url, events: ['opportunity.created'] })).status).toBe(201);

    // First page: a quote and its contract, as another install signed them.
    const devisId = randomUUID();
    const contractId = randomUUID();
    const clientId = randomUUID();
    hub.pages.push({
      after: 0,
      changes: [
        pulled('devis', devisId, devisRow({ status: 'signed', client_id: clientId, contract_id: contractId, signed_at: NOW })),
        pulled('contract', contractId, {
          devis_id: devisId,
          client_id: clientId,
          opportunity_id: null,
          compagnie: 'testco',
          produit: 'auto',
          premium_cents: 43210,
          signed_at: NOW,
          created_at: NOW,
        }),
      ],
      last_seq: seq,
    });
    await eventually(
      () => server.withOtherConnection((db) => db.prepare('SELECT premium_cents FROM contracts WHERE id = ?').get(contractId)),
      (row) => row !== undefined,
      'the contract applied',
    );

    // Second page: the attacks, and honest changes among them.
    const afterFirst = seq;
    const jobId = randomUUID();
    const queuedElsewhere = randomUUID();
    const queuedJob = {
      compagnie: 'testco',
      produit: 'auto',
      dic_data: JSON.stringify({ postcode: '75001', birth_date: '1980-01-01' }),
      request_hash: 'a'.repeat(64),
      devis_id: devisId,
      status: 'pending',
      progress_step: 'queued',
      progress_percent: 0,
      cost_credits: 10,
      credits_consumed: null,
      result_tarif_cents: null,
      result_suspens: null,
      error_code: null,
      error_message: null,
      error_technical: null,
      submitted: false,
      attempts: 0,
      mfa_requested_at: null,
      mfa_expires_at: null,
      environment: 'prod',
      robot_compagnie: 'testco',
      created_at: NOW - 60_000,
      updated_at: NOW,
      finished_at: null,
    };
    const badPdf = Buffer.from('%PDF-1.4 what the hub sends instead');
    const namedPdf = Buffer.from('%PDF-1.4 the quote');
    const redirected = Buffer.from('%PDF-1.4 redirected');
    const huge = Buffer.from('%PDF-1.4 huge');
    hub.blobs.set(sha256(namedPdf), badPdf);
    hub.blobs.set(sha256(redirected), (res) => res.writeHead(307, { location: sentinelUrl }).end());
    hub.blobs.set(sha256(huge), (res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      const chunk = Buffer.alloc(1024 * 1024, 0x25);
      for (let i = 0; i < 30; i++) res.write(chunk);
      res.end();
    });
    const honestOpportunity = randomUUID();
    const mismatched = randomUUID();
    const viaRedirect = randomUUID();
    const tooLarge = randomUUID();
    const expectedAside: Record<number, string> = {};
    const aside = (change: PulledChange, reason: string) => {
      expectedAside[change.seq] = reason;
      return change;
    };
    hub.pages.push({
      after: afterFirst,
      changes: [
        // A job that claims to be this install's (an enqueue number, a lease): its robots would take it.
        aside(pulled('job', jobId, { ...queuedJob, enqueue_number: 1, lease_until: NOW + 60_000 }), 'operation_refused'),
        // A job queued on another install: shown here, run there only.
        pulled('job', queuedElsewhere, queuedJob),
        aside(pulled('contract', contractId, { premium_cents: 1, signed_at: 0 }, 'erase'), 'operation_refused'),
        aside(
          pulled('client', randomUUID(), {
            type: 'person',
            last_name: 'Adresse',
            first_name: null,
            company_name: null,
            siret: null,
            email: null,
            phone: null,
            address: 'not json',
            birth_date: null,
            created_at: NOW,
            updated_at: NOW,
            erased_at: null,
          }),
          'invalid_fields',
        ),
        aside(
          pulled('event', randomUUID(), { type: 'opportunity.created', version: '1', created_at: NOW, data: '{not json' }),
          'invalid_fields',
        ),
        aside(pulled('devis', randomUUID(), devisRow({ pdf_sha256: '../../etc/passwd' })), 'invalid_fields'),
        aside(
          pulled('client', neighbourClient, {
            type: 'person',
            last_name: 'Écrasé',
            first_name: null,
            company_name: null,
            siret: null,
            email: null,
            phone: null,
            address: null,
            birth_date: null,
            created_at: NOW,
            updated_at: NOW,
            erased_at: null,
          }),
          'record_clash',
        ),
        pulled('devis', mismatched, devisRow({ pdf_sha256: sha256(namedPdf) })),
        pulled('devis', viaRedirect, devisRow({ pdf_sha256: sha256(redirected) })),
        pulled('devis', tooLarge, devisRow({ pdf_sha256: sha256(huge) })),
        pulled('opportunity', honestOpportunity, {
          title: 'Flotte',
          product: 'auto',
          stage: 'new',
          expected_value_cents: 0,
          source: 'api',
          contact: JSON.stringify({ last_name: 'Martin', first_name: null, company_name: null, siret: null, email: null, phone: null }),
          tags: '[]',
          created_via: 'api',
          created_at: NOW,
          updated_at: NOW,
        }),
      ],
      last_seq: seq,
    });

    // The page is applied whole, the refused changes set aside with their reason.
    await eventually(
      () => api.get(`/opportunities/${honestOpportunity}`),
      (res) => res.status === 200,
      'the honest opportunity of the page',
    );
    const conflicts = listSyncConflicts(server.deps, cabinetId, 100);
    expect(Object.fromEntries(conflicts.map((c) => [c.seq, c.reason]))).toEqual(expectedAside);
    expect(syncStatus(server.deps, cabinetId).set_aside_changes).toBe(Object.keys(expectedAside).length);

    // No robot ran the hub's jobs: the one that claimed to be this install's is not here, the one
    // queued elsewhere stays queued, and a job enqueued here after them runs, alone.
    expect((await api.get(`/automation/jobs/${jobId}`)).status).toBe(404);
    expect((await api.get(`/automation/jobs/${queuedElsewhere}`)).body).toMatchObject({ status: 'pending', progress: { step: 'queued' } });
    const enqueued = await api.post('/automation/tarifications', {
      compagnie: 'testco',
      produit: 'auto',
      dicData: { postcode: '69003', birth_date: '1984-03-09' },
    });
    expect(enqueued.status).toBe(202);
    await eventually(
      () => api.get(`/automation/jobs/${String(enqueued.body.job_id)}`),
      (res) => res.body.status === 'completed',
      'the local job',
    );
    expect(testco.runs.map((run) => run.dicData.postcode)).toEqual(['69003']);
    expect((await api.get(`/automation/jobs/${queuedElsewhere}`)).body.status).toBe('pending');

    // The contract keeps its values; the other cabinet its client; listings work.
    expect(
      server.withOtherConnection((db) => db.prepare('SELECT premium_cents, signed_at FROM contracts WHERE id = ?').get(contractId)),
    ).toEqual({ premium_cents: 43210, signed_at: NOW });
    expect((await neighbourApi.get(`/clients/${neighbourClient}`)).body.last_name).toBe('Voisin');
    expect((await api.get('/clients')).status).toBe(200);

    // PDFs: none that does not hash to its name, none through a redirect, none past 20 MiB; the quotes are there.
    for (const id of [mismatched, viaRedirect, tooLarge]) {
      expect((await api.get(`/devis/${id}`)).status).toBe(200);
      expect((await api.get(`/devis/${id}/pdf`)).body.error).toBe('pdf_not_available');
    }
    expect(sentinelHits).toBe(0);

    // Webhooks still go out: an opportunity created here is delivered.
    expect((await api.post('/opportunities', { title: 'Après la page', product: 'mrh', contact: { last_name: 'Petit' } })).status).toBe(
      201,
    );
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.rawBody).toContain('Après la page');

    // The CLI shows the same list.
    expect(conflicts.find((c) => c.seq === Number(Object.keys(expectedAside)[0]))?.message).toContain(
      'never carries what only the install that enqueued it holds',
    );
  });
});

describe('a hub that is busy', () => {
  it('a PDF refused for a moment (429) is fetched again with its page, not given up', async () => {
    const hub = await startFakeHub();
    try {
      const { api } = await connected(hub, 'Cabinet Occupé');
      const pdf = Buffer.from('%PDF-1.4 busy hub');
      let asked = 0;
      hub.blobs.set(sha256(pdf), (res) => {
        asked += 1;
        if (asked === 1) {
          res
            .writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' })
            .end(JSON.stringify({ error: 'sync_too_many_requests', message: 'busy', request_id: randomUUID() }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
      });
      const quote = randomUUID();
      hub.pages.push({ after: 0, changes: [pulled('devis', quote, devisRow({ pdf_sha256: sha256(pdf) }))], last_seq: seq });
      // A link to the PDF (302) once it is on the install; pdf_not_available before.
      await eventually(
        () => api.get(`/devis/${quote}/pdf`),
        (res) => res.status === 302,
        'the PDF on the install',
      );
      expect(asked).toBeGreaterThanOrEqual(2);
    } finally {
      await hub.close();
    }
  });
});

describe('a hostile hub’s answers', () => {
  it('a page larger than any the protocol allows is refused unread: sync shows the error, the install keeps serving', async () => {
    const hub = await startFakeHub();
    try {
      const { cabinetId, api } = await connected(hub, 'Cabinet Page');
      const fields = { title: 'x'.repeat(1024 * 1024), product: 'auto' };
      hub.pages.push({ after: 0, changes: Array.from({ length: 30 }, () => pulled('opportunity', randomUUID(), fields)), last_seq: seq });
      await eventually(
        () => syncStatus(server.deps, cabinetId),
        (status) => status.last_error_code === 'hub_answer_too_large',
        'the refusal of the page',
      );
      expect(syncStatus(server.deps, cabinetId).last_error).toMatch(/answered more than \d+ bytes/);
      expect((await api.get('/opportunities')).body.data).toEqual([]);
    } finally {
      await hub.close();
    }
  });
});
