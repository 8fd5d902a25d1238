// @module-tag browser
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchema, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { horizonInsurer } from '../helpers/horizon-insurer.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let mode: SandboxMode = 'normal';
let portal = '';

beforeAll(async () => {
  server = await startTestServer({
    insurers: [horizonInsurer({ portalUrl: () => portal })],
    sandboxMode: () => mode,
    config: { sandboxLatencyMs: 50, tarificationQuotaPerHour: 1000 },
  });
  portal = `${server.url}/sandbox/horizon`;
}, 30_000);
afterAll(async () => {
  await server?.close();
});

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 200);
  return {
    id,
    test: apiClient(server, server.createKey(id, { environment: 'test' }).key),
    prod: apiClient(server, server.createKey(id).key),
  };
}

async function poll(api: ReturnType<typeof apiClient>, id: string, until: (job: Job) => boolean, timeoutMs = 60_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status} (${job.progress.step})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const terminal = (job: Job) => TERMINAL_STATUSES.includes(job.status);

async function example(api: ReturnType<typeof apiClient>, produit: string): Promise<Record<string, unknown>> {
  const schema = await api.get(`/produits-disponibles/${produit}/schema?compagnie=horizon`);
  expect(schema.status, JSON.stringify(schema.body)).toBe(200);
  return schema.body.example as Record<string, unknown>;
}

async function price(api: ReturnType<typeof apiClient>, produit: string, dicData: Record<string, unknown>): Promise<Job> {
  const enqueued = await api.post('/automation/tarifications', { compagnie: 'horizon', produit, dicData });
  expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  return poll(api, String(enqueued.body.job_id), terminal);
}

describe('Horizon Direct through the REST API (real Chromium, its single-page portal)', () => {
  it('a test key prices a car quote on the demo account, with the quote’s PDF; a second job resumes the session', async () => {
    const { id, test } = await cabinet();
    const dicData = await example(test, 'voiture');
    const job = await price(test, 'voiture', dicData);
    expect(job).toMatchObject({ status: 'completed', ran_on: 'horizon', environment: 'test', credits_consumed: 10 });
    expect(job.result?.tarif_eur).toBe(640.12);
    const pdf = await server.request(job.result?.pdf_url ?? '', {
      headers: { 'X-API-Key': server.createKey(id, { environment: 'test' }).key },
    });
    expect(pdf.status).toBe(200);
    expect(Buffer.from(await pdf.arrayBuffer()).toString('latin1')).toContain('prime annuelle 640,12 EUR');
    // The quote keeps every formula offered and the other documents, each behind its signed link.
    const devis = (await test.get(`/devis/${job.devis_id}`)).body as {
      offres: { formule: string; prime_annuelle_eur: number }[];
      documents: { kind: string; url: string }[];
    };
    expect(devis.offres.map((o) => [o.formule, o.prime_annuelle_eur])).toEqual([
      ['tiers', 304.82],
      ['tiers_plus', 426.75],
      ['tous_risques', 640.12],
    ]);
    expect(devis.documents.map((d) => d.kind)).toEqual(['conditions', 'information']);
    const link = await test.get(devis.documents[0]!.url.replace('/api/v1/public', ''));
    expect(link.status).toBe(302);
    const conditions = await server.request(String(link.headers.get('location')));
    expect(
      Buffer.from(await conditions.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    // A warm job: the browser and the portal's session are already there.
    const started = performance.now();
    const warm = await price(test, 'voiture', { ...dicData, formule: 'tiers' });
    const wallMs = Math.round(performance.now() - started);
    console.info(`Horizon Direct: a warm job took ${wallMs} ms from enqueue to completed`);
    expect(warm).toMatchObject({ status: 'completed', result: { tarif_eur: 304.82 } });
  });

  it('demo-app: the job waits for the approval in the Horizon app, answered through POST /automation/jobs/{id}/mfa', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'horizon', { login: 'demo-app', password: 'demo' });
    const enqueued = await prod.post('/automation/tarifications', {
      compagnie: 'horizon',
      produit: 'logement',
      dicData: await example(prod, 'logement'),
    });
    const waiting = await poll(prod, String(enqueued.body.job_id), (j) => j.status === 'mfa_required' || terminal(j));
    expect(waiting.mfa).toMatchObject({
      kind: 'app_approval',
      challenge: expect.stringMatching(/^Validez la connexion dans l’application Horizon/),
    });

    const phone = (await (await server.request('/sandbox/horizon/phone?format=json')).json()) as {
      approvals: { status: string; approve_url: string }[];
    };
    const request = phone.approvals.find((a) => a.status === 'pending');
    expect((await server.request(request?.approve_url ?? '', { method: 'POST', headers: { accept: 'application/json' } })).status).toBe(
      200,
    );
    expect((await prod.post(`/automation/jobs/${waiting.job_id}/mfa`, { approved: true })).status).toBe(200);
    const done = await poll(prod, waiting.job_id, terminal);
    expect(done).toMatchObject({ status: 'completed', ran_on: 'horizon', result: { tarif_eur: 205 } });
  });

  it('the redesign fails as portal_changed naming the step, refunded; the portal down fails as insurer_unavailable, refunded', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'horizon', { login: 'demo', password: 'demo' });
    const dicData = await example(prod, 'voiture');
    mode = 'changed';
    try {
      const changed = await price(prod, 'voiture', dicData);
      expect(changed).toMatchObject({
        status: 'failed',
        credits_consumed: 0,
        error: { code: 'portal_changed', technical: true, details: { step: 'driver' } },
      });
      mode = 'down';
      // Another client: the same request twice would be refused as a replay.
      const down = await price(prod, 'voiture', { ...dicData, nom: 'Durand' });
      expect(down).toMatchObject({ status: 'failed', credits_consumed: 0, error: { code: 'insurer_unavailable', technical: true } });
    } finally {
      mode = 'normal';
    }
    expect((await prod.get('/wallet')).body).toMatchObject({ balance: 200 });
  });
  it('waits out a slow portal; on a flaky one the job ends without hanging, charged only when priced', async () => {
    const { test } = await cabinet();
    mode = 'slow';
    try {
      const slow = await price(test, 'logement', await example(test, 'logement'));
      expect(slow.status).toBe('completed');
      mode = 'flaky';
      const flaky = await price(test, 'voiture', await example(test, 'voiture'));
      expect(['completed', 'failed']).toContain(flaky.status);
      if (flaky.status === 'failed') expect(flaky).toMatchObject({ credits_consumed: 0, error: { technical: true } });
      else expect(flaky.credits_consumed).toBeGreaterThan(0);
    } finally {
      mode = 'normal';
      server.deps.db.sqlite.prepare(`DELETE FROM insurer_breakers WHERE compagnie = 'horizon'`).run();
    }
  });
});
