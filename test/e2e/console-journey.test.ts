// @module-tag browser
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { shortJobReference } from '../../shared/automation.js';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { MCP_SCOPE_WORDING } from '../../shared/oauth.js';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import { apiClient } from '../helpers/api.js';
import { postMcp } from '../helpers/mcp.js';
import { fillSandboxAutoPricing, progressSeen, recordProgress, sandboxPhoneCodes, saveScreenshot } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { authorizeOverHttp, type TestUser } from '../helpers/oauth.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/**
 * The console's story as a new user lives it, in one browser tab against one fresh install of the
 * real app (the sandbox insurer driven by the real robot, a real HTTPS webhook receiver):
 * first-run setup → an API key used on /me → the sandbox's credentials and a test login → a quote
 * priced from the generated form, followed live to 100 %, its PDF → an MFA job answered from the
 * prompt → a webhook tested and replayed to the receiver → a connected app revoked, its token dead.
 * Each page visited is saved as test-artifacts/screenshots/journey-<nn>-<page>.png.
 */

const ADMIN = { email: 'claire@cabinet-lefebvre.fr', password: 'correct horse battery' };
/** Before the cabinet exists and before sign-in, the console's own probes answer 401: expected, not a problem. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 401/;

/** The one tab the person keeps open through the whole story. */
let page: Page;
let receiver: Receiver;
let admin: TestUser;
let mode: SandboxMode = 'normal';
let shot = 0;

afterAll(() => receiver?.close());
/** The tab, watched for script errors, CSP violations and unexpected console errors, kept open to the end. */
const ui = useConsoleBrowser({
  server: async () => {
    receiver = await startReceiver();
    return {
      insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
      sandboxMode: () => mode,
      // Small, but in slow mode enough for the progress bar to show steps between 0 and 100.
      config: { sandboxLatencyMs: 60, tarificationQuotaPerHour: 1000, webhookAllowPrivateTargets: true },
      webhooks: { extraCa: [receiver.ca] },
    };
  },
  expected: (text) => EXPECTED_NETWORK_ERROR.test(text),
  timeout: 10_000,
  closeTabs: 'afterAll',
});

beforeAll(async () => {
  page = await ui.newPage();
});

/** journey-<nn>-<name>, numbered in the order the pages were seen. */
function screenshot(name: string): Promise<void> {
  shot += 1;
  return saveScreenshot(page, `journey-${String(shot).padStart(2, '0')}-${name}`);
}

