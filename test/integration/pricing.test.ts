import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { automationStatusSchema, dryRunResultSchema, jobSchema, type Job } from '../../shared/automation.js';
import { productSchemaDocument } from '../../shared/products.js';
import { errorBodySchema } from '../../shared/errors.js';
import { jobCompletedPayload, jobFailedPayload, jobMfaRequiredPayload } from '../../shared/events.js';
import { setKillSwitch } from '../../server/automation/guards.js';
import { acknowledgeMfaPrompt } from '../../server/automation/job-controls.js';
import { jobRecords } from '../../server/automation/sync.js';
import { deleteInsurerCredentials, setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits, refundJob, walletConsistent } from '../../server/wallet/service.js';
import { lastLoginTests } from '../../server/automation/login-check.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, failWith, gated, succeed, TEST_PDF, withMfa, type TestInsurer } from '../helpers/test-insurer.js';

const clock = testClock();
let server: TestServer;
let insurer: TestInsurer;

beforeAll(async () => {
  insurer = createTestInsurer();
  server = await startTestServer({ clock, insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
});
afterAll(() => server.close());

/** A fresh cabinet per test: its own wallet, quota and replay history. */
async function cabinet(credits = 100, credentials = true) {
  const id = await server.createCabinet();
  if (credits > 0) grantCredits(server.deps, id, credits);
  if (credentials) setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-42', password: 's3cret!' });
  return { id, api: apiClient(server, server.createKey(id).key) };
}

let n = 0;
const dic = () => ({ postcode: '69003', birth_date: '1984-03-09', formula: 'tiers', n: undefined as number | undefined });
function request(extra: Record<string, unknown> = {}) {
  n += 1;
  // A distinct postcode per request keeps the replay guard out of tests that are not about it.
  return { compagnie: 'testco', produit: 'auto', dicData: { ...dic(), postcode: String(10000 + n) }, ...extra };
}

/** A server of its own whose quota is 2 an hour, with one cabinet that has credits and credentials; closed after `test`. */
async function onQuotaOfTwo(
  test: (api: ReturnType<typeof apiClient>, quotaServer: TestServer, cabinetId: string) => Promise<void>,
): Promise<void> {
  const quotaServer = await startTestServer({ clock, insurers: [createTestInsurer()], config: { tarificationQuotaPerHour: 2 } });
  try {
    const id = await quotaServer.createCabinet();
    grantCredits(quotaServer.deps, id, 100);
    setInsurerCredentials(quotaServer.deps, id, 'testco', { login: 'l', password: 'p' });
    await test(apiClient(quotaServer, quotaServer.createKey(id).key), quotaServer, id);
  } finally {
    await quotaServer.close();
  }
}

const worker = () => server.app.robotWorker;

async function job(api: ReturnType<typeof apiClient>, id: string): Promise<Job> {
  const res = await api.get(`/automation/jobs/${id}`);
  expect(res.status).toBe(200);
  return jobSchema.strict().parse(res.body);
}

/** Waits (bounded) until the worker has moved the job to a status, without guessing a delay. */
async function untilStatus(api: ReturnType<typeof apiClient>, id: string, status: Job['status']): Promise<Job> {
  for (let i = 0; i < 500; i++) {
    const current = await job(api, id);
    if (current.status === status) return current;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`job ${id} never reached ${status}`);
}

async function enqueue(api: ReturnType<typeof apiClient>, body = request(), headers: Record<string, string> = {}) {
  const res = await api.post('/automation/tarifications', body, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return String(res.body.job_id);
}

describe('catalogue', () => {
  it('lists products with the insurers offering them and their cost', async () => {
    const { api } = await cabinet();
    const res = await api.get('/produits-disponibles');
    expect(res.body).toEqual({
      data: [
        { code: 'auto', label: 'Assurance auto', kind: 'quote', cost_credits: 10, insurers: [{ code: 'testco', name: 'Test Assurances' }] },
        {
          code: 'attestation',
          label: 'Attestation d’assurance',
          kind: 'routine',
          cost_credits: 4,
          insurers: [{ code: 'testco', name: 'Test Assurances' }],
        },
      ],
    });
  });

  it('gives the JSON Schema, required fields, labels and an example of a product; 404 for unknowns', async () => {
    const { api } = await cabinet();
    const res = await api.get('/produits-disponibles/auto/schema?compagnie=testco');
    const doc = productSchemaDocument.strict().parse(res.body);
    expect(doc).toMatchObject({
      produit: 'auto',
      compagnie: 'testco',
      kind: 'quote',
      cost_credits: 10,
      required: ['postcode', 'birth_date'],
    });
    expect(doc.labels).toEqual({
      postcode: 'Code postal',
      birth_date: 'Date de naissance du conducteur',
      formula: 'Formule',
      insured_name: 'Nom de l’assuré',
    });
    expect(Object.keys(doc.json_schema.properties as object)).toEqual(['postcode', 'birth_date', 'formula', 'insured_name']);
    expect(doc.example).toEqual({ postcode: '69003', birth_date: '1984-03-09', formula: 'tiers' });
    expect((await api.get('/produits-disponibles/moto/schema?compagnie=testco')).body.error).toBe('unknown_product');
    expect((await api.get('/produits-disponibles/auto/schema?compagnie=nobody')).body.error).toBe('unknown_insurer');
    expect((await api.get('/produits-disponibles/auto/schema')).body.error).toBe('validation_error');
  });
});

describe('dry run', () => {
  it('answers exactly part 2.4 and costs and creates nothing', async () => {
    const { id, api } = await cabinet(100, false);
    const res = await api.post('/automation/tarifications', {
      compagnie: 'testco',
      produit: 'auto',
      dicData: { postcode: 'x' },
      dry_run: true,
    });
    expect(res.status).toBe(200);
    expect(dryRunResultSchema.strict().parse(res.body)).toEqual({
      job_id: null,
      status: 'dry_run_ok',
      validation: {
        schema_ok: false,
        missing_required_fields: ['birth_date'],
        quota: { remaining: 1000, limit: 1000 },
        credentials_configured: false,
        would_cost_credits: 10,
      },
      credits_consumed: 0,
    });
    const ok = await api.post('/automation/tarifications', { ...request(), dry_run: true });
    expect(ok.body).toMatchObject({ validation: { schema_ok: true, missing_required_fields: [] } });
    expect((await api.get('/wallet')).body.balance).toBe(100);
    expect((await api.get('/automation/jobs')).body.count).toBe(0);
    expect(listEvents(server.deps, id)).toHaveLength(0);
    // Only a malformed request body is a 400 in a dry run.
    expect((await api.post('/automation/tarifications', { compagnie: 'testco', dicData: {}, dry_run: true })).body.error).toBe(
      'validation_error',
    );
    expect(
      (await api.post('/automation/tarifications', { compagnie: 'testco', produit: 'auto', dicData: [], dry_run: true })).body.error,
    ).toBe('validation_error');
  });
});

describe('enqueue: every error of part 7, in order', () => {
  it('400 validation_error lists the missing dicData fields', async () => {
    const { api } = await cabinet();
    const res = await api.post('/automation/tarifications', { compagnie: 'testco', produit: 'auto', dicData: { formula: 'tiers' } });
    expect(res.status).toBe(400);
    expect((res.body.details as { path: string }[]).map((d) => d.path).sort()).toEqual([
      'body.dicData.birth_date',
      'body.dicData.postcode',
    ]);
  });

  it('503 api_rpa_temporarily_disabled while the kill switch is on', async () => {
    const { api } = await cabinet();
    setKillSwitch(server.deps, 'maintenance of the robots');
    try {
      const res = await api.post('/automation/tarifications', request());
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('api_rpa_temporarily_disabled');
      expect(res.body.message).toMatch(/maintenance/);
      const status = automationStatusSchema.parse((await api.get('/automation/status')).body);
      expect(status).toMatchObject({ robots_enabled: false, kill_switch: { reason: 'maintenance of the robots' } });
    } finally {
      setKillSwitch(server.deps, null);
    }
  });

  it('409 insurer_credentials_missing, 429 rpa_quota_exceeded, 429 rpa_replay_detected, 402 credits_exhausted', async () => {
    const noCredentials = await cabinet(100, false);
    const missing = await noCredentials.api.post('/automation/tarifications', request());
    expect(missing.status).toBe(409);
    expect(missing.body.error).toBe('insurer_credentials_missing');

    await onQuotaOfTwo(async (q) => {
      await enqueue(q, request());
      clock.advance(60_000);
      await enqueue(q, request());
      const over = await q.post('/automation/tarifications', request());
      expect(over.status).toBe(429);
      expect(over.body.error).toBe('rpa_quota_exceeded');
      expect((over.body.details as { reset_at: string }).reset_at).toBe(new Date(clock.now() - 60_000 + 3600_000).toISOString());
      expect((await q.post('/automation/tarifications', { ...request(), dry_run: true })).body).toMatchObject({
        validation: { quota: { remaining: 0, limit: 2 } },
      });
      clock.advance(3600_000 - 60_000 + 1);
      await enqueue(q, request());
    });

    const replay = await cabinet();
    const body = request();
    const first = await enqueue(replay.api, body, { 'Idempotency-Key': randomUUID() });
    clock.advance(120_000);
    const again = await replay.api.post('/automation/tarifications', body, { 'Idempotency-Key': randomUUID() });
    expect(again.status).toBe(429);
    expect(again.body.error).toBe('rpa_replay_detected');
    expect(again.body.details).toEqual({ retry_after_seconds: 480, job_id: first, job_status: expect.any(String) });
    expect(again.headers.get('retry-after')).toBe('480');
    clock.advance(480_000);
    await enqueue(replay.api, body, { 'Idempotency-Key': randomUUID() });

    const poor = await cabinet(9);
    const broke = await poor.api.post('/automation/tarifications', request());
    expect(broke.status).toBe(402);
    expect(broke.body).toMatchObject({ error: 'credits_exhausted', details: { required_credits: 10, balance: 9 } });
    expect((await poor.api.get('/automation/jobs')).body.count).toBe(0);
  });

  it('the hourly quota counts what this install enqueued: a job pulled from another install of the cabinet counts there', async () => {
    await onQuotaOfTwo(async (q, quotaServer, id) => {
      await enqueue(q, request());
      const now = clock.now();
      const pulled = {
        compagnie: 'testco',
        produit: 'auto',
        dic_data: '{}',
        request_hash: 'elsewhere',
        devis_id: randomUUID(),
        status: 'completed',
        progress_step: 'done',
      };
      const written = jobRecords.write(
        quotaServer.deps.db.orm,
        id,
        randomUUID(),
        {
          ...pulled,
          progress_percent: 100,
          cost_credits: 10,
          submitted: true,
          attempts: 1,
          created_at: now,
          updated_at: now,
          finished_at: now,
        },
        { blob: () => undefined, now, deps: quotaServer.deps },
      );
      expect(written).toBe(true);
      expect((await q.post('/automation/tarifications', { ...request(), dry_run: true })).body).toMatchObject({
        validation: { quota: { remaining: 1, limit: 2 } },
      });
      await enqueue(q, request());
      expect((await q.post('/automation/tarifications', request())).body.error).toBe('rpa_quota_exceeded');
    });
  });

  it('a job another install of the cabinet enqueued, synced here unfinished: the replay guard answers with it; cancel and codes are refused; no robot here takes it', async () => {
    await worker().idle();
    // The same request, enqueued in a cabinet of its own, gives the hash the other install computed.
    const body = request();
    const elsewhere = await cabinet();
    const first = await enqueue(elsewhere.api, body);
    const hash = String(
      server.withOtherConnection(
        (db) => (db.prepare('SELECT request_hash FROM jobs WHERE id = ?').get(first) as { request_hash: string }).request_hash,
      ),
    );
    await worker().idle();
    const runsBefore = insurer.runs.length;

    const { id, api } = await cabinet();
    const jobId = randomUUID();
    const now = clock.now();
    const pulled = {
      compagnie: 'testco',
      produit: 'auto',
      dic_data: JSON.stringify(body.dicData),
      request_hash: hash,
      devis_id: randomUUID(),
      status: 'mfa_required',
      progress_step: 'waiting for the MFA code',
      progress_percent: 15,
      cost_credits: 10,
      credits_consumed: null,
      result_tarif_cents: null,
      result_suspens: null,
      error_code: null,
      error_message: null,
      error_technical: null,
      submitted: false,
      attempts: 1,
      mfa_requested_at: now,
      mfa_expires_at: now + 60_000,
      environment: 'prod',
      robot_compagnie: 'testco',
      created_at: now - 60_000,
      updated_at: now,
      finished_at: null,
    };
    expect(
      jobRecords.refusal(server.deps.db.orm, id, { op: 'upsert', recordId: jobId, fields: pulled, deviceId: randomUUID() }),
    ).toBeNull();
    jobRecords.write(server.deps.db.orm, id, jobId, pulled, { blob: () => undefined, now, deps: server.deps });

    // Shown as it is there, with the cost that install's wallet was debited; no code prompt here.
    expect(await job(api, jobId)).toMatchObject({ status: 'mfa_required', credits_consumed: 10, mfa: null });
    const replay = await api.post('/automation/tarifications', body);
    expect(replay.status).toBe(429);
    expect(replay.body).toMatchObject({ error: 'rpa_replay_detected', details: { retry_after_seconds: 540, job_id: jobId } });
    for (const [path, payload] of [
      [`/automation/jobs/${jobId}/cancel`, undefined],
      [`/automation/jobs/${jobId}/mfa`, { code: '123456' }],
    ] as const) {
      const refused = await api.post(path, payload);
      expect(refused.status, path).toBe(409);
      expect(errorBodySchema.parse(refused.body)).toMatchObject({ error: 'job_runs_elsewhere', details: { status: 'mfa_required' } });
    }
    expect(() => acknowledgeMfaPrompt(server.deps, id, jobId)).toThrow(expect.objectContaining({ code: 'job_runs_elsewhere' }));
    await worker().idle();
    expect(insurer.runs.length).toBe(runsBefore);
    expect(await job(api, jobId)).toMatchObject({ status: 'mfa_required', progress: { percent: 15 } });
    expect((await api.get('/wallet')).body.balance).toBe(100);
  });

  it('402, then a grant, then the same Idempotency-Key succeeds (and replays)', async () => {
    const { id, api } = await cabinet(0);
    const key = randomUUID();
    const body = request();
    expect((await api.post('/automation/tarifications', body, { 'Idempotency-Key': key })).status).toBe(402);
    grantCredits(server.deps, id, 10);
    const ok = await api.post('/automation/tarifications', body, { 'Idempotency-Key': key });
    expect(ok.status).toBe(202);
    expect(ok.headers.get('location')).toBe(ok.body.poll_url);
    expect(ok.body).toEqual({
      job_id: expect.any(String),
      status: 'pending',
      poll_url: `/api/v1/public/automation/jobs/${String(ok.body.job_id)}`,
    });
    const replay = await api.post('/automation/tarifications', body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(ok.body);
    expect((await api.get('/wallet')).body.balance).toBe(0);
  });

  it('50 concurrent enqueues on a wallet for 7 quotes create exactly 7 jobs, and the ledger balances', async () => {
    const { id, api } = await cabinet(75);
    const results = await Promise.all(Array.from({ length: 50 }, () => api.post('/automation/tarifications', request())));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(7);
    expect(statuses.filter((s) => s === 402)).toHaveLength(43);
    const wallet = (await api.get('/wallet')).body as { balance: number; ledger: { kind: string; amount: number }[] };
    expect(wallet.balance).toBe(5);
    expect(wallet.ledger.filter((e) => e.kind === 'debit')).toHaveLength(7);
    expect(wallet.ledger.reduce((t, e) => t + e.amount, 0)).toBe(5);
    expect(walletConsistent(server.deps, id)).toBe(true);
    expect((await api.get('/automation/jobs?limit=100')).body.count).toBe(7);
  });
});

describe('running jobs', () => {
  beforeEach(async () => {
    await worker().idle();
  });

  it('pending → running → completed: a priced quote with its PDF, job.completed and devis.generated', async () => {
    const { id, api } = await cabinet();
    const client = await api.post('/clients', { last_name: 'Durand' });
    insurer.queue(succeed(612.4));
    const jobId = await enqueue(api, request({ client_id: client.body.id }));
    await worker().idle();
    const done = await job(api, jobId);
    expect(done).toMatchObject({
      status: 'completed',
      compagnie: 'testco',
      produit: 'auto',
      result: { tarif_eur: 612.4, suspens: 'Relevé d’information', pdf_url: `/api/v1/public/devis/${done.devis_id}/pdf` },
      progress: { step: 'done', percent: 100 },
      credits_consumed: 10,
      error: null,
    });
    expect(insurer.runs.at(-1)?.login).toBe('broker-42');
    const devis = await api.get(`/devis/${done.devis_id}`);
    expect(devis.body).toMatchObject({ status: 'priced', tarif_eur: 612.4, job_id: jobId, client_id: client.body.id, pdf_available: true });
    const pdf = await server.request(`/api/v1/public/devis/${done.devis_id}/pdf`, { headers: { 'X-API-Key': server.createKey(id).key } });
    expect(Buffer.from(await pdf.arrayBuffer())).toEqual(TEST_PDF);
    const events = listEvents(server.deps, id).map((e) => e.type);
    expect(events).toEqual(['job.completed', 'devis.generated']);
    expect(jobCompletedPayload.strict().parse(listEvents(server.deps, id)[0]?.data)).toMatchObject({
      job_id: jobId,
      status: 'completed',
      credits_consumed: 10,
    });
    // The signed quote can become a contract.
    expect((await api.post(`/devis/${done.devis_id}/sign`)).status).toBe(200);
  });

  it('lists jobs with status and created_after filters', async () => {
    const { api } = await cabinet();
    const first = await enqueue(api);
    await worker().idle();
    const pivot = (await job(api, first)).created_at;
    clock.advance(1000);
    const second = await enqueue(api);
    await worker().idle();
    const after = await api.get(`/automation/jobs?created_after=${encodeURIComponent(pivot)}`);
    expect((after.body.data as { job_id: string }[]).map((j) => j.job_id)).toEqual([second]);
    expect((await api.get('/automation/jobs?created_after=2099-01-01T00:00:00Z')).body.count).toBe(0);
    expect((await api.get('/automation/jobs?status=completed')).body.count).toBe(2);
    // Job and quote ids are UUIDv7: they start with their creation's milliseconds, so they sort as created.
    const millisOf = (uuid: string) => parseInt(uuid.replaceAll('-', '').slice(0, 12), 16);
    for (const jobId of [first, second]) {
      const { created_at, devis_id } = await job(api, jobId);
      expect(jobId[14]).toBe('7');
      expect([millisOf(jobId), millisOf(devis_id)]).toEqual([Date.parse(created_at), Date.parse(created_at)]);
    }
    expect(second > first).toBe(true);
  });

  it('partial when priced without a PDF', async () => {
    const { api } = await cabinet();
    insurer.queue(succeed(300, null));
    const jobId = await enqueue(api);
    await worker().idle();
    expect(await job(api, jobId)).toMatchObject({ status: 'partial', result: { tarif_eur: 300, pdf_url: null } });
  });

  it('a business refusal fails without refund; a technical failure is refunded, exactly once', async () => {
    const { id, api } = await cabinet(100);
    insurer.queue(failWith('business'), failWith('technical'));
    const business = await enqueue(api);
    const technical = await enqueue(api);
    await worker().idle();
    expect(await job(api, business)).toMatchObject({
      status: 'failed',
      credits_consumed: 10,
      error: { code: 'risk_declined', technical: false },
    });
    expect(await job(api, technical)).toMatchObject({
      status: 'failed',
      credits_consumed: 0,
      error: { code: 'portal_down', technical: true },
    });
    expect((await api.get('/wallet')).body.balance).toBe(90);
    expect(refundJob(server.deps, id, technical, 'again')).toBe(false);
    expect(refundJob(server.deps, id, business, 'business refunded by hand')).toBe(true);
    expect(refundJob(server.deps, id, business, 'twice')).toBe(false);
    expect(walletConsistent(server.deps, id)).toBe(true);
    expect((await api.get('/wallet')).body.balance).toBe(100);
    const failed = listEvents(server.deps, id).filter((e) => e.type === 'job.failed');
    expect(failed.map((e) => jobFailedPayload.parse(e.data).refunded)).toEqual([false, true]);
    const devis = await api.get(`/devis/${(await job(api, technical)).devis_id}`);
    expect(devis.body.status).toBe('failed');
    expect(listEvents(server.deps, id).filter((e) => e.type === 'devis.failed')).toHaveLength(2);
  });

  it('a login the portal refuses is refunded (nothing was priced), once, and counted by the breaker as a business refusal', async () => {
    const { id, api } = await cabinet(100);
    const breaker = async () =>
      automationStatusSchema.parse((await api.get('/automation/status')).body).breakers.find((b) => b.compagnie === 'testco')
        ?.consecutive_failures ?? 0;
    // A pricing: the cabinet's login works, and the Insurers page's login state says so.
    insurer.queue(succeed(300));
    await enqueue(api);
    await worker().idle();
    expect(lastLoginTests(server.deps, id).get('testco')).toMatchObject({ ok: true, code: null });
    // A technical failure: one failure in a row.
    insurer.queue(failWith('technical'));
    await enqueue(api);
    await worker().idle();
    expect(await breaker()).toBeGreaterThan(0);
    insurer.queue(failWith('business', 'invalid_credentials'));
    const refused = await enqueue(api);
    await worker().idle();
    expect(await job(api, refused)).toMatchObject({
      status: 'failed',
      credits_consumed: 0,
      error: { code: 'invalid_credentials', technical: false },
    });
    expect((await api.get('/wallet')).body.balance).toBe(90);
    expect(refundJob(server.deps, id, refused, 'again')).toBe(false);
    expect(lastLoginTests(server.deps, id).get('testco')).toMatchObject({ ok: false, code: 'invalid_credentials' });
    expect(walletConsistent(server.deps, id)).toBe(true);
    const failed = listEvents(server.deps, id).filter((e) => e.type === 'job.failed');
    expect(failed.map((e) => jobFailedPayload.parse(e.data).refunded)).toEqual([true, true]);
    // Counted as every business refusal: the portal answered, so the failures in a row start again.
    expect(await breaker()).toBe(0);
  });

  it('credentials removed after the enqueue, or their password when the robot logs in: insurer_credentials_missing, refunded, not counted by the breaker', async () => {
    const { id, api } = await cabinet(100);
    const breaker = async () =>
      automationStatusSchema.parse((await api.get('/automation/status')).body).breakers.find((b) => b.compagnie === 'testco')
        ?.consecutive_failures ?? 0;
    const failuresBefore = await breaker();
    const missing = { status: 'failed', credits_consumed: 0, error: { code: 'insurer_credentials_missing', technical: true } };

    await worker().stop();
    const removed = await enqueue(api);
    deleteInsurerCredentials(server.deps, id, 'testco');
    worker().start();
    await worker().idle();
    expect(await job(api, removed)).toMatchObject(missing);

    // The login is still there, the password is not: the robot finds out when it reads it to log in.
    setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-42', password: 's3cret!' });
    await worker().stop();
    const passwordGone = await enqueue(api);
    server.deps.secrets.delete(`insurer-password:${id}:testco`);
    worker().start();
    await worker().idle();
    expect(await job(api, passwordGone)).toMatchObject(missing);

    expect((await api.get('/wallet')).body.balance).toBe(100);
    expect(await breaker()).toBe(failuresBefore);
  });

  it('MFA: the job pauses, the code typed by a person reaches the robot, and the job completes', async () => {
    const { id, api } = await cabinet();
    insurer.queue(withMfa());
    const jobId = await enqueue(api);
    worker().tick();
    const waiting = await untilStatus(api, jobId, 'mfa_required');
    expect(waiting).toMatchObject({ status: 'mfa_required', mfa: { challenge: 'Code sent by SMS to 06 •• •• •• 42' } });
    const event = listEvents(server.deps, id).find((e) => e.type === 'job.mfa_required');
    expect(jobMfaRequiredPayload.parse(event?.data)).toMatchObject({ job_id: jobId, challenge: 'Code sent by SMS to 06 •• •• •• 42' });
    expect(acknowledgeMfaPrompt(server.deps, id, jobId).status).toBe('awaiting_mfa');
    const answered = await api.post(`/automation/jobs/${jobId}/mfa`, { code: '777' });
    expect(answered.status).toBe(200);
    await worker().idle();
    expect(await job(api, jobId)).toMatchObject({ status: 'completed', result: { tarif_eur: 777 }, mfa: null });
    const late = await api.post(`/automation/jobs/${jobId}/mfa`, { code: '1' });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('job_not_awaiting_mfa');
  });

  it('MFA timeout: no code within 5 minutes fails the job with mfa_timeout, refunded', async () => {
    const { api } = await cabinet();
    insurer.queue(withMfa());
    const jobId = await enqueue(api);
    worker().tick();
    await untilStatus(api, jobId, 'mfa_required');
    clock.advance(5 * 60_000 - 1000);
    worker().tick();
    expect((await job(api, jobId)).status).toBe('mfa_required');
    clock.advance(1000);
    await worker().idle();
    expect(await job(api, jobId)).toMatchObject({ status: 'failed', credits_consumed: 0, error: { code: 'mfa_timeout', technical: true } });
  });

  it('cancel: pending, running (the robot is aborted), waiting for MFA; refunded; a finished job is 409', async () => {
    const { api } = await cabinet(100);
    const gate = gated();
    insurer.queue(gate.script);
    const running = await enqueue(api);
    worker().tick();
    await gate.entered;
    expect((await job(api, running)).status).toBe('running');
    // The login is busy, so this one stays pending.
    const pending = await enqueue(api);
    worker().tick();
    expect((await job(api, pending)).status).toBe('pending');
    const cancelled = await api.post(`/automation/jobs/${pending}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', credits_consumed: 0 });

    expect((await api.post(`/automation/jobs/${running}/cancel`)).body).toMatchObject({ status: 'cancelled', credits_consumed: 0 });
    expect(insurer.runs.at(-1)?.signal.aborted).toBe(true);
    await worker().idle();
    expect((await job(api, running)).status).toBe('cancelled');

    insurer.queue(withMfa());
    const mfa = await enqueue(api);
    worker().tick();
    await untilStatus(api, mfa, 'mfa_required');
    expect((await api.post(`/automation/jobs/${mfa}/cancel`)).body).toMatchObject({ status: 'cancelled' });
    await worker().idle();

    const finished = await enqueue(api);
    await worker().idle();
    const refused = await api.post(`/automation/jobs/${finished}/cancel`);
    expect(refused.status).toBe(409);
    expect(errorBodySchema.parse(refused.body).error).toBe('job_not_cancellable');
    expect((await api.get('/wallet')).body.balance).toBe(90);
  });

  it('the circuit breaker opens after 5 technical failures, for 10 minutes, then lets one trial job through', async () => {
    const { api } = await cabinet(200);
    insurer.queue(...Array.from({ length: 5 }, () => failWith('technical')));
    for (let i = 0; i < 5; i++) await enqueue(api);
    await worker().idle();
    const open = await api.post('/automation/tarifications', request());
    expect(open.status).toBe(503);
    expect(open.body).toMatchObject({ error: 'rpa_circuit_open', details: { retry_after_seconds: 600 } });
    const status = automationStatusSchema.parse((await api.get('/automation/status')).body);
    expect(status.breakers.find((b) => b.compagnie === 'testco')).toMatchObject({ state: 'open', consecutive_failures: 5 });

    clock.advance(10 * 60_000);
    const gate = gated();
    insurer.queue(gate.script);
    const trial = await enqueue(api);
    expect((await api.post('/automation/tarifications', request())).body.error).toBe('rpa_circuit_open');
    worker().tick();
    await gate.entered;
    gate.open();
    await worker().idle();
    expect((await job(api, trial)).status).toBe('completed');
    await enqueue(api);
    await worker().idle();
  });

  it('at most one robot per insurer login at a time', async () => {
    const { api } = await cabinet(100);
    const first = gated();
    insurer.queue(first.script);
    const a = await enqueue(api);
    const b = await enqueue(api);
    worker().tick();
    await first.entered;
    worker().tick();
    expect((await job(api, a)).status).toBe('running');
    expect((await job(api, b)).status).toBe('pending');
    first.open();
    await worker().idle();
    expect((await job(api, b)).status).toBe('completed');
  });

  it('callback_webhook_id receives the terminal event even without subscribing to it', async () => {
    const { id, api } = await cabinet();
    const hook = await api.post('/webhooks', { url: 'https://hooks.example.com/courtier', events: ['opportunity.created'] });
    const jobId = await enqueue(api, request({ callback_webhook_id: hook.body.id }));
    await worker().idle();
    const rows = server.deps.db.sqlite.prepare('SELECT event_type FROM webhook_deliveries WHERE subscription_id = ?').all(hook.body.id);
    expect(rows).toEqual([{ event_type: 'job.completed' }]);
    expect(listEvents(server.deps, id).some((e) => e.type === 'job.completed' && e.data.job_id === jobId)).toBe(true);
    const bad = await api.post('/automation/tarifications', request({ callback_webhook_id: randomUUID() }));
    expect(bad.body.details).toEqual([{ path: 'body.callback_webhook_id', message: expect.any(String) }]);
  });
});

describe('the adapter a job ran with', () => {
  it('is recorded when a robot takes the job: none while it waits; a reload of the insurers before its run records the version that ran', async () => {
    /** A release of the test insurer's adapter, noting the jobs its robot ran. */
    const ranWith = new Map<string, string>();
    const release = (version: string): TestInsurer => {
      const adapter = createTestInsurer();
      return {
        ...adapter,
        version,
        run: (ctx, input) => {
          ranWith.set(ctx.jobId, version);
          return adapter.run(ctx, input);
        },
      };
    };
    const first = release('2.4.1');
    const reloaded = await startTestServer({ clock, insurers: [first], config: { tarificationQuotaPerHour: 1000 } });
    try {
      const id = await reloaded.createCabinet();
      grantCredits(reloaded.deps, id, 100);
      setInsurerCredentials(reloaded.deps, id, 'testco', { login: 'broker-42', password: 's3cret!' });
      const api = apiClient(reloaded, reloaded.createKey(id).key);
      const gate = gated();
      first.queue(gate.script);
      const running = await enqueue(api);
      await gate.entered;
      // The login is busy: this job waits, and no robot has taken it.
      const waiting = await enqueue(api);
      expect(await job(api, running)).toMatchObject({ status: 'running', adapter: { code: 'testco', version: '2.4.1' } });
      expect(await job(api, waiting)).toMatchObject({ status: 'pending', adapter: null });

      // A new release of the adapter is loaded while one job runs and the other waits.
      reloaded.deps.insurers.replace([release('2.5.0')]);
      gate.open();
      await reloaded.app.robotWorker.idle();
      expect(Object.fromEntries(ranWith)).toEqual({ [running]: '2.4.1', [waiting]: '2.5.0' });
      expect(await job(api, running)).toMatchObject({ status: 'completed', adapter: { code: 'testco', version: '2.4.1' } });
      expect(await job(api, waiting)).toMatchObject({ status: 'completed', adapter: { code: 'testco', version: '2.5.0' } });
      const listed = (await api.get('/automation/jobs')).body.data as Job[];
      // Both were made at the test clock's same instant: the list's order between them is not the point.
      expect(Object.fromEntries(listed.map((j) => [j.job_id, j.adapter?.version]))).toEqual({ [waiting]: '2.5.0', [running]: '2.4.1' });
    } finally {
      await reloaded.close();
    }
  });
});

describe('test keys', () => {
  it('price on the demo insurer the install offers, whatever its code, logging in with its demo account when none is set', async () => {
    const demo: TestInsurer = { ...createTestInsurer('demo-assur', 'Démo Assurances') };
    const withDemo = { ...demo, testKeys: { demoCredentials: { login: 'demo-login', password: 'demo-password', extra: {} } } };
    const demoServer = await startTestServer({ clock, insurers: [insurer, withDemo], config: { tarificationQuotaPerHour: 1000 } });
    try {
      const id = await demoServer.createCabinet();
      grantCredits(demoServer.deps, id, 10);
      const api = apiClient(demoServer, demoServer.createKey(id, { environment: 'test' }).key);
      // compagnie names the real insurer; a test key's job runs on the demo one.
      const jobId = await enqueue(api, request());
      const done = await untilStatus(api, jobId, 'completed');
      expect(done.status).toBe('completed');
      expect(done.adapter).toEqual({ code: 'demo-assur', version: '1.0.0' });
      expect(demo.runs.map((run) => run.login)).toEqual(['demo-login']);
      expect(insurer.runs.some((run) => run.login === 'demo-login')).toBe(false);
    } finally {
      await demoServer.close();
    }
  });

  it('are refused with a clear message on an install without a demo insurer', async () => {
    const id = await server.createCabinet();
    grantCredits(server.deps, id, 10);
    const api = apiClient(server, server.createKey(id, { environment: 'test' }).key);
    const refused = await api.post('/automation/tarifications', request());
    expect(refused.status).toBe(404);
    expect(errorBodySchema.parse(refused.body)).toMatchObject({
      error: 'unknown_insurer',
      message: 'Test keys run on the demo insurers, which this install does not offer (COURTIER_SANDBOX=false turns them off).',
    });
  });
});
