// @module-tag browser
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchema, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import { productSchemaDocument } from '../../shared/products.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';

let server: TestServer;
let mode: SandboxMode = 'normal';
let portal = '';

beforeAll(async () => {
  server = await startTestServer({
    insurers: [sandboxInsurer({ portalUrl: () => portal })],
    sandboxMode: () => mode,
    config: { sandboxLatencyMs: 400, tarificationQuotaPerHour: 1000 },
  });
  portal = `${server.url}/sandbox/insurer`;
}, 30_000);
afterAll(async () => {
  await server?.close();
});

async function cabinet(credits = 200) {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, credits);
  return {
    id,
    test: apiClient(server, server.createKey(id, { environment: 'test' }).key),
    prod: apiClient(server, server.createKey(id).key),
  };
}

let counter = 0;
function autoData(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return { ...AUTO_DIC_DATA, postcode: String(69000 + (counter % 9)), ...overrides };
}

async function poll(api: ReturnType<typeof apiClient>, id: string, until: (job: Job) => boolean, timeoutMs = 60_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status} (${job.progress.step})`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
const terminal = (job: Job) => TERMINAL_STATUSES.includes(job.status);

async function phoneCodes(): Promise<string[]> {
  const res = await server.request('/sandbox/insurer/phone?format=json');
  return ((await res.json()) as { messages: { code: string }[] }).messages.map((m) => m.code);
}

describe('browser robots on the sandbox insurer (real Chromium)', () => {
  it('the whole flow of part 1 with a test key: schema → client → dry run → enqueue → poll → PDF', async () => {
    const { test } = await cabinet();
    const schema = productSchemaDocument.parse((await test.get('/produits-disponibles/auto/schema?compagnie=sandbox')).body);
    expect(schema.required).toEqual(expect.arrayContaining(['insured_name', 'driver_birth_date', 'postcode', 'formula']));
    const client = await test.post('/clients', { first_name: 'Jeanne', last_name: 'Martin' });
    const body = { compagnie: 'allianz', produit: 'auto', dicData: autoData(), client_id: client.body.id };
    const dry = await test.post('/automation/tarifications', { ...body, dry_run: true });
    expect(dry.body).toMatchObject({
      status: 'dry_run_ok',
      validation: { schema_ok: true, credentials_configured: true, would_cost_credits: 10 },
    });
    const enqueued = await test.post('/automation/tarifications', body);
    expect(enqueued.status).toBe(202);
    const job = await poll(test, String(enqueued.body.job_id), terminal);
    expect(job).toMatchObject({
      status: 'completed',
      compagnie: 'allianz',
      ran_on: 'sandbox',
      environment: 'test',
      credits_consumed: 10,
      progress: { percent: 100 },
    });
    expect(job.result?.tarif_eur).toBeGreaterThan(0);
    // Following the 302 to the signed link, as clients must.
    const pdf = await server.request(job.result?.pdf_url ?? '', {
      headers: { 'X-API-Key': server.createKey((await test.get('/me')).body.cabinet_id as string, { environment: 'test' }).key },
    });
    expect(pdf.status).toBe(200);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const premium = (job.result?.tarif_eur ?? 0).toFixed(2).replace('.', ',');
    expect(bytes.toString('latin1')).toContain(premium);
    const devis = await test.get(`/devis/${job.devis_id}`);
    expect(devis.body).toMatchObject({ status: 'priced', client_id: client.body.id, pdf_available: true });
    // Its browser only loads its portal's path on this service (its manifest's sandbox reach), and needs nothing else.
    expect(server.logs.filter((line) => line.includes(job.job_id) && line.includes('does not declare'))).toEqual([]);
  });

  it('an MFA account: the code is read from the sandbox phone and posted, and the job completes', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo-mfa', password: 'demo' });
    const before = (await phoneCodes()).length;
    const enqueued = await prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
    const waiting = await poll(prod, String(enqueued.body.job_id), (j) => j.status === 'mfa_required' || terminal(j));
    expect(waiting.status).toBe('mfa_required');
    expect(waiting.mfa?.challenge).toMatch(/6 chiffres/);
    const codes = await phoneCodes();
    expect(codes.length).toBe(before + 1);
    const answered = await prod.post(`/automation/jobs/${waiting.job_id}/mfa`, { code: codes[0] });
    expect(answered.status).toBe(200);
    const done = await poll(prod, waiting.job_id, terminal);
    expect(done).toMatchObject({ status: 'completed', ran_on: 'sandbox' });
  });

  it('the code is typed once: the login’s next job resumes its portal session, another cabinet or a changed password logs in afresh', async () => {
    const mfaJob = async (api: ReturnType<typeof apiClient>) => {
      const enqueued = await api.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
      const waiting = await poll(api, String(enqueued.body.job_id), (j) => j.status === 'mfa_required' || terminal(j));
      expect(waiting.status).toBe('mfa_required');
      const [code] = await phoneCodes();
      expect((await api.post(`/automation/jobs/${waiting.job_id}/mfa`, { code })).status).toBe(200);
      return poll(api, waiting.job_id, terminal);
    };
    // The password is read from the secret store only when the robot logs in.
    const secretsRead: string[] = [];
    const readSecret = server.deps.secrets.get.bind(server.deps.secrets);
    server.deps.secrets.get = (name) => {
      secretsRead.push(name);
      return readSecret(name);
    };
    const first = await cabinet();
    const firstPassword = `insurer-password:${first.id}:sandbox`;
    setInsurerCredentials(server.deps, first.id, 'sandbox', { login: 'demo-mfa', password: 'demo' });
    expect(await mfaJob(first.prod)).toMatchObject({ status: 'completed' });
    expect(secretsRead.filter((name) => name === firstPassword)).toHaveLength(1);

    const sent = (await phoneCodes()).length;
    const again = await first.prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
    expect(await poll(first.prod, String(again.body.job_id), terminal)).toMatchObject({ status: 'completed', ran_on: 'sandbox' });
    expect((await phoneCodes()).length).toBe(sent);
    // Resumed, still logged in: the password was not read again.
    expect(secretsRead.filter((name) => name === firstPassword)).toHaveLength(1);
    server.deps.secrets.get = readSecret;

    // Same portal account, other cabinet: its own login, its own code.
    const second = await cabinet();
    setInsurerCredentials(server.deps, second.id, 'sandbox', { login: 'demo-mfa', password: 'demo' });
    expect(await mfaJob(second.prod)).toMatchObject({ status: 'completed' });
    expect((await phoneCodes()).length).toBe(sent + 1);

    // A changed password is checked by the portal, not waved through by the open session.
    setInsurerCredentials(server.deps, first.id, 'sandbox', { login: 'demo-mfa', password: 'wrong' });
    const changed = await first.prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
    expect(await poll(first.prod, String(changed.body.job_id), terminal)).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_credentials' },
    });
  });

  it('a wrong password fails the job as a business failure, refunded: the insurer priced nothing', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'wrong' });
    const enqueued = await prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
    const job = await poll(prod, String(enqueued.body.job_id), terminal);
    expect(job).toMatchObject({ status: 'failed', credits_consumed: 0, error: { code: 'invalid_credentials', technical: false } });
    expect(creditBalance(server.deps, id)).toBe(200);
    expect(job.artifacts?.screenshot_url).toBe(`/api/v1/public/automation/jobs/${job.job_id}/artifacts/screenshot.png`);
    const shot = await server.request(job.artifacts?.screenshot_url ?? '', { headers: { 'X-API-Key': server.createKey(id).key } });
    expect(shot.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await shot.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    const trace = await server.request(job.artifacts?.trace_url ?? '', { headers: { 'X-API-Key': server.createKey(id).key } });
    expect(trace.status).toBe(200);
  });

  it('the portal down: failed, refunded, and the circuit breaker opens after 5', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'demo' });
    mode = 'down';
    try {
      for (let i = 0; i < 5; i++) {
        const enqueued = await prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
        expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
        const job = await poll(prod, String(enqueued.body.job_id), terminal);
        expect(job).toMatchObject({ status: 'failed', credits_consumed: 0, error: { code: 'insurer_unavailable', technical: true } });
      }
      const refused = await prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe('rpa_circuit_open');
    } finally {
      mode = 'normal';
      server.deps.db.sqlite.prepare(`DELETE FROM insurer_breakers WHERE compagnie = 'sandbox'`).run();
    }
  });

  it('cancel while the robot is on the form: the job is cancelled and refunded, its browser context closed', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'demo' });
    mode = 'slow';
    try {
      const enqueued = await prod.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: autoData() });
      const onForm = await poll(prod, String(enqueued.body.job_id), (j) => j.progress.percent >= 30 || terminal(j));
      expect(onForm.status).toBe('running');
      const cancelled = await prod.post(`/automation/jobs/${onForm.job_id}/cancel`);
      expect(cancelled.body).toMatchObject({ status: 'cancelled', credits_consumed: 0 });
      await server.app.robotWorker.idle();
      expect(jobSchema.parse((await prod.get(`/automation/jobs/${onForm.job_id}`)).body).status).toBe('cancelled');
    } finally {
      mode = 'normal';
    }
  });

  it('leaves no browser process behind once the service stops', async () => {
    const children = () =>
      execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => /chrom/i.test(l));
    expect(children().length).toBeGreaterThan(0);
    await server.close();
    server = undefined as unknown as TestServer;
    await new Promise((r) => setTimeout(r, 200));
    expect(children()).toEqual([]);
  });
});
