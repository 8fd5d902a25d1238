import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { enqueuedSchema, shortJobReference } from '../../shared/automation.js';
import { consoleJobDetailSchema, consoleJobPageSchema, type ConsoleJobDetail } from '../../shared/console-automation.js';
import { consoleInsurerListSchema } from '../../shared/console-insurers.js';
import { jobRecords } from '../../server/automation/sync.js';
import { createClient } from '../../server/crm/clients.js';
import { creditBalance } from '../../server/wallet/service.js';
import { expectErrorResponse, json } from '../helpers/api.js';
import { useAutomationServer } from '../helpers/automation-server.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser } from '../helpers/oauth.js';
import { failWith, succeed } from '../helpers/test-insurer.js';

/**
 * The console's jobs as a broker needs them, over real HTTP: who each job is for (the linked client
 * or the insured of dicData), the product's label, the credits debited and refunded, search by name
 * or reference, one job with its inputs and timeline, Retry of a failed job, and the last insurer
 * login test kept across reloads.
 */

const app = useAutomationServer();
const { insurer, cabinet, request } = app;

async function enqueue(client: ConsoleClient, body = request()): Promise<string> {
  const res = await client.request('/api/v1/console/tarifications', { method: 'POST', json: body });
  expect(res.status).toBe(202);
  return enqueuedSchema.parse(await json(res)).job_id;
}

async function detail(client: ConsoleClient, id: string): Promise<ConsoleJobDetail> {
  const res = await client.request(`/api/v1/console/jobs/${id}`);
  expect(res.status).toBe(200);
  return consoleJobDetailSchema.parse(await json(res));
}

async function until(client: ConsoleClient, id: string, done: (job: ConsoleJobDetail) => boolean): Promise<ConsoleJobDetail> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = await detail(client, id);
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const finished = (job: ConsoleJobDetail) => ['completed', 'partial', 'failed', 'cancelled'].includes(job.status);

async function search(client: ConsoleClient, q: string) {
  const res = await client.request(`/api/v1/console/jobs?q=${encodeURIComponent(q)}`);
  expect(res.status).toBe(200);
  return consoleJobPageSchema.parse(await json(res)).data;
}

describe('jobs name who they are for', () => {
  it('the linked client’s name, else the insured of dicData; the product’s label and the insurer’s name', async () => {
    const cab = await cabinet();
    const client = createClient(app.server.deps, cab.user.cabinetId, { type: 'person', first_name: 'Jeanne', last_name: 'Dupont' });
    insurer.queue(succeed(512.3), succeed(320));
    const linked = await until(cab.admin, await enqueue(cab.admin, request({ client_id: client.client_id })), finished);
    const named = await until(cab.admin, await enqueue(cab.admin, request({}, { insured_name: 'Marc Lefèvre' })), finished);
    expect(linked).toMatchObject({
      insured: 'Jeanne Dupont',
      client_id: client.client_id,
      product_label: 'Assurance auto',
      insurer_name: 'Test Assurances',
    });
    expect(named).toMatchObject({ insured: 'Marc Lefèvre', client_id: null });
    const list = consoleJobPageSchema.parse(await json(await cab.admin.request('/api/v1/console/jobs'))).data;
    expect(list.map((j) => j.insured)).toEqual(['Marc Lefèvre', 'Jeanne Dupont']);
    // The client's name finds the job whose data names nobody.
    expect((await search(cab.admin, 'jeanne')).map((j) => j.job_id)).toEqual([linked.job_id]);
  });

  it('search by any part of the name (any case), by a reference or its end; LIKE’s wildcards are plain characters', async () => {
    const cab = await cabinet();
    insurer.queue(succeed(), succeed(), succeed());
    const dupont = await enqueue(cab.admin, request({}, { insured_name: 'Jean Dupont' }));
    const martin = await enqueue(cab.admin, request({}, { insured_name: 'Lucie Martin' }));
    await enqueue(cab.admin, request({}, { insured_name: '100% Durand' }));
    expect((await search(cab.admin, 'dupo')).map((j) => j.job_id)).toEqual([dupont]);
    expect((await search(cab.admin, 'MARTIN')).map((j) => j.job_id)).toEqual([martin]);
    // The console names a job by the end of its id (its start is the creation time, shared by the jobs of a minute).
    expect((await search(cab.admin, shortJobReference(martin))).map((j) => j.job_id)).toEqual([martin]);
    expect((await search(cab.admin, martin)).map((j) => j.job_id)).toEqual([martin]);
    expect((await search(cab.admin, '%')).map((j) => j.insured)).toEqual(['100% Durand']);
    expect(await search(cab.admin, '_')).toEqual([]);
    expect(await search(cab.admin, 'nobody')).toEqual([]);
  });

  it('refuses an empty or overlong search with a clear 400', async () => {
    const cab = await cabinet(0);
    await expectErrorResponse(await cab.admin.request('/api/v1/console/jobs?q='), 400, 'validation_error');
    await expectErrorResponse(await cab.admin.request(`/api/v1/console/jobs?q=${'a'.repeat(101)}`), 400, 'validation_error');
  });
});

