// @module-tag browser
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { automationStatusSchema, jobSchema, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import { consoleInsurerListSchema } from '../../shared/console-insurers.js';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { signInNewUser } from '../helpers/console.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let receiver: Receiver;
let mode: SandboxMode = 'normal';
let portal = '';

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({
    insurers: [sandboxInsurer({ portalUrl: () => portal })],
    sandboxMode: () => mode,
    config: { sandboxLatencyMs: 50, tarificationQuotaPerHour: 1000, webhookAllowPrivateTargets: true },
    webhooks: { extraCa: [receiver.ca] },
  });
  portal = `${server.url}/sandbox/insurer`;
}, 30_000);
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** A cabinet with credits, the sandbox's demo login, a production key and a console admin. */
async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 200);
  setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'demo' });
  const key = server.createKey(id).key;
  return { id, key, api: apiClient(server, key), admin: (await signInNewUser(server, id, 'admin')).client };
}

let counter = 0;
function autoData(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return { ...AUTO_DIC_DATA, postcode: String(69000 + (counter % 9)), ...overrides };
}

async function poll(api: ReturnType<typeof apiClient>, id: string, timeoutMs = 60_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
    if (TERMINAL_STATUSES.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status} (${job.progress.step})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function price(api: ReturnType<typeof apiClient>, dicData: Record<string, unknown>): Promise<Job> {
  const enqueued = await api.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData });
  expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  return poll(api, String(enqueued.body.job_id));
}

async function sandboxBreakerFailures(api: ReturnType<typeof apiClient>): Promise<number> {
  const status = automationStatusSchema.parse((await api.get('/automation/status')).body);
  return status.breakers.find((b) => b.compagnie === 'sandbox')?.consecutive_failures ?? 0;
}

async function sandboxOnConsole(admin: Awaited<ReturnType<typeof cabinet>>['admin']) {
  const res = await admin.request('/api/v1/console/insurers');
  expect(res.status).toBe(200);
  const sandbox = consoleInsurerListSchema.parse(await res.json()).data.find((insurer) => insurer.code === 'sandbox');
  expect(sandbox).toBeDefined();
  return sandbox!;
}

describe('an insurer portal that changed under its robot (real Chromium, sandbox in mode changed)', () => {
  it('fails the job as portal_changed naming the step, refunds it, saves what the step expected and found, tells subscribers and the console, and counts for the breaker', async () => {
    const { id, key, api, admin } = await cabinet();
    const subscribed = await api.post('/webhooks', { url: receiver.url, events: ['insurer.portal_changed'] });
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201);
    const insuredName = 'Gwendoline Kerjean-Prigent';
    const dicData = autoData({ insured_name: insuredName, vehicle_model: 'Zoé E-Tech' });
    expect((await sandboxOnConsole(admin)).portal_changed).toBeNull();
    const failuresBefore = await sandboxBreakerFailures(api);

    mode = 'changed';
    let job: Job;
    try {
      job = await price(api, dicData);
    } finally {
      mode = 'normal';
    }
    expect(job).toMatchObject({
      status: 'failed',
      credits_consumed: 0,
      error: { code: 'portal_changed', technical: true, details: { step: 'driver' } },
    });
    expect(job.error?.message).toContain('"driver"');
    expect((await api.get('/wallet')).body).toMatchObject({ balance: 200 });
    expect(await sandboxBreakerFailures(api)).toBe(failuresBefore + 1);

    // What the step expected and what it found, as JSON, without anything the broker typed.
    expect(job.artifacts?.portal_changes_url).toBe(`/api/v1/public/automation/jobs/${job.job_id}/artifacts/portal-changed.json`);
    const download = await server.request(job.artifacts?.portal_changes_url ?? '', { headers: { 'X-API-Key': key } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await download.text();
    const changes = JSON.parse(text) as {
      step: string;
      expected: { landmarks: string[] };
      found: { path: string; landmarks: string[] };
      missing: string[];
    };
    expect(changes.step).toBe('driver');
    expect(changes.expected.landmarks.length).toBeGreaterThan(0);
    expect(changes.found.landmarks.length).toBeGreaterThan(0);
    expect(changes.missing.length).toBeGreaterThan(0);
    for (const value of [insuredName, 'Kerjean', 'Zoé E-Tech', dicData.postcode as string, 'demo']) expect(text).not.toContain(value);
    // The console's admins download it too; a key without automation:artifacts does not.
    expect((await admin.request(`/api/v1/console/jobs/${job.job_id}/artifacts/portal-changed.json`)).status).toBe(200);
    const readOnly = server.createKey(id, { scopes: ['automation:read'] }).key;
    expect((await server.request(job.artifacts?.portal_changes_url ?? '', { headers: { 'X-API-Key': readOnly } })).status).toBe(403);

    // Subscribers hear of it, with the insurer whose robot ran and the step.
    await server.app.webhookDispatcher.drain();
    const events = receiver.received
      .map((r) => eventEnvelopeSchema.parse(JSON.parse(r.rawBody)))
      .filter((event) => event.cabinet_id === id && event.type === 'insurer.portal_changed');
    expect(events.map((event) => event.data)).toEqual([{ compagnie: 'sandbox', produit: 'auto', step: 'driver', job_id: job.job_id }]);

    // The console shows it on the insurer, until a job on it is priced again.
    expect((await sandboxOnConsole(admin)).portal_changed).toEqual({ at: job.updated_at, step: 'driver', job_id: job.job_id });
    expect(await price(api, autoData())).toMatchObject({ status: 'completed' });
    expect((await sandboxOnConsole(admin)).portal_changed).toBeNull();
  });

  it('a home quote fails at its own step; a job that fails otherwise has no details and no portal changes', async () => {
    const { id, api } = await cabinet();
    mode = 'changed';
    let home: Job;
    try {
      const example = (await api.get('/produits-disponibles/mrh/schema?compagnie=sandbox')).body.example as Record<string, unknown>;
      const enqueued = await api.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'mrh', dicData: example });
      expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
      home = await poll(api, String(enqueued.body.job_id));
    } finally {
      mode = 'normal';
    }
    expect(home.error).toMatchObject({ code: 'portal_changed', details: { step: 'dwelling' } });

    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'wrong' });
    const refused = await price(api, autoData());
    expect(refused.error).toEqual({ code: 'invalid_credentials', message: expect.any(String), technical: false, details: null });
    expect(refused.artifacts).toMatchObject({ portal_changes_url: null });
    expect(refused.artifacts?.screenshot_url).not.toBeNull();
  });
});
