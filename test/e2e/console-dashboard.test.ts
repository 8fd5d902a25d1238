// @module-tag browser
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { enqueuedSchema } from '../../shared/automation.js';
import { consoleJobDetailSchema } from '../../shared/console-automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { json } from '../helpers/api.js';
import { audit } from '../helpers/axe.js';
import { consoleClient, saveScreenshot, signedIn, type ConsoleClient } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';
import { createUser } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';

/**
 * The jobs dashboard in real Chromium, on jobs the sandbox insurer's robot really ran (one priced,
 * one refused for a wrong password): the figures per insurer, per day and by failure reason, in
 * English and French, at 1280×800 and 390×844, with the link to the failed job, no serious axe
 * violation, the empty state, and the figures following a job that ends while the page is open.
 */

const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    config: { tarificationQuotaPerHour: 1000 },
  },
});

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const WORDS = {
  en: {
    locale: 'en-GB',
    title: 'Dashboard',
    rate: '50%',
    reason: 'The insurer refused the cabinet’s login or password',
    openJob: /^Open the job of /,
    table: 'Figures per day (table)',
    empty: /No jobs in this period yet/,
    jobs: 'Jobs',
  },
  fr: {
    locale: 'fr-FR',
    title: 'Tableau de bord',
    rate: '50 %',
    reason: 'L’assureur a refusé l’identifiant ou le mot de passe du cabinet',
    openJob: /^Ouvrir la tâche du /,
    table: 'Chiffres par jour (tableau)',
    empty: /Aucune tâche sur cette période/,
    jobs: 'Tâches',
  },
} as const;

let n = 0;