describe('one job', () => {
  it('its inputs and its steps, oldest first, with their times', async () => {
    const cab = await cabinet();
    insurer.queue(async (ctx) => {
      ctx.progress('logging in', 20);
      ctx.progress('pricing', 70);
      return succeed(410)(ctx, { produit: 'auto', dicData: {} });
    });
    const job = await until(cab.admin, await enqueue(cab.admin, request({}, { insured_name: 'Paul Roux' })), finished);
    expect(job.dicData).toMatchObject({ insured_name: 'Paul Roux', formula: 'tiers' });
    expect(job.steps.map((s) => [s.status, s.step, s.percent])).toEqual([
      ['pending', 'queued', 0],
      ['running', 'queued', 0],
      ['running', 'logging in', 20],
      ['running', 'pricing', 70],
      ['running', 'login', 10],
      ['running', 'pricing form', 50],
      ['running', 'reading the result', 90],
      ['completed', 'done', 100],
    ]);
    expect(job.steps.every((s, i) => i === 0 || s.at >= job.steps[i - 1]!.at)).toBe(true);
    expect(job).toMatchObject({ retryable: false, credits: { cost: 10, debited: 10, refunded: 0 } });
  });

  it('a technical failure shows its refund, a business refusal shows none', async () => {
    const cab = await cabinet();
    insurer.queue(failWith('technical'), failWith('business'));
    const technical = await until(cab.admin, await enqueue(cab.admin), finished);
    const business = await until(cab.admin, await enqueue(cab.admin), finished);
    expect(technical).toMatchObject({ status: 'failed', retryable: true, credits: { debited: 10, refunded: 10 } });
    expect(business).toMatchObject({ status: 'failed', retryable: true, credits: { debited: 10, refunded: 0 } });
  });

  it('started on another computer of the cabinet and running there: marked so, with its cost; cancel and codes are refused here; a job of this computer is not', async () => {
    const cab = await cabinet();
    insurer.queue(succeed());
    const own = await until(cab.admin, await enqueue(cab.admin), finished);
    const jobId = randomUUID();
    const now = Date.now();
    jobRecords.write(
      app.server.deps.db.orm,
      cab.user.cabinetId,
      jobId,
      {
        compagnie: 'testco',
        produit: 'auto',
        dic_data: JSON.stringify({ postcode: '69003', birth_date: '1984-03-09', formula: 'tiers', insured_name: 'Léa Blanc' }),
        request_hash: 'c'.repeat(64),
        devis_id: randomUUID(),
        status: 'running',
        progress_step: 'logging in',
        progress_percent: 10,
        cost_credits: 10,
        submitted: false,
        attempts: 1,
        environment: 'prod',
        robot_compagnie: 'testco',
        created_at: now,
        updated_at: now,
      },
      { blob: () => undefined, now, deps: app.server.deps },
    );
    const elsewhere = await detail(cab.admin, jobId);
    expect(elsewhere).toMatchObject({
      elsewhere: true,
      status: 'running',
      insured: 'Léa Blanc',
      steps: [],
      retryable: false,
      credits: { cost: 10, debited: 10, refunded: 0 },
    });
    expect(own.elsewhere).toBe(false);
    const listed = consoleJobPageSchema.parse(await json(await cab.admin.request('/api/v1/console/jobs')));
    expect(listed.data.map((job) => [job.job_id, job.elsewhere])).toEqual([
      [jobId, true],
      [own.job_id, false],
    ]);
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${jobId}/cancel`, { method: 'POST' }),
      409,
      'job_runs_elsewhere',
    );
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${jobId}/mfa`, { method: 'POST', json: { code: '123456' } }),
      409,
      'job_runs_elsewhere',
    );
    expect((await detail(cab.admin, jobId)).status).toBe('running');
  });

  it('is another cabinet’s: 404', async () => {
    const mine = await cabinet();
    const theirs = await cabinet(0);
    insurer.queue(succeed());
    const id = await enqueue(mine.admin);
    await expectErrorResponse(await theirs.admin.request(`/api/v1/console/jobs/${id}`), 404, 'not_found');
    await expectErrorResponse(await theirs.admin.request(`/api/v1/console/jobs/${id}/retry`, { method: 'POST' }), 404, 'not_found');
  });
});