/** Goes to a section from the navigation, as the person would. */
async function navigate(name: string, path: string, heading = name): Promise<void> {
  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true }).click();
  await page.waitForURL(`${ui.server.url}${path}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const started = Date.now();
const lap = (step: string) => console.info(`[journey] ${step} at ${Date.now() - started} ms`);

describe('a new user’s journey through the console, in one tab on a fresh install', () => {
  it('first run: /console/ opens the setup page, which creates the cabinet and signs the admin in', async () => {
    await page.goto(`${ui.server.url}/console/`);
    await page.waitForURL(`${ui.server.url}/console/setup`);
    await page.getByRole('heading', { name: 'Set up Courtier' }).waitFor();
    await page.getByLabel('Cabinet name').fill('Cabinet Lefebvre');
    await page.getByLabel('Administrator email').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm the password').fill(ADMIN.password);
    await screenshot('setup');

    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/setup` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create the cabinet' }).click();
    expect((await answer).status()).toBe(201);
    await page.waitForURL(`${ui.server.url}/console/`);
    await page.getByRole('heading', { name: 'Courtier console' }).waitFor();
    await page.getByText(ADMIN.email).first().waitFor();
    await screenshot('home');

    const row = ui.server.deps.db.sqlite.prepare('SELECT id, cabinet_id FROM users WHERE email = ?').get(ADMIN.email) as {
      id: string;
      cabinet_id: string;
    };
    admin = { ...ADMIN, userId: row.id, cabinetId: row.cabinet_id };
    lap('set up');
  });

  it('API keys: creates a key, reads it from the page, and /me answers with its scopes', async () => {
    await navigate('API keys', '/console/keys');
    await page.getByText('No key yet.').waitFor();
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Website forms');
    await page.getByLabel('Environment').selectOption('prod');
    await page.getByRole('checkbox', { name: 'crm:read' }).check();
    await page.getByRole('checkbox', { name: 'devis:read' }).check();
    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/keys` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create the key' }).click();
    expect((await answer).status()).toBe(201);

    const field = page.getByLabel('New API key');
    const key = await field.inputValue();
    expect(key).toMatch(/^svc_prod_[0-9A-Za-z]{40}$/);
    await page.getByText('This key will not be shown again').waitFor();
    await screenshot('keys');

    const me = await apiClient(ui.server, key).get('/me');
    expect(me.status).toBe(200);
    expect(me.body.scopes).toEqual(['crm:read', 'devis:read']);
    await page.getByRole('button', { name: 'Done, I stored it' }).click();
    await page.getByRole('row', { name: /Website forms/ }).waitFor();
    expect(await page.content()).not.toContain(key);
    lap('API key used');
  });

  it('Insurers: the sandbox’s demo account is saved and its test login is OK', async () => {
    await navigate('Insurers', '/console/insurers');
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByText('Not configured').waitFor();
    await sandbox.getByLabel('Login', { exact: true }).fill('demo');
    await sandbox.getByLabel('Password', { exact: true }).fill('demo');
    await sandbox.getByRole('button', { name: 'Save credentials' }).click();
    await sandbox.getByText('Credentials saved.').waitFor();
    await sandbox.getByText(/Configured: login demo/).waitFor();
    await sandbox.getByRole('button', { name: 'Test login' }).click();
    await sandbox
      .getByRole('status')
      .getByText(/^Login OK/)
      .waitFor({ timeout: 30_000 });
    expect(await sandbox.getByText(/Configured: login demo/).count(), 'the sandbox shows the saved login').toBe(1);
    expect(await sandbox.getByRole('status').textContent(), 'the test login with the saved credentials succeeded').toContain('Login OK');
    await screenshot('insurers');
    lap('test login OK');
  });

  it('Wallet: a new cabinet has no credits; after a top-up the balance shows', async () => {
    await navigate('Wallet & status', '/console/wallet');
    await page
      .getByTestId('wallet-balance')
      .filter({ hasText: /^0 credits$/ })
      .waitFor();
    expect(await page.getByTestId('wallet-balance').textContent(), 'a new cabinet’s balance').toBe('0 credits');
    grantCredits(ui.server.deps, admin.cabinetId, 100, 'Welcome credits');
    await page.reload();
    await page
      .getByTestId('wallet-balance')
      .filter({ hasText: /^100 credits$/ })
      .waitFor();
    expect(await page.getByTestId('wallet-balance').textContent(), 'the balance after a top-up of 100 credits').toBe('100 credits');
    await screenshot('wallet');
  });

  it('Pricing → Jobs: a quote from the generated form, checked, priced, followed live to 100 %, its PDF downloaded', async () => {
    await navigate('Pricing', '/console/pricing');
    const form = await fillSandboxAutoPricing(page);
    await form.getByRole('button', { name: 'Check (dry run)' }).click();
    const check = form.getByRole('status', { name: 'Check result' });
    await check.getByText('Ready to price.').waitFor();
    await check.getByText('10 credits').waitFor(); // the cost
    await check.getByText('100 credits').waitFor(); // the balance
    await screenshot('pricing');

    mode = 'slow';
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    await page.waitForURL(/\/console\/jobs\?job=/);
    const jobId = new URL(page.url()).searchParams.get('job') ?? '';
    await page.getByRole('status').getByText('Live updates on').waitFor();
    const label = `Progress of job ${shortJobReference(jobId)}`;
    await recordProgress(page, label);
    const progress = page.getByRole('progressbar', { name: label });
    await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 30_000, interval: 100 }).toBe('100');
    const run = await progressSeen(page);
    // The same page (no reload) saw the bar move through steps up to 100.
    expect(run.samePage).toBe(true);
    expect(run.seen.at(-1)).toBe(100);
    expect(run.seen.some((v) => v > 0 && v < 100)).toBe(true);
    expect([...run.seen].sort((a, b) => a - b)).toEqual(run.seen);
    mode = 'normal';
    const row = page.getByRole('row').filter({ has: progress });
    await row.getByText('Completed').waitFor();
    await row.getByText(/€/).waitFor();
    await screenshot('jobs');

    const link = row.getByRole('link', { name: 'Download PDF' });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const failure = await download.failure();
    if (failure) {
      // Chromium reports any interrupted download as "canceled": say what the server answers for the same link.
      const href = (await link.getAttribute('href')) ?? '';
      const again = await page.request.get(`${ui.server.url}${href}`);
      expect.fail(
        `the download failed (${failure}); GET ${href} answers ${again.status()}: ${(await again.body()).subarray(0, 200).toString()}`,
      );
    }
    expect(
      readFileSync(await download.path())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    expect(download.suggestedFilename()).toMatch(/^Devis_.+_Assurance-auto_\d{4}-\d{2}-\d{2}\.pdf$/);
    lap('quote priced, PDF downloaded');
  });

  it('an MFA job: with the sandbox’s MFA account, the code is asked in a prompt, answered there, and the job completes', async () => {
    await navigate('Insurers', '/console/insurers');
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByLabel('Login', { exact: true }).fill('demo-mfa');
    await sandbox.getByLabel('Password', { exact: true }).fill('demo');
    await sandbox.getByRole('button', { name: 'Replace credentials' }).click();
    await sandbox.getByText('Credentials saved.').waitFor();
    await sandbox.getByText(/Configured: login demo-mfa/).waitFor();
    await screenshot('insurers-mfa-account');

    await navigate('Pricing', '/console/pricing');
    await page.getByLabel('Insurer', { exact: true }).selectOption('sandbox');
    await page.getByLabel('Product', { exact: true }).selectOption('mrh');
    const form = page.getByRole('form', { name: 'Multirisque habitation' });
    await form.getByLabel('Nom de l’assuré', { exact: true }).fill('Paul Durand');
    await form.getByLabel('Type de logement', { exact: true }).selectOption('appartement');
    await form.getByLabel('Surface habitable (m²)', { exact: true }).fill('62');
    await form.getByLabel('Nombre de pièces', { exact: true }).fill('3');
    await form.getByLabel('Code postal', { exact: true }).fill('75011');
    await form.getByLabel('Statut de l’occupant', { exact: true }).selectOption('locataire');
    await form.getByLabel('Capital mobilier (€)', { exact: true }).fill('15000');
    await screenshot('pricing-mfa');
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    await page.waitForURL(/\/console\/jobs\?job=/);
    const jobId = new URL(page.url()).searchParams.get('job') ?? '';

    const prompt = page.getByRole('dialog', { name: 'Verification code needed — Sandbox Assurances' });
    await prompt.waitFor({ timeout: 30_000 });
    await prompt.getByRole('link', { name: / · / }).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: shortJobReference(jobId) })
      .getByText('Code needed')
      .waitFor();
    await screenshot('jobs-mfa-prompt');

    const code = (await sandboxPhoneCodes(ui.server))[0] ?? '';
    expect(code).toMatch(/^\d{6}$/);
    await prompt.getByLabel('Code received by SMS', { exact: true }).fill(code);
    await prompt.getByRole('button', { name: 'Send the code' }).click();
    await prompt.waitFor({ state: 'detached' });
    const progress = page.getByRole('progressbar', { name: `Progress of job ${shortJobReference(jobId)}` });
    await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 30_000, interval: 100 }).toBe('100');
    await page.getByRole('row').filter({ has: progress }).getByText('Completed').waitFor();
    await screenshot('jobs-after-mfa');
    lap('MFA job completed');
  });

  it('Webhooks: one to a real HTTPS receiver, its secret shown once; Send test and Replay reach it, signed', async () => {
    await navigate('Webhooks', '/console/webhooks');
    await page.getByText('No webhook yet').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('CRM Lefebvre');
    await page.getByLabel('devis.signed', { exact: true }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();

    const secretField = page.getByLabel('Signing secret', { exact: true });
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{40}$/);
    await page.getByText('it will not be shown again').waitFor();
    const card = page.getByRole('region', { name: receiver.url, exact: true });
    await card.getByText('Active', { exact: true }).waitFor();
    await screenshot('webhooks-created');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await secretField.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);

    await card.getByRole('button', { name: 'Send test' }).click();
    await card.getByText(/Test delivered: HTTP 200/).waitFor();
    const [test] = await receiver.waitFor(1);
    expect(verifyWebhook(test!.rawBody, test!.headers, [secret])).toMatchObject({ valid: true });
    const envelope = eventEnvelopeSchema.parse(JSON.parse(test!.rawBody));
    expect(envelope).toMatchObject({ type: 'webhook.test', cabinet_id: admin.cabinetId });

    const history = card.getByRole('table');
    await history.getByRole('button', { name: /^Replay webhook\.test/ }).click();
    const [, replayed] = await receiver.waitFor(2);
    expect(verifyWebhook(replayed!.rawBody, replayed!.headers, [secret])).toMatchObject({ valid: true });
    expect(JSON.parse(replayed!.rawBody).id).toBe(envelope.id);
    await history.getByText('Resent copy', { exact: true }).waitFor();
    await history
      .getByText(/HTTP 200 · \d+ ms/)
      .nth(1)
      .waitFor();
    await screenshot('webhooks-replayed');
    lap('webhook tested and replayed');
  });

  it('Connected apps: a real OAuth grant is listed, revoked from the page, and its token then gets 401 on /mcp', async () => {
    const { tokens } = await authorizeOverHttp(ui.server, admin, 'crm:read devis:read');
    expect((await postMcp(ui.server, tokens.access_token)).status).toBe(200);

    await navigate('Connected apps', '/console/apps');
    const card = page.getByRole('article', { name: 'Test assistant' });
    await card.getByText(MCP_SCOPE_WORDING['crm:read'].en).waitFor();
    await card.getByText(MCP_SCOPE_WORDING['devis:read'].en).waitFor();
    await screenshot('apps');

    await card.getByRole('button', { name: 'Revoke Test assistant' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke access for “Test assistant”?' });
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Access for “Test assistant” was revoked.' }).waitFor();
    await page.getByText('No application is connected to your account.').waitFor();
    await screenshot('apps-revoked');
    expect((await postMcp(ui.server, tokens.access_token)).status).toBe(401);
    lap('connected app revoked');
  });
});
