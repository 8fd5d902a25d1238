// @module-tag browser
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { jobSchema, shortJobReference } from '../../shared/automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { consoleClient, progressSeen, recordProgress, sandboxPhoneCodes, saveScreenshot, signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { builtInPackage } from '../helpers/adapter-package.js';
import { apiClient } from '../helpers/api.js';
import { AUTO_DIC_DATA, AUTO_FORM_FIELDS } from '../helpers/insurance-data.js';
import { createUser } from '../helpers/oauth.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * The automation pages of the built console in real Chromium, against the real app and the
 * sandbox insurer driven by the real robot: credentials → test login → a quote priced from the
 * generated form → live progress → the PDF; and an MFA code answered from the prompt shown in two
 * consoles of the cabinet at once.
 */

let mode: SandboxMode = 'normal';
/** The tabs of a test, closed after it; any script error, console error or CSP refusal on them fails it. */
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    sandboxMode: () => mode,
    // In slow mode each portal page waits this long: enough to see the progress bar move.
    config: { sandboxLatencyMs: 120, tarificationQuotaPerHour: 1000 },
  },
});

beforeEach(() => {
  mode = 'normal';
});

describe('the automation pages in real Chromium', () => {
  it('sandbox credentials → test login → a quote priced from the generated form → live progress → the PDF', async () => {
    const started = Date.now();
    const user = await createUser(ui.server, 'Cabinet Tarif & Associés');
    grantCredits(ui.server.deps, user.cabinetId, 100);

    // Insurers: set the sandbox's demo account, then test the login.
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/insurers');
    await page.getByRole('heading', { level: 1, name: 'Insurers' }).waitFor();
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByText('Not configured').waitFor();
    // Which robot prices: its adapter package's version, shipped with Courtier.
    await sandbox.getByText(`version ${builtInPackage('sandbox').version} · built in`, { exact: true }).waitFor();
    // A demo insurer names its public account, and fills it in.
    await sandbox.getByText('A demo insurer: its portal accepts the login “demo” with the password “demo”.').waitFor();
    await sandbox.getByRole('button', { name: 'Fill in the demo login' }).click();
    expect(await sandbox.getByLabel('Login', { exact: true }).inputValue()).toBe('demo');
    await sandbox.getByRole('button', { name: 'Save credentials' }).click();
    await sandbox.getByText('Credentials saved.').waitFor();
    await sandbox.getByText(/Configured: login demo/).waitFor();
    // The password is never shown back.
    expect(await sandbox.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain('value="demo" type="password"');
    await sandbox.getByRole('button', { name: 'Test login' }).click();
    await sandbox
      .getByRole('status')
      .getByText(/^Login OK/)
      .waitFor({ timeout: 30_000 });
    await saveScreenshot(page, 'automation-insurers');

    // Pricing: pick the insurer and the product; the form comes from the schema.
    await page.getByRole('link', { name: 'Pricing' }).click();
    await page.getByRole('heading', { level: 1, name: 'Pricing' }).waitFor();
    await page.getByLabel('Insurer', { exact: true }).selectOption('sandbox');
    await page.getByLabel('Product', { exact: true }).selectOption('auto');
    const form = page.getByRole('form', { name: 'Assurance auto' });
    await form.getByLabel('Nom de l’assuré', { exact: true }).waitFor();
    expect(await form.getByLabel('Nom de l’assuré', { exact: true }).getAttribute('aria-required')).toBe('true');
    expect(
      await form.getByLabel('Immatriculation (AB-123-CD), à défaut de marque et modèle', { exact: true }).getAttribute('aria-required'),
    ).toBeNull();
    expect(await form.getByLabel('Date de naissance du conducteur', { exact: true }).getAttribute('type')).toBe('date');
    expect(await form.getByLabel('Coefficient bonus-malus (0.50 à 3.50)', { exact: true }).getAttribute('type')).toBe('number');

    // An empty check names the missing fields, from the server.
    await form.getByRole('button', { name: 'Check (dry run)' }).click();
    const check = form.getByRole('status', { name: 'Check result' });
    await check.getByText(/Missing fields:.*Nom de l’assuré/).waitFor();
    expect(await form.getByLabel('Code postal', { exact: true }).getAttribute('aria-invalid')).toBe('true');

    for (const [label, value] of Object.entries(AUTO_FORM_FIELDS)) await form.getByLabel(label, { exact: true }).fill(value);
    await form.getByLabel('Usage du véhicule', { exact: true }).selectOption('prive');
    await form.getByLabel('Formule', { exact: true }).selectOption('tous_risques');
    await form.getByRole('button', { name: 'Check (dry run)' }).click();
    await check.getByText('Ready to price.').waitFor();
    await check.getByText('10 credits').waitFor();
    await check.getByText('100 credits').waitFor();
    await check.getByText('1000 of 1000 left this hour').waitFor();
    await saveScreenshot(page, 'automation-pricing');

    // Price: the jobs page opens on the new job and follows it live.
    mode = 'slow';
    await form.getByRole('button', { name: 'Price', exact: true }).click();
    await page.waitForURL(/\/console\/jobs\?job=/);
    const jobId = new URL(page.url()).searchParams.get('job') ?? '';
    await page.getByRole('status').getByText('Live updates on').waitFor();
    await recordProgress(page, `Progress of job ${shortJobReference(jobId)}`);
    const progress = page.getByRole('progressbar', { name: `Progress of job ${shortJobReference(jobId)}` });
    await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 60_000, interval: 100 }).toBe('100');
    const run = await progressSeen(page);
    // The same page (no reload) saw the bar move through steps up to 100.
    expect(run.samePage).toBe(true);
    const seen = run.seen;
    expect(seen.at(-1)).toBe(100);
    expect(seen.some((v) => v > 0 && v < 100)).toBe(true);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    const row = page.getByRole('row').filter({ has: progress });
    await row.getByText('Completed').waitFor();
    await row.getByText(/€/).waitFor();
    expect(await row.getByText('10', { exact: true }).count()).toBe(1); // credits consumed
    await saveScreenshot(page, 'automation-jobs');

    // The PDF downloads as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'Download PDF' }).click()]);
    const file = await download.path();
    expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
    // Priced with no client chosen, the quote is the insured's, made a client: named after their last name, the product and the day.
    expect(download.suggestedFilename()).toMatch(/^Devis_Martin_Assurance-auto_\d{4}-\d{2}-\d{2}\.pdf$/);

    // Filters: by status, then a date range that excludes today.
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByText('No jobs match these filters.').waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('completed');
    await progress.waitFor();
    await page.getByLabel('From', { exact: true }).fill('2000-01-01');
    await page.getByLabel('To', { exact: true }).fill('2000-01-31');
    await page.getByText('No jobs match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await progress.waitFor();
    console.info(`[timing] priced a sandbox quote from the console in ${Date.now() - started} ms`);
  });

  it('an MFA job: the prompt shows in two consoles of the cabinet, is answered in one, goes in both; the job completes', async () => {
    const started = Date.now();
    const user = await createUser(ui.server, 'Cabinet MFA');
    grantCredits(ui.server.deps, user.cabinetId, 100);
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo-mfa', password: 'demo' });
    const jobs = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/jobs');
    const other = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/insurers');
    await jobs.getByRole('status').getByText('Live updates on').waitFor();

    const api = await consoleClient(ui.server, user);
    const res = await api.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: {
        compagnie: 'sandbox',
        produit: 'mrh',
        dicData: {
          insured_name: 'Paul Durand',
          dwelling_type: 'appartement',
          surface_m2: 62,
          rooms: 3,
          postcode: '75011',
          occupant_status: 'locataire',
          contents_capital_eur: 15000,
        },
      },
    });
    expect(res.status).toBe(202);
    const jobId = ((await res.json()) as { job_id: string }).job_id;

    const promptA = jobs.getByRole('dialog', { name: 'Verification code needed — Sandbox Assurances' });
    const promptB = other.getByRole('dialog', { name: 'Verification code needed — Sandbox Assurances' });
    await promptA.waitFor({ timeout: 30_000 });
    await promptB.waitFor({ timeout: 30_000 });
    await promptB.getByText(/6 chiffres/).waitFor();
    await promptB.getByRole('link', { name: /Paul Durand · Multirisque habitation/ }).waitFor();
    await jobs
      .getByRole('row')
      .filter({ hasText: shortJobReference(jobId) })
      .getByText('Code needed')
      .waitFor();
    await saveScreenshot(other, 'automation-mfa-prompt');

    const code = (await sandboxPhoneCodes(ui.server))[0] ?? '';
    expect(code).toMatch(/^\d{6}$/);
    await promptA.getByLabel('Code received by SMS', { exact: true }).fill(code);
    await promptA.getByRole('button', { name: 'Send the code' }).click();
    await promptA.waitFor({ state: 'detached' });
    await promptB.waitFor({ state: 'detached' });
    // Where the prompt was, the console says the code went.
    await jobs.getByRole('status').getByText('Sent to Sandbox Assurances: its robot goes on.').waitFor();

    const progress = jobs.getByRole('progressbar', { name: `Progress of job ${shortJobReference(jobId)}` });
    await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 60_000, interval: 100 }).toBe('100');
    await jobs.getByRole('row').filter({ has: progress }).getByText('Completed').waitFor();
    await saveScreenshot(jobs, 'automation-jobs-after-mfa');
    console.info(`[timing] MFA job answered from the prompt and completed in ${Date.now() - started} ms`);
  });

  it('an installed adapter says who signed it; an administrator sees the packages that did not load', async () => {
    const user = await createUser(ui.server, 'Cabinet Paquets');
    const registry = ui.server.deps.insurers;
    const loaded = registry.list();
    const origin = { source: 'installed' as const, apiRange: '^1.0.0', dir: '/packages/x' };
    const fingerprint = 'ed25519:ab12cd34ef56ab12cd34ef56ab12cd34';
    const refused = "courtier-insurer-broken@1.0.0 is not signed, and this machine's IT policy accepts signed adapters only.";
    // What a reload after `courtier insurers install` leaves: two installed packages, one refused.
    registry.replace(
      [
        ...loaded,
        {
          ...createTestInsurer('acme', 'Acme Assurances'),
          version: '2.1.0',
          origin: { ...origin, signer: { fingerprint, trusted: true } },
        },
        { ...createTestInsurer('zeta', 'Zeta Mutuelle'), version: '0.3.0', origin: { ...origin, signer: null } },
      ],
      [refused],
    );
    try {
      const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/insurers');
      await page.getByRole('heading', { level: 1, name: 'Insurers' }).waitFor();
      await page
        .getByRole('region', { name: /Acme Assurances/ })
        .getByText(`version 2.1.0 · installed · signed by ${fingerprint} (trusted key)`, { exact: true })
        .waitFor();
      await page
        .getByRole('region', { name: /Zeta Mutuelle/ })
        .getByText('version 0.3.0 · installed · not signed', { exact: true })
        .waitFor();
      const notice = page.getByRole('status').filter({ hasText: 'These insurer packages were not loaded:' });
      expect(await notice.getByRole('listitem').allTextContents()).toEqual([refused]);
      await saveScreenshot(page, 'automation-insurers-packages');
    } finally {
      registry.replace(loaded);
    }
  });

  it('warns on an insurer whose portal changed under its robot, in English and French', async () => {
    const user = await createUser(ui.server, 'Cabinet Portail');
    grantCredits(ui.server.deps, user.cabinetId, 100);
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    const api = apiClient(ui.server, ui.server.createKey(user.cabinetId).key);
    mode = 'changed';
    const enqueued = await api.post('/automation/tarifications', { compagnie: 'sandbox', produit: 'auto', dicData: AUTO_DIC_DATA });
    expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
    await ui.server.app.robotWorker.idle();
    const job = jobSchema.parse((await api.get(`/automation/jobs/${String(enqueued.body.job_id)}`)).body);
    expect(job.error?.code).toBe('portal_changed');

    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/insurers');
    const warning = page.getByRole('region', { name: /Sandbox Assurances/ }).getByText(/^The insurer’s portal changed \(step driver, on /);
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(/: its robot fails until its adapter is updated\.$/);
    const french = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/insurers', { locale: 'fr-FR' });
    await french
      .getByRole('region', { name: /Sandbox Assurances/ })
      .getByText(
        /^Le portail de l’assureur a changé \(étape driver, le .+\) : son robot échoue tant que son connecteur n’est pas mis à jour\.$/,
      )
      .waitFor();
    await saveScreenshot(french, 'automation-insurers-portal-changed-fr');
  });

  it('speaks French: the three pages, labels included', async () => {
    const user = await createUser(ui.server, 'Cabinet Français');
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/pricing', { locale: 'fr-FR' });
    await page.getByRole('heading', { level: 1, name: 'Tarification' }).waitFor();
    await page.getByLabel('Assureur', { exact: true }).selectOption('sandbox');
    await page.getByLabel('Produit', { exact: true }).selectOption('mrh');
    await page.getByRole('button', { name: 'Vérifier (simulation)' }).waitFor();
    expect(await page.getAttribute('html', 'lang'), 'the console says it speaks French').toBe('fr');
    expect(await page.getByRole('heading', { level: 1 }).textContent(), 'the pricing page is titled in French').toBe('Tarification');
    await saveScreenshot(page, 'automation-pricing-fr');
    await page.getByRole('link', { name: 'Tâches' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tâches' }).waitFor();
    await page.getByLabel('Statut', { exact: true }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent(), 'the jobs page is titled in French').toBe('Tâches');
    await page.getByRole('link', { name: 'Assureurs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Assureurs' }).waitFor();
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByLabel('Identifiant', { exact: true }).waitFor();
    await sandbox.getByText(`version ${builtInPackage('sandbox').version} · intégré`, { exact: true }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent(), 'the insurers page is titled in French').toBe('Assureurs');
    await saveScreenshot(page, 'automation-insurers-fr');
  });
});