describe('Retry', () => {
  it('prices a failed job again: a new job with the same data and client, charged again; a second Retry meanwhile is a replay', async () => {
    const cab = await cabinet();
    const client = createClient(app.server.deps, cab.user.cabinetId, { type: 'company', company_name: 'Garage Moreau' });
    insurer.queue(failWith('business'));
    const failed = await until(cab.admin, await enqueue(cab.admin, request({ client_id: client.client_id })), finished);
    const before = creditBalance(app.server.deps, cab.user.cabinetId);

    insurer.queue(succeed(777));
    const res = await cab.admin.request(`/api/v1/console/jobs/${failed.job_id}/retry`, { method: 'POST' });
    expect(res.status).toBe(202);
    const retried = enqueuedSchema.parse(await json(res));
    expect(res.headers.get('location')).toBe(`/api/v1/console/jobs/${retried.job_id}`);
    expect(retried.job_id).not.toBe(failed.job_id);
    expect(creditBalance(app.server.deps, cab.user.cabinetId)).toBe(before - 10);

    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${failed.job_id}/retry`, { method: 'POST' }),
      429,
      'rpa_replay_detected',
    );
    const done = await until(cab.admin, retried.job_id, finished);
    expect(done).toMatchObject({ status: 'completed', insured: 'Garage Moreau', client_id: client.client_id, dicData: failed.dicData });
    expect(done.devis_id).not.toBe(failed.devis_id);
  });

  it('refuses a job that is not failed or cancelled (409), and one that does not exist (404)', async () => {
    const cab = await cabinet();
    insurer.queue(succeed());
    const done = await until(cab.admin, await enqueue(cab.admin), finished);
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${done.job_id}/retry`, { method: 'POST' }),
      409,
      'job_not_retryable',
    );
    await expectErrorResponse(await cab.admin.request(`/api/v1/console/jobs/${randomUUID()}/retry`, { method: 'POST' }), 404, 'not_found');
    await expectErrorResponse(
      await cab.admin.request('/api/v1/console/jobs/not-a-uuid/retry', { method: 'POST' }),
      400,
      'validation_error',
    );
  });

  it('with an empty wallet: 402 and no job', async () => {
    const cab = await cabinet(10);
    insurer.queue(failWith('business'));
    const failed = await until(cab.admin, await enqueue(cab.admin), finished);
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${failed.job_id}/retry`, { method: 'POST' }),
      402,
      'credits_exhausted',
    );
    const list = consoleJobPageSchema.parse(await json(await cab.admin.request('/api/v1/console/jobs'))).data;
    expect(list).toHaveLength(1);
  });
});

describe('the insurer’s login status', { tags: ['browser'] }, () => {
  it('keeps the last test across reloads, and forgets it when the login changes', async () => {
    const user = await createUser(app.server, `Cabinet ${randomUUID().slice(0, 6)}`);
    const admin = await consoleClient(app.server, user);
    const sandbox = async () =>
      consoleInsurerListSchema.parse(await json(await admin.request('/api/v1/console/insurers'))).data.find((i) => i.code === 'sandbox');
    const put = (login: string, password: string) =>
      admin.request('/api/v1/console/insurers/sandbox/credentials', { method: 'PUT', json: { login, password } });

    expect((await put('demo', 'wrong')).status).toBe(200);
    expect((await sandbox())?.last_login_test).toBeNull();
    expect((await admin.request('/api/v1/console/insurers/sandbox/test-login', { method: 'POST' })).status).toBe(200);
    expect((await sandbox())?.last_login_test).toMatchObject({ ok: false, code: 'invalid_credentials' });

    expect((await put('demo', 'demo')).status).toBe(200);
    expect((await sandbox())?.last_login_test).toBeNull();
    expect((await admin.request('/api/v1/console/insurers/sandbox/test-login', { method: 'POST' })).status).toBe(200);
    expect((await sandbox())?.last_login_test).toMatchObject({ ok: true, mfa_required: false, code: null });

    expect((await admin.request('/api/v1/console/insurers/sandbox/credentials', { method: 'DELETE' })).status).toBe(204);
    expect((await sandbox())?.last_login_test).toBeNull();
  });
});
