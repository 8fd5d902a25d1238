// @module-tag browser
import type { Page } from 'playwright-core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { shortJobReference } from '../../shared/automation.js';
import { ADMIN_STRINGS } from '../../renderer/src/pages/admin/strings.js';
import { AUTOMATION_STRINGS } from '../../renderer/src/pages/automation/strings.js';
import { JOB_STRINGS } from '../../renderer/src/pages/automation/jobStrings.js';
import { WEBHOOK_STRINGS } from '../../renderer/src/pages/webhooks/strings.js';
import { STRINGS, type Lang } from '../../renderer/src/i18n.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { consoleClient, expectNoSidewaysScroll, openConsole, saveScreenshot } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { createUser, type TestUser } from '../helpers/oauth.js';

/**
 * The console as an app, in real Chromium, in French and English at 1280×800 and 390×844: menu
 * clicks change the page without reloading it; the header holds one row on a desk and folds behind
 * Menu on a phone; a skip link; Jobs, Keys and Webhooks fit a phone, their create forms open on
 * demand; the service unreachable is said in place and the console recovers by itself; Cancel of
 * a job asks first.
 */

const DESK = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** While the service is cut off, Chromium logs each refused request: expected in that test only. */
const REFUSED = /net::ERR_CONNECTION_REFUSED|Failed to load resource/;

let user: TestUser;
let mode: SandboxMode = 'normal';
let allowRefused = false;
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    sandboxMode: () => mode,
    config: { sandboxLatencyMs: 1000, tarificationQuotaPerHour: 1000 },
  },
  expected: (text) => allowRefused && REFUSED.test(text),
});

beforeAll(async () => {
  user = await createUser(ui.server, 'Cabinet Navigation');
  grantCredits(ui.server.deps, user.cabinetId, 100);
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
  ui.server.createKey(user.cabinetId, { name: 'Formulaire du site — devis auto et habitation' });
  createWebhook(ui.server.deps, user.cabinetId, {
    url: 'https://crm.cabinet-navigation.example/hooks/courtier/events',
    events: ['devis.signed', 'client.erased'],
    description: 'CRM du cabinet',
  });
  // A job priced by the robot, so that Jobs has a card.
  const broker = await consoleClient(ui.server, user);
  const priced = await broker.request('/api/v1/console/tarifications', {
    method: 'POST',
    json: { compagnie: 'sandbox', produit: 'auto', dicData: SANDBOX_PRODUCTS[0].example },
  });
  expect(priced.status).toBe(202);
}, 60_000);

beforeEach(() => {
  allowRefused = false;
});

async function consolePage(lang: Lang, viewport: { width: number; height: number }, path = '/console/'): Promise<Page> {
  const page = await openConsole(ui.browser, ui.server, user, path, lang === 'fr' ? 'fr-FR' : 'en-GB');
  await page.setViewportSize(viewport);
  ui.watch(page);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  return page;
}

const COMBOS = [
  { lang: 'en', viewport: DESK },
  { lang: 'fr', viewport: DESK },
  { lang: 'en', viewport: PHONE },
  { lang: 'fr', viewport: PHONE },
] as const satisfies readonly { lang: Lang; viewport: { width: number; height: number } }[];

