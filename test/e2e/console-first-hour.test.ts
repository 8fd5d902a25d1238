// @module-tag browser
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTO_FORM_FIELDS } from '../helpers/insurance-data.js';
import { collectProblems } from '../helpers/console.js';
import { launchChromium } from '../helpers/oauth.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A new broker's first quote on a fresh install, timed, in real Chromium, without leaving the
 * console: setup → the checklist's link to Insurers → the demo login filled in and saved → credits
 * added on the Wallet page → a car priced → its premium on the Jobs page. The demo portal answers at
 * once, so the time is the console's and the robot's own. It prints the time and the number of
 * actions (clicks, typed fields, choices): what a person does, their reading and typing aside.
 */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 401/;

let browser: Browser;
let server: TestServer;
let portal = '';
beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer({ insurers: [sandboxInsurer({ portalUrl: () => portal })] });
  portal = `${server.url}/sandbox/insurer`;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('a new broker’s first quote', () => {
  it('from a fresh install to a priced quote in the console alone, well under 3 minutes', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1280, height: 800 } });
    const page: Page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const problems: string[] = [];
    collectProblems(page, problems, (text) => EXPECTED_NETWORK_ERROR.test(text));
    const visited = new Set<string>();
    page.on('framenavigated', (frame) => frame === page.mainFrame() && visited.add(new URL(frame.url()).pathname));
    let actions = 0;
    const act = async (action: Promise<unknown>) => {
      actions += 1;
      await action;
    };
    const started = Date.now();

    // Setup: the cabinet and its administrator.
    await page.goto(`${server.url}/console/`);
    await page.waitForURL(`${server.url}/console/setup`);
    await act(page.getByLabel('Cabinet name').fill('Cabinet Premier'));
    await act(page.getByLabel('Administrator email').fill('anne@cabinet-premier.fr'));
    await act(page.getByLabel('Password', { exact: true }).fill('correct horse battery'));
    await act(page.getByLabel('Confirm the password').fill('correct horse battery'));
    await act(page.getByRole('button', { name: 'Create the cabinet' }).click());

    // The checklist leads to Insurers; the demo insurer fills its own login.
    const insurer = page.locator('[data-check="insurer"]');
    await act(insurer.getByRole('link', { name: 'Go to Insurers' }).click());
    const sandbox = page.getByRole('region', { name: /Sandbox Assurances/ });
    await act(sandbox.getByRole('button', { name: 'Fill in the demo login' }).click());
    await act(sandbox.getByRole('button', { name: 'Save credentials' }).click());
    await sandbox.getByText('Credentials saved.').waitFor();

    // Credits, on the Wallet page.
    await act(page.getByRole('link', { name: 'Wallet & status' }).click());
    const grant = page.getByRole('form', { name: 'Add credits' });
    await act(grant.getByLabel('Credits to add').fill('100'));
    await act(grant.getByLabel('Reason').fill('First purchase'));
    await act(grant.getByRole('button', { name: 'Add the credits' }).click());
    await act(
      page.getByRole('dialog', { name: 'Add 100 credits to the wallet?' }).getByRole('button', { name: 'Add the credits' }).click(),
    );
    await page.getByText('100 credits added; the balance is 100.').waitFor();

    // A car priced; the premium arrives on the Jobs page.
    await act(page.getByRole('link', { name: 'Pricing', exact: true }).click());
    await act(page.getByLabel('Insurer', { exact: true }).selectOption('sandbox'));
    await act(page.getByLabel('Product', { exact: true }).selectOption('auto'));
    const form = page.getByRole('form', { name: 'Assurance auto' });
    for (const [label, value] of Object.entries(AUTO_FORM_FIELDS)) await act(form.getByLabel(label, { exact: true }).fill(value));
    await act(form.getByLabel('Usage du véhicule', { exact: true }).selectOption('prive'));
    await act(form.getByLabel('Formule', { exact: true }).selectOption('tous_risques'));
    await act(form.getByRole('button', { name: 'Price', exact: true }).click());
    await page.waitForURL(/\/console\/jobs\?job=/);
    await page
      .getByText(/^€[\d,.]+ \/ year$/)
      .first()
      .waitFor({ timeout: 120_000 });
    const seconds = (Date.now() - started) / 1000;

    console.log(`first quote from a fresh install: ${seconds.toFixed(1)} s, ${actions} actions, pages: ${[...visited].join(' ')}`);
    expect(seconds).toBeLessThan(180);
    expect([...visited].every((path) => path.startsWith('/console'))).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 200_000);
});
