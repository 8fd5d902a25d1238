// @module-tag browser
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { audit } from '../helpers/axe.js';
import { expectNoSidewaysScroll, sandboxPhoneCodes, saveScreenshot, signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { horizonInsurer } from '../helpers/horizon-insurer.js';
import { createUser } from '../helpers/oauth.js';
import { pdfText } from '../helpers/pdf-text.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { traditionInsurer } from '../helpers/tradition-insurer.js';

/**
 * The Compare page of the built console in real Chromium: a car described once, the three demo
 * insurers priced at once by their robots on their portals, offers side by side with the marks and
 * the guarantee filter, a recommendation and its advice PDF; in French, a portal down and a code asked
 * by SMS on another, answered from the prompt while the others finish.
 */

const modes = new Map<string, SandboxMode>();
const ui = useConsoleBrowser({
  server: {
    insurers: [
      sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` }),
      horizonInsurer({ portalUrl: () => `${ui.server.url}/sandbox/horizon` }),
      traditionInsurer({ portalUrl: () => `${ui.server.url}/sandbox/tradition`, pdf: { maxRefreshes: 5, intervalMs: 100 } }),
    ],
    sandboxMode: (insurer) => modes.get(insurer) ?? 'normal',
    config: { sandboxLatencyMs: 0, tarificationQuotaPerHour: 1000, workerConcurrency: 3 },
  },
  timeout: 20_000,
  // The recommendation sent empty on purpose: its 400 marks the fields.
  expected: (text) => text.includes('the server responded with a status of 400'),
});

async function brokerWithInsurers(sandboxLogin: string) {
  const user = await createUser(ui.server, 'Cabinet Comparaison');
  grantCredits(ui.server.deps, user.cabinetId, 300);
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: sandboxLogin, password: 'demo' });
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'horizon', { login: 'demo', password: 'demo' });
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'tradition', { login: 'demo', password: 'demo' });
  return user;
}

/** The car of the risk examples, typed into the form; its tax horsepower left for Tradition to ask. */
async function fillCar(page: Page, words: typeof EN) {
  const form = page.getByRole('form', { name: words.form });
  const fill = (label: string, value: string) => form.getByLabel(label, { exact: true }).fill(value);
  await fill(words.lastName, 'Martin');
  await fill(words.firstName, 'Léa');
  await fill(words.birth, '1985-02-10');
  await fill(words.licence, '2004-06-15');
  await fill(words.crm, '0.72');
  await fill(words.claims, '0');
  await fill(words.make, 'Renault');
  await fill(words.model, 'Clio');
  await fill(words.registered, '2022-04-01');
  await form.getByLabel(words.use, { exact: true }).selectOption('trajet_travail');
  await fill(words.postcode, '33000');
  await form.getByLabel(words.parking, { exact: true }).selectOption('garage_ferme');
  await fill(words.mileage, '9000');
  await form.getByLabel(words.cover, { exact: true }).selectOption('etendue');
  return form;
}

const EN = {
  form: 'Compare',
  lastName: 'Last name',
  firstName: 'First name',
  birth: 'Date of birth',
  licence: 'Date the driving licence was obtained',
  crm: 'No-claims coefficient (0.50 to 3.50)',
  claims: 'Claims in the last 36 months',
  make: 'Make',
  model: 'Model',
  registered: 'Date first registered',
  use: 'Use',
  postcode: 'Postcode where it is parked at night',
  parking: 'Parking at night',
  mileage: 'Yearly mileage',
  cover: 'Level of cover wanted',
};
const FR = {
  form: 'Comparer',
  lastName: 'Nom',
  firstName: 'Prénom',
  birth: 'Date de naissance',
  licence: 'Date d’obtention du permis B',
  crm: 'Bonus-malus (CRM, 0,50 à 3,50)',
  claims: 'Sinistres déclarés sur 36 mois',
  make: 'Marque',
  model: 'Modèle',
  registered: 'Date de première mise en circulation',
  use: 'Usage',
  postcode: 'Code postal du stationnement la nuit',
  parking: 'Stationnement la nuit',
  mileage: 'Kilométrage annuel',
  cover: 'Niveau de couverture souhaité',
};

const column = (page: Page, name: string) => page.getByRole('listitem', { name });

describe('the Compare page in real Chromium, on the three demo portals', () => {
  it('one car, three insurers at once: offers side by side, a filter, a recommendation and its advice PDF', async () => {
    const user = await brokerWithInsurers('demo');
    const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/compare');
    await page.getByRole('heading', { level: 1, name: 'Compare' }).waitFor();
    const form = await fillCar(page, EN);

    // The client, created from the driver's names.
    await page.getByRole('button', { name: 'Create the client Léa Martin' }).click();
    await page.getByText('Léa Martin is now a client of the cabinet.').waitFor();
    await page.getByText('For Léa Martin').waitFor();

    // The check names what each insurer still needs: Tradition asks for the tax horsepower, once.
    await form.getByRole('button', { name: 'Check (dry run)' }).click();
    const check = form.getByRole('status', { name: 'What would run' });
    await check.getByText('Questions to answer (below)').waitFor();
    const asks = form.getByRole('group', { name: 'Mutuelle Tradition also asks' });
    await asks.getByLabel('Tax horsepower of the vehicle (CV)', { exact: true }).fill('5');
    await form.getByRole('button', { name: 'Check (dry run)' }).click();
    await check.getByText('Total: 30 credits · wallet: 300 credits').waitFor();
    expect(await check.getByText(/^Ready · 10 credits$/).count()).toBe(3);
    expect(await audit(page, 'compare form (en)')).toEqual([]);
    await saveScreenshot(page, 'compare-form');

    await form.getByRole('button', { name: 'Compare the insurers' }).click();
    await page.waitForURL(/\/console\/compare\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { level: 1, name: 'Comparison · Car' }).waitFor();
    await page.getByText('Complete', { exact: true }).waitFor({ timeout: 90_000 });
    expect(creditBalance(ui.server.deps, user.cabinetId)).toBe(270);

    // Horizon offers three formulas; each insurer's offers line up under the line's guarantees.
    const horizon = column(page, 'Horizon Direct');
    expect(await horizon.getByRole('article').count()).toBe(3);
    for (const name of ['Sandbox Assurances', 'Mutuelle Tradition'])
      expect(await column(page, name).getByRole('article').count()).toBeGreaterThan(0);
    expect(await page.getByText('Cheapest', { exact: true }).count()).toBe(1);
    expect(await page.getByText('Broadest cover', { exact: true }).count()).toBe(1);
    await expect.poll(() => page.getByText(/€[\d,.]+ \/ year/).count()).toBeGreaterThanOrEqual(5);

    // The filter sets apart the offers without a guarantee the client wants.
    const filter = page.getByRole('group', { name: 'Guarantees the client wants' });
    // By keyboard: the filter's box ticked with Space, the recommendation opened with Enter.
    await filter.getByLabel('Own damage, any accident', { exact: true }).focus();
    await page.keyboard.press('Space');
    expect(await filter.getByLabel('Own damage, any accident', { exact: true }).isChecked()).toBe(true);
    expect(await page.getByText(/^Lacks: Own damage, any accident$/).count()).toBeGreaterThan(0);
    await filter.getByLabel('Own damage, any accident', { exact: true }).uncheck();
    expect(await audit(page, 'comparison (en)')).toEqual([]);
    await saveScreenshot(page, 'compare-offers');

    // Recommend the cheapest offer: the advice PDF names the client, the premiums, the choice and the reason.
    const cheapest = page.getByRole('article').filter({ has: page.getByText('Cheapest', { exact: true }) });
    await cheapest.getByRole('button', { name: 'Recommend this offer' }).focus();
    await page.keyboard.press('Enter');
    const recommend = page.getByRole('form', { name: /^Recommend / });
    await expect.poll(() => recommend.getByRole('heading').evaluate((h) => h === h.ownerDocument.activeElement)).toBe(true);
    await recommend.getByRole('button', { name: 'Make the advice document' }).click();
    await recommend.getByLabel('The client’s needs, as they expressed them').and(page.locator('[aria-invalid="true"]')).waitFor();
    await recommend.getByLabel('The client’s needs, as they expressed them').fill('Une voiture pour aller au travail, tous risques.');
    await recommend.getByLabel('Why this offer').fill('La moins chère des offres tous risques.');
    await recommend.getByRole('button', { name: 'Make the advice document' }).click();
    await page.getByText('The advice document is ready: download it and send it to the client.').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download (PDF)' }).click()]);
    const text = pdfText(readFileSync((await download.path())!));
    expect(text).toContain('Léa Martin');
    expect(text).toContain('La moins chère des offres tous risques.');
    expect(text).toContain('Horizon Direct');
    expect(text).toContain('Mutuelle Tradition');

    // The client's page lists the comparison and the document.
    await page.getByRole('link', { name: 'Léa Martin' }).click();
    await page.getByRole('heading', { level: 1, name: 'Léa Martin' }).waitFor();
    await page
      .getByRole('list', { name: 'Comparisons' })
      .getByRole('link', { name: /^Car · / })
      .waitFor();
    const advices = page.getByRole('list', { name: 'Advice documents' });
    await advices.getByRole('link', { name: 'Download (PDF)' }).waitFor();
    await advices.getByText(/^(Horizon Direct|Sandbox Assurances|Mutuelle Tradition), /).waitFor();

    // At phone width the columns stack, nothing scrolls sideways.
    await page
      .getByRole('list', { name: 'Comparisons' })
      .getByRole('link', { name: /^Car · / })
      .click();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByText('Complete', { exact: true }).waitFor();
    await expectNoSidewaysScroll(page);
    expect(await audit(page, 'comparison (phone)')).toEqual([]);
  }, 180_000);

  it('en français : un portail en panne, un code SMS demandé à une personne sans retenir les autres', async () => {
    const user = await brokerWithInsurers('demo-mfa');
    modes.set('tradition', 'down');
    try {
      const page = await signedIn(ui.browser, ui.server, ui.tabs, user, '/console/compare', { locale: 'fr-FR' });
      await page.getByRole('heading', { level: 1, name: 'Comparer' }).waitFor();
      const form = await fillCar(page, FR);
      await form.getByLabel('Puissance fiscale (CV)', { exact: true }).fill('5');
      // The form at phone width: nothing scrolls sideways, and it passes axe in French.
      await page.setViewportSize({ width: 390, height: 844 });
      await expectNoSidewaysScroll(page);
      expect(await audit(page, 'formulaire de comparaison (fr, téléphone)')).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 800 });
      await form.getByRole('button', { name: 'Comparer les assureurs' }).click();
      await page.waitForURL(/\/console\/compare\/[0-9a-f-]{36}$/);

      // The sandbox waits for a person's code; Horizon's offers arrive meanwhile.
      const sandbox = column(page, 'Sandbox Assurances');
      await sandbox.getByText('Le portail demande un code à une personne.').waitFor({ timeout: 60_000 });
      await column(page, 'Horizon Direct').getByRole('article').first().waitFor({ timeout: 60_000 });
      await column(page, 'Mutuelle Tradition').getByText('Pas de tarif', { exact: true }).waitFor({ timeout: 60_000 });
      expect(await audit(page, 'comparaison (fr)')).toEqual([]);

      const prompt = page.getByRole('dialog', { name: 'Code de vérification demandé — Sandbox Assurances' });
      const code = (await sandboxPhoneCodes(ui.server))[0] ?? '';
      await prompt.getByLabel('Code reçu par SMS', { exact: true }).fill(code);
      await prompt.getByRole('button', { name: 'Envoyer le code' }).click();
      await page.getByText('Transmis à Sandbox Assurances : son robot continue.').waitFor();
      await page.getByText('Terminée, certains assureurs sans tarif', { exact: true }).waitFor({ timeout: 90_000 });
      expect(await sandbox.getByRole('article').count()).toBeGreaterThan(0);
      // Tradition's credits came back: two insurers priced.
      expect(creditBalance(ui.server.deps, user.cabinetId)).toBe(280);
      await saveScreenshot(page, 'compare-partial-fr');
    } finally {
      modes.delete('tradition');
    }
  }, 180_000);
});