describe.each(COMBOS)('the console as an app, in $lang at $viewport.width px', ({ lang, viewport }) => {
  const t = STRINGS[lang];
  const a = ADMIN_STRINGS[lang];
  const s = AUTOMATION_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const w = WEBHOOK_STRINGS[lang];
  const phone = viewport.width < 600;
  const tag = `${lang}-${viewport.width}`;

  async function go(page: Page, label: string, path: string): Promise<void> {
    if (phone) await page.getByRole('button', { name: t.menu }).click();
    await page.getByRole('navigation', { name: t.navigation }).getByRole('link', { name: label, exact: true }).click();
    await page.waitForURL(`${ui.server.url}${path}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }

  it('menu clicks change the page without reloading it; the header holds one row, or folds behind Menu; a skip link', async () => {
    const page = await consolePage(lang, viewport);
    // A mark on the window and on the header: a full reload would lose both.
    await page.evaluate("window.stayed = true; document.querySelector('header').setAttribute('data-stayed', 'yes')");
    const nav = page.getByRole('navigation', { name: t.navigation });
    if (phone) {
      await expect.poll(() => nav.isVisible()).toBe(false);
      await page.getByRole('button', { name: t.menu }).click();
      await expect.poll(() => nav.isVisible()).toBe(true);
      await saveScreenshot(page, `navigation-menu-open-${tag}`);
      await page.getByRole('button', { name: t.menu }).click();
    } else {
      // One row: the brand and Sign out side by side, a header no taller than a button row.
      const brand = await page.getByRole('link', { name: t.appName, exact: true }).boundingBox();
      const signOut = await page.getByRole('button', { name: t.signOut }).boundingBox();
      const header = await page.locator('header').boundingBox();
      expect(Math.abs((brand?.y ?? 0) + (brand?.height ?? 0) / 2 - ((signOut?.y ?? 0) + (signOut?.height ?? 0) / 2))).toBeLessThan(8);
      expect(header?.height ?? 0).toBeLessThan(80);
    }

    await go(page, s.jobsTitle, '/console/jobs');
    await go(page, a.navKeys, '/console/keys');
    await go(page, t.home, '/console');
    expect(await page.evaluate("window.stayed === true && document.querySelector('header').getAttribute('data-stayed') === 'yes'")).toBe(
      true,
    );
    // Back goes back, still without a reload.
    await page.goBack();
    await page.waitForURL(`${ui.server.url}/console/keys`);
    expect(await page.evaluate('window.stayed === true')).toBe(true);

    // The first Tab reaches the skip link; Enter takes the focus to the page's content.
    await page.goto(`${ui.server.url}/console/jobs`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: t.skipToContent });
    await expect.poll(() => skip.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.tagName')).toBe('MAIN');
  });

  it('Jobs, Keys and Webhooks fit the window; the Keys and Webhooks forms open on demand', async () => {
    const page = await consolePage(lang, viewport, '/console/jobs');
    await page
      .getByRole('link', { name: j.openDetail('Jean Dupont') })
      .first()
      .waitFor();
    await expectNoSidewaysScroll(page);
    await saveScreenshot(page, `navigation-jobs-${tag}`);

    await go(page, a.navKeys, '/console/keys');
    await page.getByText('Formulaire du site — devis auto et habitation').first().waitFor();
    expect(await page.getByRole('button', { name: a.createKey }).count()).toBe(0);
    await expectNoSidewaysScroll(page);
    await page.getByRole('button', { name: a.newKeyButton }).click();
    await page.getByRole('heading', { name: a.newKey }).waitFor();
    await page.getByRole('button', { name: a.createKey }).waitFor();
    await expectNoSidewaysScroll(page);
    await saveScreenshot(page, `navigation-keys-form-${tag}`);

    await go(page, 'Webhooks', '/console/webhooks');
    await page.getByText('CRM du cabinet').first().waitFor();
    expect(await page.getByLabel(w.url, { exact: true }).count()).toBe(0);
    await expectNoSidewaysScroll(page);
    await page.getByRole('button', { name: w.newWebhook }).click();
    await page.getByLabel(w.url, { exact: true }).waitFor();
    await expectNoSidewaysScroll(page);
    await saveScreenshot(page, `navigation-webhooks-form-${tag}`);
  });

  it('the service unreachable: said in place, then the page comes back by itself', async () => {
    const page = await consolePage(lang, viewport, '/console/wallet');
    allowRefused = true;
    await page.context().route(`${ui.server.url}/**`, (route) => route.abort('connectionrefused'));
    await go(page, s.jobsTitle, '/console/jobs');
    const banner = page.getByRole('alert').filter({ hasText: t.serviceUnreachable });
    await banner.waitFor();
    expect(await banner.count(), 'one banner says the service cannot be reached, in place of the page').toBe(1);
    await saveScreenshot(page, `navigation-unreachable-${tag}`);
    await page.context().unroute(`${ui.server.url}/**`);
    // The health check is asked every few seconds: the banner goes and the jobs load.
    await banner.waitFor({ state: 'detached', timeout: 15_000 });
    await page
      .getByRole('link', { name: j.openDetail('Jean Dupont') })
      .first()
      .waitFor();
    expect(await banner.count(), 'the banner is gone once the service answers again').toBe(0);
    expect(await page.getByRole('link', { name: j.openDetail('Jean Dupont') }).count(), 'the jobs are listed again').toBeGreaterThan(0);
  });
});

describe('Cancel', () => {
  it('asks first, names the client, and Keep it running keeps it; confirmed, the job is cancelled and refunded', async () => {
    const j = JOB_STRINGS.en;
    const s = AUTOMATION_STRINGS.en;
    mode = 'slow';
    try {
      const broker = await consoleClient(ui.server, user);
      const priced = await broker.request('/api/v1/console/tarifications', {
        method: 'POST',
        json: { compagnie: 'sandbox', produit: 'mrh', dicData: { ...SANDBOX_PRODUCTS[1].example, insured_name: 'Lucie Bernard' } },
      });
      expect(priced.status).toBe(202);
      const jobId = ((await priced.json()) as { job_id: string }).job_id;
      const page = await consolePage('en', DESK, '/console/jobs');
      const row = page.getByRole('row').filter({ hasText: shortJobReference(jobId) });
      await row.getByRole('button', { name: s.cancelJob('Lucie Bernard') }).click();
      const dialog = page.getByRole('dialog', { name: j.cancelTitle });
      await dialog.getByText(j.cancelBody('Lucie Bernard')).waitFor();
      await dialog.getByRole('button', { name: j.keepRunning }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await row.getAttribute('data-status')).not.toBe('cancelled');

      await row.getByRole('button', { name: s.cancelJob('Lucie Bernard') }).click();
      await page.getByRole('dialog', { name: j.cancelTitle }).getByRole('button', { name: j.cancelConfirm }).click();
      await expect.poll(() => row.getAttribute('data-status'), { timeout: 20_000 }).toBe('cancelled');
      await row.getByText(j.refundedShort(10)).waitFor();
      await saveScreenshot(page, 'navigation-cancelled-en-1280');
      // Its quote reads Cancelled, not Failed.
      await page.goto(`${ui.server.url}/console/quotes`);
      await page
        .getByRole('listitem')
        .filter({ hasText: shortJobReference(jobId) })
        .getByText('Cancelled', { exact: true })
        .waitFor();
    } finally {
      mode = 'normal';
    }
  });
});
