// @module-tag browser
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchema, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { traditionInsurer } from '../helpers/tradition-insurer.js';
import { TRADITION_PRODUCTS } from '../../insurers/tradition/src/products.js';

let server: TestServer;
let mode: SandboxMode = 'normal';
let portal = '';

beforeAll(async () => {
  server = await startTestServer({
    insurers: [traditionInsurer({ portalUrl: () => portal, pdf: { intervalMs: 0 } })],
    sandboxMode: () => mode,
    config: { sandboxLatencyMs: 50, tarificationQuotaPerHour: 1000 },
  });
  portal = `${server.url}/sandbox/tradition`;
}, 30_000);
afterAll(async () => {
  await server?.close();
});

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 200);
  const prodKey = server.createKey(id).key;
  return { id, prodKey, test: apiClient(server, server.createKey(id, { environment: 'test' }).key), prod: apiClient(server, prodKey) };
}

const example = (code: string) => TRADITION_PRODUCTS.find((p) => p.code === code)!.example;

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

async function price(api: ReturnType<typeof apiClient>, produit: string, dicData: Record<string, unknown>): Promise<Job> {
  const enqueued = await api.post('/automation/tarifications', { compagnie: 'tradition', produit, dicData });
  expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  return poll(api, String(enqueued.body.job_id), terminal);
}

describe('Mutuelle Tradition through the REST API (real Chromium)', () => {
  it('prices with a test key on its demo login, with the quote’s PDF; a warm second job is quick', async () => {
    const { id, test } = await cabinet();
    const job = await price(test, 'automobile', example('automobile'));
    expect(job).toMatchObject({ status: 'completed', ran_on: 'tradition', environment: 'test', result: { tarif_eur: 530.56 } });
    const pdf = await server.request(job.result?.pdf_url ?? '', {
      headers: { 'X-API-Key': server.createKey(id, { environment: 'test' }).key },
    });
    expect(pdf.status).toBe(200);
    expect(Buffer.from(await pdf.arrayBuffer()).toString('latin1')).toContain('prime annuelle 530,56 EUR');

    // The same login's next job gets its browser page back, still logged in: no login page.
    const started = Date.now();
    const warm = await price(test, 'rc_pro', example('rc_pro'));
    const wallMs = Date.now() - started;
    expect(warm).toMatchObject({ status: 'completed', result: { tarif_eur: 260 } });
    console.info(`Mutuelle Tradition: a warm rc_pro job took ${wallMs} ms from enqueue to completed`);
  });

  it('waits for a person to read the captcha of demo-captcha, answered through POST /automation/jobs/{id}/mfa', async () => {
    const { id, prod, prodKey } = await cabinet();
    setInsurerCredentials(server.deps, id, 'tradition', { login: 'demo-captcha', password: 'demo' });
    const enqueued = await prod.post('/automation/tarifications', {
      compagnie: 'tradition',
      produit: 'habitation',
      dicData: example('habitation'),
    });
    expect(enqueued.status).toBe(202);
    const waiting = await poll(prod, String(enqueued.body.job_id), (j) => j.status === 'mfa_required' || terminal(j));
    expect(waiting).toMatchObject({ status: 'mfa_required', mfa: { kind: 'captcha' } });
    const image = await server.request(waiting.mfa?.image_url ?? '', { headers: { 'X-API-Key': prodKey } });
    expect(image.headers.get('content-type')).toBe('image/png');
    const phone = (await (await server.request('/sandbox/tradition/phone?format=json')).json()) as { captchas: { text: string }[] };
    const text = phone.captchas[0]?.text ?? '';
    expect((await prod.post(`/automation/jobs/${waiting.job_id}/mfa`, { code: text })).status).toBe(200);
    const done = await poll(prod, waiting.job_id, terminal);
    expect(done).toMatchObject({ status: 'completed', result: { tarif_eur: 283.13 } });
  });

  it('fails on the redesign as portal_changed naming the step, refunded; and on an outage as insurer_unavailable', async () => {
    const { test } = await cabinet();
    mode = 'changed';
    try {
      const changed = await price(test, 'habitation', example('habitation'));
      expect(changed).toMatchObject({
        status: 'failed',
        credits_consumed: 0,
        error: { code: 'portal_changed', technical: true, details: { step: 'risque' } },
      });
      mode = 'down';
      const down = await price(test, 'habitation', { ...example('habitation'), nom_souscripteur: 'Paul Durand' });
      expect(down).toMatchObject({ status: 'failed', credits_consumed: 0, error: { code: 'insurer_unavailable', technical: true } });
    } finally {
      mode = 'normal';
      server.deps.db.sqlite.prepare(`DELETE FROM insurer_breakers WHERE compagnie = 'tradition'`).run();
    }
  });
  it('waits out a slow portal; on a flaky one the job ends without hanging, charged only when priced', async () => {
    const { test } = await cabinet();
    mode = 'slow';
    try {
      const slow = await price(test, 'rc_pro', example('rc_pro'));
      expect(slow.status).toBe('completed');
      mode = 'flaky';
      const flaky = await price(test, 'habitation', example('habitation'));
      expect(['completed', 'failed']).toContain(flaky.status);
      if (flaky.status === 'failed') expect(flaky).toMatchObject({ credits_consumed: 0, error: { technical: true } });
      else expect(flaky.credits_consumed).toBeGreaterThan(0);
    } finally {
      mode = 'normal';
      server.deps.db.sqlite.prepare(`DELETE FROM insurer_breakers WHERE compagnie = 'tradition'`).run();
    }
  });
});
