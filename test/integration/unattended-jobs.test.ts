import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchema, type Job } from '../../shared/automation.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { saveLoginTest } from '../../server/automation/store-guards.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { changeUnattendedHumanSteps, getCabinetSettings } from '../../server/tenancy/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, withHumanStep, type TestInsurer } from '../helpers/test-insurer.js';

/** A cabinet that said its integrations' jobs must not wait for a person: nobody is there at night. */
const clock = testClock();
let server: TestServer;
let insurer: TestInsurer;

beforeAll(async () => {
  insurer = createTestInsurer();
  server = await startTestServer({ clock, insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
});
afterAll(() => server.close());

async function cabinet(setting: 'wait' | 'stop') {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 100);
  setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-42', password: 's3cret!' });
  changeUnattendedHumanSteps(server.deps, id, setting, CLI_ACTOR);
  return { id, api: apiClient(server, server.createKey(id).key) };
}

let n = 0;
const request = () => ({
  compagnie: 'testco',
  produit: 'auto',
  dicData: { postcode: String(40000 + ++n), birth_date: '1984-03-09', formula: 'tiers' },
});

async function settled(api: ReturnType<typeof apiClient>, id: string, until: (job: Job) => boolean): Promise<Job> {
  server.app.robotWorker.tick();
  let job: Job | undefined;
  await expect
    .poll(async () => until((job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body))), { timeout: 10_000 })
    .toBe(true);
  return job!;
}

describe('jobs nobody follows', () => {
  it('stops an integration’s job at the step that needs a person, at once, refunded, without asking anyone', async () => {
    const { id, api } = await cabinet('stop');
    expect(getCabinetSettings(server.deps, id).unattended_human_steps).toBe('stop');
    insurer.queue(withHumanStep({ kind: 'otp', channel: 'sms', prompt: 'Code envoyé au 06 •• •• •• 42' }));
    const res = await api.post('/automation/tarifications', request());
    expect(res.status).toBe(202);
    const job = await settled(api, String(res.body.job_id), (j) => j.status === 'failed');
    expect(job.error).toMatchObject({ code: 'human_required', technical: true });
    expect(job.error?.message).toContain('otp_sms');
    expect(job.credits_consumed).toBe(0);
    expect(creditBalance(server.deps, id)).toBe(100);
    // Nobody was asked: no job.mfa_required event went out.
    expect(listEvents(server.deps, id).some((e) => e.type === 'job.mfa_required')).toBe(false);
  });

  it('lets a job a person enqueued (the console, an assistant) wait for its answer as always', async () => {
    const { id, api } = await cabinet('stop');
    insurer.queue(withHumanStep({ kind: 'app_approval', prompt: 'Validez dans l’application' }));
    const enqueued = enqueueTarification(server.deps, id, request(), 'prod');
    const job = await settled(api, enqueued.job_id, (j) => j.status === 'mfa_required');
    expect(job.mfa).toMatchObject({ kind: 'app_approval' });
    const answered = await api.post(`/automation/jobs/${job.job_id}/mfa`, { approved: true });
    expect(answered.status).toBe(200);
    await settled(api, job.job_id, (j) => j.status === 'completed');
  });

  it('does not even open a portal whose last login test asked for a code', async () => {
    const { id, api } = await cabinet('stop');
    saveLoginTest(server.deps.db.orm, {
      cabinetId: id,
      compagnie: 'testco',
      ok: true,
      mfaRequired: true,
      code: null,
      message: null,
      testedAt: clock.now(),
    });
    const runsBefore = insurer.runs.length;
    const res = await api.post('/automation/tarifications', request());
    const job = await settled(api, String(res.body.job_id), (j) => j.status === 'failed');
    expect(job.error).toMatchObject({ code: 'human_required', technical: true });
    expect(job.error?.message).toContain('the last login test said the portal asks for a code');
    expect(insurer.runs.length).toBe(runsBefore);
    expect(job.credits_consumed).toBe(0);
  });

  it('waits for a person on a cabinet that did not ask to stop (the default)', async () => {
    const { id, api } = await cabinet('wait');
    expect(getCabinetSettings(server.deps, id).unattended_human_steps).toBe('wait');
    insurer.queue(withHumanStep({ kind: 'otp', channel: 'sms', prompt: 'Code envoyé' }));
    const res = await api.post('/automation/tarifications', request());
    const job = await settled(api, String(res.body.job_id), (j) => j.status === 'mfa_required');
    expect(job.mfa).toMatchObject({ kind: 'otp', channel: 'sms' });
    await api.post(`/automation/jobs/${job.job_id}/cancel`, {});
  });
});
