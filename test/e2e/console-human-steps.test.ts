// @module-tag browser
import { describe, expect, it } from 'vitest';
import type { HumanStep } from '@courtier/adapter-kit';
import { jobSchema, type Job } from '../../shared/automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser } from '../helpers/oauth.js';
import { createTestInsurer, withHumanStep } from '../helpers/test-insurer.js';

/**
 * The prompt of a job that waits for a person, in real Chromium, for the steps other than a code:
 * an approval in the insurer's app, and a question with choices (integrator's job, answered in the console).
 */

const insurer = createTestInsurer();
const ui = useConsoleBrowser({ server: { insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } } });

let n = 0;
/** A cabinet whose integrator enqueued a job that asks `step`; a console of the cabinet open on its jobs. */
async function waitingJob(step: HumanStep) {
  const user = await createUser(ui.server, `Cabinet étape ${++n}`);
  grantCredits(ui.server.deps, user.cabinetId, 100);
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'testco', { login: 'broker', password: 'secret' });
  const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/jobs');
  await page.getByRole('status').getByText('Live updates on').waitFor();
  const api = apiClient(ui.server, ui.server.createKey(user.cabinetId).key);
  insurer.queue(withHumanStep(step));
  const dicData = { postcode: String(30000 + n), birth_date: '1984-03-09', formula: 'tiers' };
  const res = await api.post('/automation/tarifications', { compagnie: 'testco', produit: 'auto', dicData });
  expect(res.status).toBe(202);
  ui.server.app.robotWorker.tick();
  return { page, jobId: String(res.body.job_id), api };
}

async function finished(api: ReturnType<typeof apiClient>, jobId: string): Promise<Job> {
  await ui.server.app.robotWorker.idle();
  return jobSchema.parse((await api.get(`/automation/jobs/${jobId}`)).body);
}

describe('human steps in the console', () => {
  it('an approval in the insurer’s app: the prompt says so and its button resumes the robot', async () => {
    const { page, jobId, api } = await waitingJob({ kind: 'app_approval', prompt: 'Validez la connexion dans l’application Test' });
    const prompt = page.getByRole('dialog', { name: 'Approval needed — Test Assurances' });
    await prompt.waitFor({ timeout: 30_000 });
    await prompt.getByText('Approve the request in the Test Assurances app, then say so here.').waitFor();
    await prompt.getByText('Validez la connexion dans l’application Test').waitFor();
    expect(await prompt.getByRole('textbox').count()).toBe(0);
    await prompt.getByRole('button', { name: 'I approved it in the insurer’s app' }).click();
    await prompt.waitFor({ state: 'detached' });
    expect(await finished(api, jobId)).toMatchObject({ status: 'completed', result: { suspens: 'answer: true' } });
  });

  it('a question with choices: the person picks one, the robot gets its value', async () => {
    const choices = [
      { value: 'garage', label: 'Garage fermé' },
      { value: 'street', label: 'Dans la rue' },
    ];
    const { page, jobId, api } = await waitingJob({ kind: 'question', prompt: 'Où le véhicule stationne-t-il la nuit ?', choices });
    const prompt = page.getByRole('dialog', { name: 'The portal asks a question — Test Assurances' });
    await prompt.waitFor({ timeout: 30_000 });
    await prompt.getByText('Où le véhicule stationne-t-il la nuit ?').waitFor();
    expect(await prompt.getByRole('radio').count()).toBe(2);
    await prompt.getByRole('radio', { name: 'Dans la rue' }).check();
    await prompt.getByRole('button', { name: 'Send the answer' }).click();
    await prompt.waitFor({ state: 'detached' });
    expect(await finished(api, jobId)).toMatchObject({ status: 'completed', result: { suspens: 'answer: street' } });
  });
});
