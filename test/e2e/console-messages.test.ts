// @module-tag browser
import type { Locator, Page } from 'playwright-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { grantCredits } from '../../server/wallet/service.js';
import { openConsole, saveScreenshot } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser, type TestUser } from '../helpers/oauth.js';

/**
 * Messages written for people, in real Chromium against the built console, in French and in
 * English, on a desk (1280×800) and a phone (390×844): the Pricing form's problems next to their
 * fields in the console's language, choices shown by label, the date hint in the picker's order;
 * a webhook to a name that does not exist, tested, says so in words and reads "Failing"; the
 * Webhooks page opens its form on demand and fits a phone without sideways scrolling.
 */

const HOOK = 'https://example.invalid/hook';

let admin: TestUser;
/** The tabs of a test, closed after it: its script errors and console errors fail it. */
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    // An empty DNS table: every name answers as the system's DNS does for a name that does not exist, without asking the network.
    webhooks: { hosts: {} },
  },
});

beforeAll(async () => {
  admin = await createUser(ui.server, 'Cabinet Martin & Fils');
  grantCredits(ui.server.deps, admin.cabinetId, 100);
});
afterEach(() => {
  ui.server.deps.db.sqlite.prepare('DELETE FROM webhook_subscriptions').run();
});

/** Signed in on the page at the viewport, watched for script errors and console errors from its (re)load on. */
async function open(path: string, locale: string, viewport: { width: number; height: number }, allowed: RegExp[] = []): Promise<Page> {
  const page = await openConsole(ui.browser, ui.server, admin, path, locale);
  await page.setViewportSize(viewport);
  ui.watch(page, (text) => allowed.some((re) => re.test(text)));
  await page.reload();
  return page;
}

async function scrollWidth(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth') as Promise<number>;
}

/** The text of what the control's aria-describedby names: its hint and its problem. */
async function description(control: Locator): Promise<string> {
  const ids = (await control.getAttribute('aria-describedby')) ?? '';
  const texts = await Promise.all(
    ids
      .split(' ')
      .filter(Boolean)
      .map((id) => control.page().locator(`[id="${id}"]`).textContent()),
  );
  return texts.join(' | ');
}

const WORDS = {
  fr: {
    locale: 'fr-FR',
    insurer: 'Assureur',
    product: 'Produit',
    check: 'Vérifier (simulation)',
    price: 'Tarifer',
    over: 'Doit valoir au plus 3,5.',
    choice: 'Choisissez parmi : Privé, Professionnel, Mixte.',
    postcode: 'Le format n’est pas celui attendu (par exemple : 69003).',
    required: 'Ce champ est obligatoire.',
    dateHint: 'Date au format jj/mm/aaaa',
    fixFields: 'Certains champs sont à corriger',
    newWebhook: 'Nouveau webhook',
    url: 'URL de destination',
    allEvents: 'Tous les événements',
    create: 'Créer le webhook',
    stored: 'Je l’ai conservé',
    sendTest: 'Envoyer un test',
    noSuchName: 'L’adresse example.invalid n’existe pas',
    testFailed: 'Échec du test.',
    failing: 'En échec',
    homeFailing: 'Un point de réception est en échec : sa dernière livraison n’est pas passée.',
    active: 'Actif',
    showHistory: 'Afficher l’historique des envois',
    failed: 'Échoué',
  },
  en: {
    locale: 'en-GB',
    insurer: 'Insurer',
    product: 'Product',
    check: 'Check (dry run)',
    price: 'Price',
    over: 'Must be at most 3.5.',
    choice: 'Choose one of: Privé, Professionnel, Mixte.',
    postcode: 'This is not in the expected form (for example: 69003).',
    required: 'This field is required.',
    dateHint: 'Date as dd/mm/yyyy',
    fixFields: 'Some fields need fixing',
    newWebhook: 'New webhook',
    url: 'Endpoint URL',
    allEvents: 'All events',
    create: 'Create webhook',
    stored: 'I have stored it',
    sendTest: 'Send test',
    noSuchName: 'The address example.invalid does not exist',
    testFailed: 'Test failed.',
    failing: 'Failing',
    homeFailing: 'One webhook endpoint is failing: its last delivery did not go through.',
    active: 'Active',
    showHistory: 'Show delivery history',
    failed: 'Failed',
  },
} as const;

