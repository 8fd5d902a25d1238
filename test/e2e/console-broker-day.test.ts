// @module-tag browser
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { shortJobReference } from '../../shared/automation.js';
import { ADMIN_STRINGS } from '../../renderer/src/pages/admin/strings.js';
import { AUTOMATION_STRINGS } from '../../renderer/src/pages/automation/strings.js';
import { JOB_STRINGS } from '../../renderer/src/pages/automation/jobStrings.js';
import { HOME_STRINGS } from '../../renderer/src/pages/homeStrings.js';
import { RECORDS_STRINGS } from '../../renderer/src/pages/records/strings.js';
import { STRINGS, type Lang } from '../../renderer/src/i18n.js';
import { packageRoot } from '../../server/paths.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { collectProblems, sandboxPhoneCodes, saveScreenshot } from '../helpers/console.js';
import { showFolded } from '../helpers/console-browser.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A broker's day in the console, told once in French on a desk (1280×800) and once in English on a
 * phone (390×844), each on a fresh install with the sandbox insurer driven by the real robot:
 * first-run setup → the home checklist says what to do → the insurer's login saved and tested →
 * credits → a client, and a quote for "Dupont" priced from the client's page → the job found by
 * name, its page (inputs in words, steps, credits) → a quote that fails (the insurer's site is down)
 * retried → the client's page shows both quotes → an MFA code typed with the keyboard alone, in the
 * prompt that took the focus → the password changed, and used to sign in again. The words read on
 * the pages are the console's own string tables, in the language of the run.
 */

const BUILT = join(packageRoot(), 'dist', 'renderer');
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a new passphrase for Monday';
/** Before sign-in and before the cabinet exists, the console's own probes answer 401: expected. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 401/;
const AUTO = SANDBOX_PRODUCTS[0];
const MRH = SANDBOX_PRODUCTS[1];

const RUNS = [
  { lang: 'fr', locale: 'fr-FR', viewport: { width: 1280, height: 800 } },
  { lang: 'en', locale: 'en-GB', viewport: { width: 390, height: 844 } },
] as const satisfies readonly { lang: Lang; locale: string; viewport: { width: number; height: number } }[];

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(join(BUILT, 'index.html'))) throw new Error(`${BUILT}/index.html is missing: run npm run build first`);
  mkdirSync('test-artifacts/screenshots', { recursive: true });
  browser = await launchChromium();
});
afterAll(() => browser?.close());

describe.each(RUNS)('a broker’s day, in $lang at $viewport.width px', ({ lang, locale, viewport }) => {
  const t = STRINGS[lang];
  const admin = ADMIN_STRINGS[lang];
  const s = AUTOMATION_STRINGS[lang];
  const j = JOB_STRINGS[lang];
  const h = HOME_STRINGS[lang];
  const r = RECORDS_STRINGS[lang];
  const email = `claire.${lang}@cabinet-lefebvre.fr`;

  let server: TestServer;
  let context: BrowserContext;
  /** The one tab the broker keeps open all day. */
  let page: Page;
  let portal = '';
  let mode: SandboxMode = 'normal';
  const problems: string[] = [];
  let shot = 0;
  let cabinetId = '';
  let clientUrl = '';
  let firstJobId = '';

  beforeAll(async () => {
    server = await startTestServer({
      insurers: [sandboxInsurer({ portalUrl: () => portal })],
      sandboxMode: () => mode,
      config: { tarificationQuotaPerHour: 1000 },
    });
    portal = `${server.url}/sandbox/insurer`;
    context = await browser.newContext({ locale, viewport });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    collectProblems(page, problems, (text) => EXPECTED_NETWORK_ERROR.test(text));
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
  });
  beforeEach(() => {
    problems.length = 0;
  });
  afterEach(() => {
    // No script error, no CSP violation, no unexpected console error anywhere in the day.
    expect(problems).toEqual([]);
  });

  function screenshot(name: string): Promise<void> {
    shot += 1;
    return saveScreenshot(page, `broker-day-${lang}-${viewport.width}-${String(shot).padStart(2, '0')}-${name}`);
  }

  /** Shows what a phone folds behind the Menu button, and gives it back. */
  async function inMenu(target: Locator): Promise<Locator> {
    await showFolded(page, t.menu, target);
    return target;
  }

  async function navigate(label: string, path: string): Promise<void> {
    await (await inMenu(page.getByRole('navigation', { name: t.navigation }).getByRole('link', { name: label, exact: true }))).click();
    await page.waitForURL(`${server.url}${path}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }

  function check(id: string): Locator {
    return page.locator(`[data-check="${id}"]`);
  }

  /** Fills the generated form from the product's example, by field name (the first journey reads the labels). */
  async function fillForm(form: Locator, example: Record<string, string | number>, skip: readonly string[]): Promise<void> {
    for (const [key, value] of Object.entries(example)) {
      if (skip.includes(key)) continue;
      const field = form.locator(`[name="${key}"]`);
      if ((await field.evaluate((el) => el.tagName)) === 'SELECT') await field.selectOption(String(value));
      else await field.fill(String(value));
    }
  }

  /** From the client's page: Pricing opens with the client chosen and the insured's name filled. */
  async function priceForDupont(product: typeof AUTO | typeof MRH, changes: Record<string, string> = {}): Promise<string> {
    await page.goto(clientUrl);
    await page.getByRole('link', { name: r.priceForClient }).click();
    await page.waitForURL(/\/console\/pricing\?client=/);
    await page.getByText(s.clientChosen('Jean Dupont')).waitFor();
    await page.getByLabel(s.insurer, { exact: true }).selectOption('sandbox');
    await page.getByLabel(s.product, { exact: true }).selectOption(product.code);
    const form = page.getByRole('form', { name: product.label });
    await expect.poll(() => form.locator('[name="insured_name"]').inputValue()).toBe('Jean Dupont');
    await fillForm(form, { ...product.example, ...changes }, ['insured_name']);
    await form.getByRole('button', { name: s.price, exact: true }).click();
    await page.waitForURL(/\/console\/jobs\?job=/);
    return new URL(page.url()).searchParams.get('job') ?? '';
  }

  async function openJob(jobId: string): Promise<void> {
    await page.goto(`${server.url}/console/jobs/${jobId}`);
    await page
      .getByRole('heading', { level: 1, name: j.jobTitle('Jean Dupont', AUTO.label) })
      .or(page.getByRole('heading', { level: 1, name: j.jobTitle('Jean Dupont', MRH.label) }))
      .waitFor();
  }

  async function statusOf(jobId: string): Promise<string | null> {
    return page
      .getByRole('row')
      .filter({ hasText: shortJobReference(jobId) })
      .getAttribute('data-status');
  }

  it('first run: the setup page creates the cabinet; home says what to do next', async () => {
    await page.goto(`${server.url}/console/`);
    await page.waitForURL(`${server.url}/console/setup`);
    await page.getByRole('heading', { name: admin.setupTitle }).waitFor();
    await page.getByLabel(admin.cabinetName).fill('Cabinet Lefebvre');
    await page.getByLabel(admin.adminEmail).fill(email);
    await page.getByLabel(admin.password, { exact: true }).fill(PASSWORD);
    await page.getByLabel(admin.confirmPassword).fill(PASSWORD);
    await page.getByRole('button', { name: admin.createCabinet }).click();
    await page.waitForURL(`${server.url}/console/`);
    await page.getByRole('heading', { name: t.homeTitle, level: 1 }).waitFor();

    cabinetId = (server.deps.db.sqlite.prepare('SELECT cabinet_id FROM users WHERE email = ?').get(email) as { cabinet_id: string })
      .cabinet_id;
    // The cabinet's id is on the page, to paste into the CLI.
    await page.getByText(cabinetId).waitFor();
    for (const id of ['insurer', 'credits', 'quote']) await expect.poll(() => check(id).getAttribute('data-done')).toBe('false');
    await check('insurer').getByText(h.insurerMissing(true)).waitFor();
    // No webhook is not a problem: four things left.
    await page.getByText(h.remaining(4)).waitFor();
    await screenshot('home-first');
  });

  it('the insurer’s login saved and tested: the pill says it works, the checklist ticks it', async () => {
    await check('insurer').getByRole('link', { name: h.openInsurers }).click();
    await page.waitForURL(`${server.url}/console/insurers`);
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByLabel(s.login, { exact: true }).fill('demo');
    await sandbox.getByLabel(s.password, { exact: true }).fill('demo');
    await sandbox.getByRole('button', { name: s.saveCredentials }).click();
    await sandbox.getByText(j.loginUntested('demo')).waitFor();
    await sandbox.getByRole('button', { name: s.testLogin }).click();
    await sandbox.getByRole('status').getByText(s.loginOk(false)).waitFor({ timeout: 30_000 });
    // The pill tells the last test, and still does after a reload.
    await page.reload();
    await sandbox.getByText(new RegExp(`^${escape(j.loginWorks('demo', 'X').split('X')[0] ?? '')}`)).waitFor();
    await screenshot('insurer-tested');

    await navigate(t.home, '/console');
    await expect.poll(() => check('insurer').getAttribute('data-done')).toBe('true');
  });

  it('credits: none, then a top-up shows on the checklist', async () => {
    await check('credits').getByText(h.creditsMissing('admin')).waitFor();
    grantCredits(server.deps, cabinetId, 100, 'Welcome credits');
    await page.reload();
    await expect.poll(() => check('credits').getAttribute('data-done')).toBe('true');
    await check('credits').getByText(h.creditsDone(100)).waitFor();
  });

  it('a client, and a quote for Dupont priced from the client’s page', async () => {
    await navigate(r.navClients, '/console/clients');
    await page.getByRole('button', { name: r.newClient }).click();
    const form = page.getByRole('form', { name: r.newClient });
    await form.getByLabel(r.lastName, { exact: true }).fill('Dupont');
    await form.getByLabel(`${r.firstName} (${r.optional})`, { exact: true }).fill('Jean');
    await form.getByRole('button', { name: r.create }).click();
    await page.waitForURL(/\/console\/clients\/[0-9a-f-]{36}$/);
    clientUrl = page.url();
    await page.getByRole('heading', { level: 1, name: 'Jean Dupont' }).waitFor();

    firstJobId = await priceForDupont(AUTO);
    await screenshot('jobs-priced');
    await expect.poll(() => statusOf(firstJobId), { timeout: 60_000, interval: 200 }).toBe('completed');
  });

  it('the job found by name, and its page: inputs in words, the steps, the credits', async () => {
    await navigate(s.jobsTitle, '/console/jobs');
    await page.getByLabel(j.search, { exact: true }).fill('dupont');
    const found = page.getByRole('link', { name: j.openDetail('Jean Dupont') });
    await expect.poll(() => found.count()).toBe(1);
    await screenshot('jobs-search');
    await found.click();
    await page.waitForURL(`${server.url}/console/jobs/${firstJobId}`);
    await page.getByRole('heading', { level: 1, name: j.jobTitle('Jean Dupont', AUTO.label) }).waitFor();
    // The product's labels, not its codes.
    const inputs = page.getByRole('region', { name: j.inputs });
    await inputs.getByText('Tous risques', { exact: true }).waitFor();
    expect(await inputs.getByText('tous_risques').count()).toBe(0);
    expect(await page.getByRole('region', { name: j.timeline }).getByRole('listitem').count()).toBeGreaterThan(3);
    await page.getByText(j.creditsLine({ cost: 10, debited: 10, refunded: 0 }, false)).waitFor();
    // The robot that priced it: its adapter's code and version.
    const robot = page.getByRole('term').filter({ hasText: new RegExp(`^${j.robot}$`) });
    expect(await robot.locator('xpath=following-sibling::dd[1]').textContent()).toBe(
      `sandbox ${server.deps.insurers.get('sandbox')!.version}`,
    );
    await screenshot('job-detail');
  });

  it('a quote that fails (the insurer’s site is down) says so in words, with its refund, and is retried', async () => {
    mode = 'down';
    // Another car: the same data again would be refused as a replay of the first quote.
    const failedId = await priceForDupont(AUTO, { vehicle_model: '2008', formula: 'tiers' });
    await expect.poll(() => statusOf(failedId), { timeout: 60_000, interval: 200 }).toBe('failed');
    mode = 'normal';
    await openJob(failedId);
    await page.getByText(j.creditsLine({ cost: 10, debited: 10, refunded: 10 }, true)).waitFor();
    await screenshot('job-failed');

    await page.getByRole('button', { name: j.retry }).click();
    const dialog = page.getByRole('dialog', { name: j.retryTitle });
    await dialog.getByText(j.retryBody('Jean Dupont', AUTO.label, 10)).waitFor();
    await dialog.getByRole('button', { name: j.retryConfirm }).click();
    await page.waitForURL((url) => /\/console\/jobs\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(failedId));
    const retriedId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    await navigate(s.jobsTitle, '/console/jobs');
    await expect.poll(() => statusOf(retriedId), { timeout: 60_000, interval: 200 }).toBe('completed');
    await screenshot('jobs-retried');
  });

  it('the client’s page shows both priced quotes and the jobs behind them', async () => {
    await page.goto(clientUrl);
    await page.getByRole('heading', { level: 1, name: 'Jean Dupont' }).waitFor();
    const priced = page.getByRole('listitem', { name: `Jean Dupont · ${AUTO.label}` }).filter({ hasText: '€' });
    await expect.poll(() => priced.count()).toBe(2);
    await screenshot('client-two-quotes');
  });

  it('an MFA code typed with the keyboard alone: the prompt takes the focus; title and menu count it', async () => {
    await navigate(s.insurersTitle, '/console/insurers');
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await sandbox.getByLabel(s.login, { exact: true }).fill('demo-mfa');
    await sandbox.getByLabel(s.password, { exact: true }).fill('demo');
    await sandbox.getByRole('button', { name: s.replaceCredentials }).click();
    await sandbox.getByText(j.loginUntested('demo-mfa')).waitFor();

    const jobId = await priceForDupont(MRH);
    const prompt = page.getByRole('dialog', { name: `${s.mfaTitle} — Sandbox Assurances` });
    await prompt.waitFor({ timeout: 30_000 });
    const codeField = prompt.getByLabel(s.codeFrom.sms, { exact: true });
    await expect.poll(() => codeField.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await expect.poll(() => page.title()).toMatch(/\(1\)/);
    await inMenu(page.getByRole('navigation', { name: t.navigation }).getByLabel(t.waitingCount(1)));
    if (viewport.width < 600) await page.getByRole('button', { name: t.menu }).click();
    await screenshot('mfa-prompt');

    // Back in the prompt by keyboard only: the code, then Enter.
    await codeField.focus();
    const code = (await sandboxPhoneCodes(server))[0] ?? '';
    expect(code).toMatch(/^\d{6}$/);
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await prompt.waitFor({ state: 'detached' });
    await expect.poll(() => statusOf(jobId), { timeout: 60_000, interval: 200 }).toBe('completed');
    await expect.poll(() => page.title()).not.toMatch(/\(1\)/);
  });

  it('the password changed from My account, then used to sign in again; home shows the day done', async () => {
    await (await inMenu(page.getByRole('link', { name: email }))).click();
    await page.waitForURL(`${server.url}/console/account`);
    await page.getByLabel(admin.currentPassword, { exact: true }).fill(PASSWORD);
    await page.getByLabel(admin.newPassword, { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel(admin.confirmNewPassword, { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: admin.savePassword }).click();
    await page.getByText(admin.passwordChanged).waitFor();
    await screenshot('password-changed');

    await (await inMenu(page.getByRole('button', { name: t.signOut }))).click();
    await page.waitForURL(/\/console\/login/);
    await page.getByLabel(t.email, { exact: true }).fill(email);
    await page.getByLabel(t.password, { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: t.signIn }).click();
    await page.getByRole('heading', { name: t.homeTitle, level: 1 }).waitFor();
    // The MFA login replaced the tested one, and the pricing made with it since says it works: the day is done.
    for (const id of ['credits', 'quote', 'insurer']) await expect.poll(() => check(id).getAttribute('data-done')).toBe('true');
    await check('insurer').getByText(h.insurerDone).waitFor();
    await screenshot('home-end');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
