import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HumanStep } from '@courtier/adapter-kit';
import { jobSchema, type Job } from '../../shared/automation.js';
import { jobMfaRequiredPayload } from '../../shared/events.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient, expectError } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, withHumanStep, type TestInsurer } from '../helpers/test-insurer.js';

const clock = testClock();
let server: TestServer;
let insurer: TestInsurer;
let api: ReturnType<typeof apiClient>;
let cabinetId: string;

beforeAll(async () => {
  insurer = createTestInsurer();
  server = await startTestServer({ clock, insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
  cabinetId = await server.createCabinet();
  grantCredits(server.deps, cabinetId, 100);
  setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker-42', password: 's3cret!' });
  api = apiClient(server, server.createKey(cabinetId).key);
});
afterAll(() => server.close());

// A 1×1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6300010000050001' +
    '0d0a2db40000000049454e44ae426082',
  'hex',
);
const CHOICES = [
  { value: 'garage', label: 'Garage fermé' },
  { value: 'street', label: 'Dans la rue' },
];

let n = 0;
async function jobWaitingFor(step: HumanStep): Promise<Job> {
  insurer.queue(withHumanStep(step));
  n += 1;
  const dicData = { postcode: String(20000 + n), birth_date: '1984-03-09', formula: 'tiers' };
  const res = await api.post('/automation/tarifications', { compagnie: 'testco', produit: 'auto', dicData });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const id = String(res.body.job_id);
  server.app.robotWorker.tick();
  for (let i = 0; i < 500; i++) {
    const job = jobSchema.strict().parse((await api.get(`/automation/jobs/${id}`)).body);
    if (job.status === 'mfa_required') return job;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`job ${id} never waited for a person`);
}

async function answered(job: Job, body: unknown): Promise<Job> {
  const res = await api.post(`/automation/jobs/${job.job_id}/mfa`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await server.app.robotWorker.idle();
  return jobSchema.parse((await api.get(`/automation/jobs/${job.job_id}`)).body);
}

/** A wrong answer is refused with 400 and leaves the job as it was, still waiting. */
async function refused(job: Job, body: unknown, code: 'mfa_answer_mismatch' | 'validation_error'): Promise<void> {
  const res = await api.post(`/automation/jobs/${job.job_id}/mfa`, body);
  expectError(res, 400, code);
  expect((await api.get(`/automation/jobs/${job.job_id}`)).body).toEqual(job);
}

describe('human steps through the REST API', () => {
  it('a one-time code by e-mail: the job says the kind and the channel, the webhook the kind; {code} answers it', async () => {
    const job = await jobWaitingFor({ kind: 'otp', channel: 'email', prompt: 'Code sent to j•••@cabinet.fr' });
    expect(job.mfa).toMatchObject({
      kind: 'otp',
      channel: 'email',
      challenge: 'Code sent to j•••@cabinet.fr',
      choices: null,
      image_url: null,
    });
    const event = listEvents(server.deps, cabinetId).find(
      (e) => e.type === 'job.mfa_required' && (e.data as { job_id: string }).job_id === job.job_id,
    );
    expect(jobMfaRequiredPayload.parse(event?.data)).toMatchObject({ kind: 'otp' });
    await refused(job, { approved: true }, 'mfa_answer_mismatch');
    expect(await answered(job, { code: '4321' })).toMatchObject({ status: 'completed', mfa: null, result: { suspens: 'answer: 4321' } });
  });

  it('an approval in the insurer’s app: {approved: true} resumes the robot, a code does not fit', async () => {
    const job = await jobWaitingFor({ kind: 'app_approval', prompt: 'Approve the sign-in in the AXA app' });
    expect(job.mfa).toMatchObject({ kind: 'app_approval', channel: null, choices: null, image_url: null });
    await refused(job, { code: '1234' }, 'mfa_answer_mismatch');
    await refused(job, { approved: false }, 'validation_error');
    expect(await answered(job, { approved: true })).toMatchObject({ status: 'completed', result: { suspens: 'answer: true' } });
  });

  it('a captcha: its image is served while the job waits, then 404; {code} carries its text', async () => {
    const job = await jobWaitingFor({
      kind: 'captcha',
      prompt: 'Type the characters',
      image: { mime: 'image/png', base64: PNG.toString('base64') },
    });
    expect(job.mfa).toMatchObject({ kind: 'captcha', image_url: `/api/v1/public/automation/jobs/${job.job_id}/mfa/image` });
    const image = await server.request(job.mfa!.image_url!, { headers: { 'X-API-Key': server.createKey(cabinetId).key } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);
    const otherCabinet = await server.createCabinet();
    const stranger = await server.request(job.mfa!.image_url!, { headers: { 'X-API-Key': server.createKey(otherCabinet).key } });
    expect(stranger.status).toBe(404);
    await refused(job, { answer: 'x7kq' }, 'mfa_answer_mismatch');
    expect(await answered(job, { code: 'x7kq' })).toMatchObject({ status: 'completed', result: { suspens: 'answer: x7kq' } });
    expect((await api.get(`/automation/jobs/${job.job_id}/mfa/image`)).status).toBe(404);
  });

  it('a question with choices: one of the values answers it; another value is 400 and the job keeps waiting', async () => {
    const job = await jobWaitingFor({ kind: 'question', prompt: 'Where is the car parked at night?', choices: CHOICES });
    expect(job.mfa).toMatchObject({ kind: 'question', choices: CHOICES, channel: null, image_url: null });
    await refused(job, { answer: 'parking' }, 'mfa_answer_mismatch');
    await refused(job, { code: 'garage' }, 'mfa_answer_mismatch');
    expect(await answered(job, { answer: 'garage' })).toMatchObject({ status: 'completed', result: { suspens: 'answer: garage' } });
  });

  it('a free-text question: any {answer} goes to the robot', async () => {
    const job = await jobWaitingFor({ kind: 'question', prompt: 'Previous insurer?' });
    expect(job.mfa).toMatchObject({ kind: 'question', choices: null });
    await refused(job, { answer: '   ' }, 'validation_error');
    expect(await answered(job, { answer: 'MAIF' })).toMatchObject({ status: 'completed', result: { suspens: 'answer: MAIF' } });
  });
});