const VIEWPORTS = [
  { name: 'desk', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** zod's English, which must never reach a broker's screen. */
const RAW = /Too big|Too small|Invalid option|Invalid input|expected one of|network_error|getaddrinfo|ENOTFOUND|Idempotency/;

describe.each(['fr', 'en'] as const)('in %s', (lang) => {
  const w = WORDS[lang];

  describe.each(VIEWPORTS)('on a $name screen', (viewport) => {
    it('Pricing: a value over its maximum and a choice not offered are worded next to their fields; choices show labels', async () => {
      // The refused pricing is a 400, which Chromium reports as a failed resource.
      const page = await open('/console/pricing', w.locale, viewport, [/status of 400/]);
      await page.getByLabel(w.insurer, { exact: true }).selectOption('sandbox');
      await page.getByLabel(w.product, { exact: true }).selectOption('auto');
      const form = page.getByRole('form', { name: 'Assurance auto' });
      const formula = form.getByLabel('Formule', { exact: true });
      await formula.waitFor();

      // Labels, not codes; the code is still the value sent.
      const options = await formula.locator('option').allTextContents();
      expect(options).toContain('Tiers étendu');
      expect(options).not.toContain('tiers_etendu');
      await formula.selectOption({ label: 'Tiers étendu' });
      expect(await formula.inputValue()).toBe('tiers_etendu');
      expect(await form.getByLabel('Usage du véhicule', { exact: true }).locator('option').allTextContents()).toEqual(
        expect.arrayContaining(['Privé', 'Professionnel', 'Mixte']),
      );

      // The date hint is the picker's order (the browser's language: navigator.language) in the console's
      // letters, never the wire format. (Headless Chromium draws its picker en-US whatever the context's
      // locale, so the screenshots show 03/09/1984; a person's browser draws it in its own language.)
      const birth = form.getByLabel('Date de naissance du conducteur', { exact: true });
      expect(await birth.getAttribute('type')).toBe('date');
      expect(await description(birth)).toContain(w.dateHint);
      expect(await form.textContent()).not.toMatch(/AAAA-MM-JJ|YYYY-MM-DD/);

      await form.getByLabel('Nom de l’assuré', { exact: true }).fill('Jeanne Martin');
      await birth.fill('1984-03-09');
      await form.getByLabel('Date d’obtention du permis', { exact: true }).fill('2004-06-01');
      await form.getByLabel('Date de première mise en circulation', { exact: true }).fill('2021-02-15');
      await form.getByLabel('Marque du véhicule (avec le modèle, ou bien l’immatriculation)', { exact: true }).fill('Renault');
      await form.getByLabel('Modèle du véhicule', { exact: true }).fill('Clio');
      const bonus = form.getByLabel('Coefficient bonus-malus (0.50 à 3.50)', { exact: true });
      await bonus.fill('4');
      const postcode = form.getByLabel('Code postal', { exact: true });
      await postcode.fill('6900');
      // A choice the product does not offer (an old form, a hand-edited page): added to the list, then chosen.
      const usage = form.getByLabel('Usage du véhicule', { exact: true });
      await usage.evaluate((select) => {
        const option = (
          select as { ownerDocument: { createElement(tag: string): { value: string; textContent: string } } }
        ).ownerDocument.createElement('option');
        option.value = 'leasing';
        option.textContent = 'leasing';
        (select as unknown as { append(node: unknown): void }).append(option);
      });
      await usage.selectOption('leasing');

      // The free check: each problem next to its field, in the console's language.
      await form.getByRole('button', { name: w.check }).click();
      await form.getByText(w.over).waitFor();
      expect(await bonus.getAttribute('aria-invalid')).toBe('true');
      expect(await description(bonus)).toBe(w.over);
      expect(await usage.getAttribute('aria-invalid')).toBe('true');
      expect(await description(usage)).toBe(w.choice);
      expect(await description(postcode)).toBe(w.postcode);
      expect(await form.textContent()).not.toMatch(RAW);
      await saveScreenshot(page, `messages-pricing-check-${lang}-${viewport.name}`);

      // The real pricing: refused by the service (400), the same sentences from its details, and no job.
      await form.getByRole('button', { name: w.price }).click();
      await page.getByRole('alert').filter({ hasText: w.fixFields }).waitFor();
      expect(await description(bonus)).toBe(w.over);
      expect(await description(usage)).toBe(w.choice);
      expect(await page.locator('main').textContent()).not.toMatch(RAW);
      expect(ui.server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 0 });
      await saveScreenshot(page, `messages-pricing-refused-${lang}-${viewport.name}`);

      // Fixing a field clears its message; emptying a required one says it is required.
      await bonus.fill('1');
      expect(await bonus.getAttribute('aria-invalid')).toBeNull();
      await form.getByLabel('Nom de l’assuré', { exact: true }).fill('');
      await form.getByRole('button', { name: w.check }).click();
      await form.getByText(w.required).first().waitFor();
      expect(await description(form.getByLabel('Nom de l’assuré', { exact: true }))).toBe(w.required);
    });

    it('Webhooks: the list first, the form on demand; a test to a name that does not exist is worded, and the subscription reads Failing', async () => {
      const page = await open('/console/webhooks', w.locale, viewport);
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      expect(await page.getByLabel(w.url).count()).toBe(0);
      if (viewport.width === 390) expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
      await saveScreenshot(page, `messages-webhooks-list-${lang}-${viewport.name}`);

      const open_ = page.getByRole('button', { name: w.newWebhook });
      await open_.click();
      const url = page.getByLabel(w.url);
      await url.waitFor();
      // The cursor is in the form that just opened.
      expect(await url.evaluate((el) => el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(
        true,
      );
      if (viewport.width === 390) expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
      await saveScreenshot(page, `messages-webhooks-form-${lang}-${viewport.name}`);
      await url.fill(HOOK);
      await page.getByLabel(w.allEvents, { exact: true }).check();
      await page.getByRole('button', { name: w.create }).click();
      await page.getByRole('button', { name: w.stored }).click();

      const card = page.getByRole('region', { name: HOOK, exact: true });
      await card.getByText(w.active, { exact: true }).waitFor();
      await card.getByRole('button', { name: w.sendTest }).click();
      // The test's outcome in words: the name does not exist.
      await card.getByRole('status').filter({ hasText: w.testFailed }).waitFor();
      expect(await card.getByRole('status').filter({ hasText: w.testFailed }).textContent()).toContain(w.noSuchName);
      // The badge: Failing, not a green Active.
      await card.getByText(w.failing, { exact: true }).waitFor();
      expect(await card.getByText(w.active, { exact: true }).count()).toBe(0);
      // The history words the attempt too.
      const history = card.getByRole('table');
      await history.getByText(w.failed, { exact: true }).waitFor();
      await history.getByText(w.noSuchName).waitFor();
      expect(await card.textContent()).not.toMatch(RAW);
      if (viewport.width === 390) expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
      await saveScreenshot(page, `messages-webhooks-failing-${lang}-${viewport.name}`);

      // After a reload the card still reads Failing, from what the list says.
      await page.reload();
      await card.getByText(w.failing, { exact: true }).waitFor();
      await card.getByText(w.noSuchName).waitFor();
      // Home reads it by the same rule.
      await page.goto(`${ui.server.url}/console`);
      await page.getByText(w.homeFailing).waitFor();
    });
  });
});