/** Prices the sandbox's car quote from the console and waits for the job's end; its id. */
async function priced(client: ConsoleClient): Promise<{ id: string; status: string }> {
  n += 1;
  const res = await client.request('/api/v1/console/tarifications', {
    method: 'POST',
    json: { compagnie: 'sandbox', produit: 'auto', dicData: { ...AUTO_DIC_DATA, postcode: String(69000 + n) } },
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const id = enqueuedSchema.parse(await json(res)).job_id;
  return { id, status: await finished(client, id) };
}

async function finished(client: ConsoleClient, id: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = consoleJobDetailSchema.parse(await json(await client.request(`/api/v1/console/jobs/${id}`)));
    if (['completed', 'partial', 'failed', 'cancelled'].includes(job.status)) return job.status;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The text of a table's cell by its column header, in the row headed `row`; spaces as one plain space. */
async function cell(page: Page, table: RegExp | string, row: string, column: string): Promise<string> {
  const region = page.getByRole('table', { name: table });
  const headers = (await region.locator('thead th').allTextContents()).map((h) => h.trim());
  const index = headers.indexOf(column);
  expect(index, `${column} in ${headers.join(', ')}`).toBeGreaterThanOrEqual(0);
  const line = region.getByRole('row').filter({ has: page.getByRole('rowheader', { name: row, exact: true }) });
  const text = await line.locator('th, td').nth(index).textContent();
  return (text ?? '').replace(/\s+/gu, ' ').trim();
}

describe('the jobs dashboard in real Chromium', () => {
  it('shows the figures of real jobs in both languages and both widths, links the failed job, passes axe, and follows a job that ends', async () => {
    const user = await createUser(ui.server, 'Cabinet Tableau de Bord');
    grantCredits(ui.server.deps, user.cabinetId, 100);
    const api = await consoleClient(ui.server, user);
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    expect((await priced(api)).status).toBe('completed');
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'wrong' });
    const refused = await priced(api);
    expect(refused.status).toBe('failed');

    const found: string[] = [];
    for (const lang of ['en', 'fr'] as const)
      for (const viewport of [DESKTOP, PHONE]) {
        const w = WORDS[lang];
        const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/dashboard', { locale: w.locale, viewport });
        await page.getByRole('heading', { level: 1, name: w.title }).waitFor();
        const insurers = lang === 'en' ? 'Jobs per insurer' : 'Tâches par assureur';
        await page.getByRole('table', { name: new RegExp(insurers) }).waitFor();
        const table = new RegExp(insurers);
        const col =
          lang === 'en'
            ? { rate: 'Success rate', credits: 'Credits used', jobs: 'Jobs', failed: 'Failed', median: 'Median time' }
            : { rate: 'Taux de réussite', credits: 'Crédits consommés', jobs: 'Tâches', failed: 'Échouées', median: 'Durée médiane' };
        expect(await cell(page, table, 'Sandbox Assurances', col.rate)).toBe(w.rate);
        expect(await cell(page, table, 'Sandbox Assurances', col.jobs)).toBe('2');
        expect(await cell(page, table, 'Sandbox Assurances', col.failed)).toBe('1');
        // The wrong password was refunded: only the priced job's 10 credits.
        expect(await cell(page, table, 'Sandbox Assurances', col.credits)).toBe('10');
        expect(await cell(page, table, 'Sandbox Assurances', col.median)).toMatch(lang === 'en' ? /^\d+(\.\d)? s$/ : /^\d+(,\d)? s$/);

        // Failures by reason, in words, with the failed job's link.
        const failures = page.getByRole('table', { name: lang === 'en' ? 'Failures by reason' : 'Échecs par motif' });
        const reason = failures.getByRole('row').filter({ hasText: w.reason });
        const link = reason.getByRole('link', { name: w.openJob });
        expect(await link.getAttribute('href')).toBe(`/console/jobs/${refused.id}`);

        // The bars' text equivalent: today's line counts both jobs.
        await page.locator('summary', { hasText: w.table }).click();
        const days = page.getByRole('table', { name: w.table });
        await days.waitFor();
        expect(await days.getByRole('row').count()).toBe(8); // the header and 7 days
        expect((await days.getByRole('row').last().locator('td').first().textContent())?.trim()).toBe('2');

        found.push(...(await audit(page, `dashboard, ${lang}, ${viewport.width}px`)));
        if (viewport === PHONE) {
          const overflow = await page.evaluate(() => {
            const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document;
            return d.documentElement.scrollWidth;
          });
          expect(overflow, 'the page fits the phone (the tables scroll inside their own region)').toBeLessThanOrEqual(PHONE.width);
        }
        await saveScreenshot(page, `dashboard-${lang}-${viewport.width}`);
      }
    expect(found).toEqual([]);

    // The link opens the failed job; the Jobs page links back to the dashboard.
    const w = WORDS.en;
    const insurers = 'Jobs per insurer';
    const table = new RegExp(insurers);
    const col = { credits: 'Credits used', jobs: 'Jobs' };
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/dashboard');
    const link = page.getByRole('link', { name: w.openJob });
    await link.click();
    await page.waitForURL(`**/console/jobs/${refused.id}`);
    await page
      .getByText(/refused the cabinet’s login or password/)
      .first()
      .waitFor();
    await page.goto(`${ui.server.url}/console/jobs`);
    await page.getByRole('heading', { level: 1, name: w.jobs }).waitFor();
    await page.getByRole('main').getByRole('link', { name: w.title, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: w.title }).waitFor();

    // A job that ends while the page is open shows without a reload.
    setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
    await page.getByRole('table', { name: new RegExp(insurers) }).waitFor();
    expect((await priced(api)).status).toBe('completed');
    await expect.poll(() => cell(page, table, 'Sandbox Assurances', col.jobs), { timeout: 15_000 }).toBe('3');
    expect(await cell(page, table, 'Sandbox Assurances', col.credits)).toBe('20');
    // The period selector asks again: 30 days hold the same jobs.
    await page.locator('summary', { hasText: w.table }).click();
    await page.getByLabel('Period', { exact: true }).selectOption('30');
    await expect.poll(() => page.getByRole('table', { name: w.table }).getByRole('row').count(), { timeout: 15_000 }).toBe(31);
    expect(await cell(page, table, 'Sandbox Assurances', col.jobs)).toBe('3');
  });

  it('a cabinet without jobs sees the empty state, in both languages and widths, with no serious axe violation', async () => {
    const user = await createUser(ui.server, 'Cabinet Vide');
    const found: string[] = [];
    for (const lang of ['en', 'fr'] as const)
      for (const viewport of [DESKTOP, PHONE]) {
        const w = WORDS[lang];
        const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/dashboard', { locale: w.locale, viewport });
        await page.getByRole('heading', { level: 1, name: w.title }).waitFor();
        await page.getByText(w.empty).waitFor();
        expect(await page.getByRole('table').count()).toBe(0);
        found.push(...(await audit(page, `dashboard empty, ${lang}, ${viewport.width}px`)));
      }
    expect(found).toEqual([]);
  });
});
