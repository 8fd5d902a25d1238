// @module-tag browser
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { getCabinetSettings } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { automationStatusSchema } from '../../shared/console-admin.js';
import { MCP_SCOPE_WORDING } from '../../shared/oauth.js';
import { SCOPES } from '../../shared/scopes.js';
import { apiClient } from '../helpers/api.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { postMcp } from '../helpers/mcp.js';
import { consoleClient, saveScreenshot, signedIn } from '../helpers/console.js';
import { authorizeOverHttp, type TestUser } from '../helpers/oauth.js';

/**
 * The admin slice as a new user meets it, in real Chromium against the real app on a fresh install:
 * first-run setup, then API keys, users, a broker's view, settings, wallet and robots, connected
 * apps, and the pages in French. Each page is saved as a screenshot (test-artifacts/screenshots/).
 */

const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'admin@cabinet-durand.fr', password: PASSWORD };
const BROKER = { email: 'broker@cabinet-durand.fr', password: PASSWORD };
/** The browser logs every 401/403 answer as a failed resource; those are expected answers here. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 40[13]/;

let admin: TestUser;
/** The admin's tab from first-run setup on, as the person keeps it open. */
let adminPage: Page;
/** The tabs, watched for script errors, unexpected console errors and CSP refusals, kept open to the end. */
const ui = useConsoleBrowser({ expected: (text) => EXPECTED_NETWORK_ERROR.test(text), timeout: 10_000, closeTabs: 'afterAll' });

describe('the admin console on a fresh install', () => {
  it('first run: /console/ opens the setup page, which creates the cabinet and signs the admin in', async () => {
    const page = await ui.newPage();
    await page.goto(`${ui.server.url}/console/`);
    await page.waitForURL(`${ui.server.url}/console/setup`);
    await page.getByRole('heading', { name: 'Set up Courtier' }).waitFor();
    await expect.poll(() => page.title()).toBe('Set up Courtier · Courtier');

    await page.getByRole('button', { name: 'Create the cabinet' }).click();
    await page.getByRole('alert').filter({ hasText: 'Enter the cabinet name, an email and a password.' }).waitFor();
    await page.getByLabel('Cabinet name').fill('Cabinet Durand');
    await page.getByLabel('Administrator email').fill(ADMIN.email);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm the password').fill('something else entirely');
    await page.getByRole('button', { name: 'Create the cabinet' }).click();
    // Next to the field it concerns, which is marked invalid and described by it.
    await page.getByText('The two passwords are different.').waitFor();
    expect(await page.getByLabel('Confirm the password').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Confirm the password').getAttribute('aria-describedby')).toContain('setup-confirm-error');
    await page.getByLabel('Confirm the password').fill(ADMIN.password);
    await saveScreenshot(page, 'admin-setup');

    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/setup` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create the cabinet' }).click();
    expect((await answer).status()).toBe(201);
    await page.waitForURL(`${ui.server.url}/console/`);
    await page.getByRole('heading', { name: 'Courtier console' }).waitFor();
    await page.getByText(`${ADMIN.email}`).first().waitFor();
    const nav = page.getByRole('navigation', { name: 'Console sections' });
    for (const name of ['API keys', 'Connected apps', 'Wallet & status', 'Users', 'Settings'])
      await nav.getByRole('link', { name }).waitFor();
    adminPage = page;

    const row = ui.server.deps.db.sqlite.prepare('SELECT id, cabinet_id FROM users WHERE email = ?').get(ADMIN.email) as {
      id: string;
      cabinet_id: string;
    };
    admin = { ...ADMIN, userId: row.id, cabinetId: row.cabinet_id };

    // Set up once: the setup page now leads to the sign-in.
    const later = await ui.newPage();
    await later.goto(`${ui.server.url}/console/setup`);
    await later.waitForURL(`${ui.server.url}/console/login`);
  });

  it('API keys: create with two scopes, the value shown once and copied, used with /me, revoked → 401', async () => {
    const page = adminPage;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.server.url });
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${ui.server.url}/console/keys`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByText('No key yet.').waitFor();
    // The list first: the form opens on demand.
    expect(await page.getByRole('button', { name: 'Create the key' }).count()).toBe(0);
    await page.getByRole('button', { name: 'New key' }).click();
    // Every scope is a labelled checkbox with what it allows.
    for (const [scope, description] of Object.entries(SCOPES)) {
      await page.getByRole('checkbox', { name: scope }).waitFor();
      await page.getByText(description).waitFor();
    }

    await page.getByRole('button', { name: 'Create the key' }).click();
    // Each problem beside its field; the sentence under the form says so.
    await page.getByRole('alert').filter({ hasText: 'Some fields need attention: each says what is wrong.' }).waitFor();
    await page.getByText('Give the key a name.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByText('Choose at least one scope.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Website forms');
    await page.getByLabel('Environment').selectOption('prod');
    await page.getByRole('checkbox', { name: 'crm:read' }).check();
    await page.getByRole('checkbox', { name: 'devis:read' }).check();
    await page.getByLabel('IP allowlist (optional)').fill('127.0.0.1\n10.0.0.0/8');
    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/keys` && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create the key' }).click();
    expect((await answer).status()).toBe(201);

    const field = page.getByLabel('New API key');
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^svc_prod_[0-9A-Za-z]{40}$/);
    expect(await field.getAttribute('readonly')).not.toBeNull();
    await page.getByText('This key will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    // A string: this file is compiled without the DOM library.
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await saveScreenshot(page, 'admin-keys-created');

    const me = await apiClient(ui.server, key).get('/me');
    expect(me.status).toBe(200);
    expect(me.body.scopes).toEqual(['crm:read', 'devis:read']);

    // Shown once: after "Done" and a reload, the value is nowhere on the page; the list shows its use.
    await page.getByRole('button', { name: 'Done, I stored it' }).click();
    await page.reload();
    const row = page.getByRole('row', { name: /Website forms/ });
    await row.waitFor();
    expect(await page.content()).not.toContain(key);
    await expect(row.getByRole('cell').nth(2).innerText()).resolves.not.toBe('Never');
    expect(await row.innerText()).toContain(key.slice(0, 13));
    await saveScreenshot(page, 'admin-keys');

    await page.getByRole('button', { name: 'Revoke Website forms' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key “Website forms”?' });
    await dialog.waitFor();
    await saveScreenshot(page, 'admin-keys-revoke');
    // Cancel first: nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await apiClient(ui.server, key).get('/me')).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke Website forms' }).click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The key “Website forms” was revoked.' }).waitFor();
    await row.getByText(/^Revoked/).waitFor();
    const after = await apiClient(ui.server, key).get('/me');
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('api_key_revoked');
  });

  it('Users: the admin creates a broker account', async () => {
    const page = adminPage;
    await page.goto(`${ui.server.url}/console/users`);
    await page.getByRole('row', { name: new RegExp(ADMIN.email) }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill(BROKER.email);
    await page.getByLabel('Password', { exact: true }).fill(BROKER.password);
    await page.getByLabel('Role', { exact: true }).selectOption('broker');
    await page.getByRole('button', { name: 'Create the account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Account ${BROKER.email} created.` })
      .waitFor();
    const row = page.getByRole('row', { name: new RegExp(BROKER.email) });
    await row.getByRole('cell', { name: 'Broker', exact: true }).waitFor();

    // The last admin cannot be demoted (the server refuses it too: 409 last_admin), and the page says why.
    const demote = page.getByRole('button', { name: `Make broker: ${ADMIN.email}` });
    expect(await demote.isDisabled()).toBe(true);
    await page.getByText('The cabinet needs at least one administrator').waitFor();
    expect(await row.getByRole('button', { name: `Make administrator: ${BROKER.email}` }).isEnabled()).toBe(true);
    await saveScreenshot(page, 'admin-users');
  });

  it('a broker: admin pages are not in the navigation, and forced they answer 403', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, BROKER, '/console/');
    const nav = page.getByRole('navigation', { name: 'Console sections' });
    await nav.getByRole('link', { name: 'Connected apps' }).waitFor();
    await nav.getByRole('link', { name: 'Wallet & status' }).waitFor();
    for (const name of ['API keys', 'Users', 'Settings']) expect(await nav.getByRole('link', { name }).count()).toBe(0);

    for (const [path, api] of [
      ['/console/keys', '/api/v1/console/keys'],
      ['/console/users', '/api/v1/console/users'],
    ] as const) {
      const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}${api}`);
      await page.goto(`${ui.server.url}${path}`);
      expect((await answer).status()).toBe(403);
      await page.getByRole('alert').filter({ hasText: 'Only an administrator of the cabinet can open this page.' }).first().waitFor();
    }
    await saveScreenshot(page, 'admin-broker-forbidden');

    // The wallet page reads fine, without the robots' pause.
    await page.goto(`${ui.server.url}/console/wallet`);
    await page.getByRole('heading', { name: 'Robot credits' }).waitFor();
    await page.getByTestId('robots-state').waitFor();
    expect(await page.getByRole('button', { name: /our robots/ }).count()).toBe(0);
  });

  it('Settings: the admin turns LLM data sharing on; the base URL and data dir are read-only', async () => {
    const page = adminPage;
    await page.goto(`${ui.server.url}/console/settings`);
    const toggle = page.getByRole('checkbox', { name: 'Share personal data with AI assistants and webhooks' });
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    await page.getByText('Dupont becomes D***').waitFor();
    await expect(page.getByLabel('Public base URL').inputValue()).resolves.toBe(ui.server.url);
    await expect(page.getByLabel('Data directory').inputValue()).resolves.toBe(ui.server.dataDir);
    expect(await page.getByLabel('Data directory').getAttribute('readonly')).not.toBeNull();

    await toggle.check();
    const privacy = page.getByRole('region', { name: 'Personal data and AI' });
    await privacy.getByRole('button', { name: 'Save' }).click();
    await privacy.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(getCabinetSettings(ui.server.deps, admin.cabinetId).llm_data_sharing).toBe(true);
    await page.reload();
    await page.getByRole('checkbox', { name: 'Share personal data with AI assistants and webhooks', checked: true }).waitFor();

    // The cabinet as its advice documents print it: a wrong ORIAS number is said beside its field, and nothing is saved.
    const identity = page.getByRole('region', { name: 'The cabinet on its documents' });
    await identity.getByLabel('ORIAS number').fill('1234');
    await identity.getByLabel('Postal address').fill('3 rue de la Paix, 75002 Paris');
    await identity.getByRole('button', { name: 'Save' }).click();
    await identity.getByText('Type the 8 digits of the ORIAS number, or leave it empty.').waitFor();
    expect(await identity.getByLabel('ORIAS number').getAttribute('aria-invalid')).toBe('true');
    expect(getCabinetSettings(ui.server.deps, admin.cabinetId).orias).toBeNull();
    await identity.getByLabel('ORIAS number').fill('07012345');
    await identity.getByRole('button', { name: 'Save' }).click();
    await identity.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(getCabinetSettings(ui.server.deps, admin.cabinetId)).toMatchObject({
      orias: '07012345',
      address: '3 rue de la Paix, 75002 Paris',
    });
    await saveScreenshot(page, 'admin-settings');
  });

  it('Wallet & status: the balance after a top-up; the admin pauses the cabinet’s robots and resumes them', async () => {
    grantCredits(ui.server.deps, admin.cabinetId, 120, 'Welcome credits');
    const page = adminPage;
    await page.goto(`${ui.server.url}/console/wallet`);
    await page.getByTestId('wallet-balance').filter({ hasText: '120 credits' }).waitFor();
    await page
      .getByRole('row', { name: /Welcome credits/ })
      .getByRole('cell', { name: '+120' })
      .waitFor();
    await page.getByText('60 of 60 tarifications left this hour').waitFor();
    await page.getByText('Robots are on.').first().waitFor();

    const client = await consoleClient(ui.server, ADMIN);
    await page.getByLabel('Reason (optional)').fill('Insurer portal maintenance');
    await page.getByText('Pausing affects your cabinet only').waitFor();
    await page.getByRole('button', { name: 'Pause our robots' }).click();
    // Asked first; then a banner above every page says so, with the way back.
    await page.getByRole('dialog', { name: 'Pause your cabinet’s robots?' }).getByRole('button', { name: 'Pause our robots' }).click();
    await page.getByTestId('robots-state').filter({ hasText: 'Your cabinet’s robots are paused' }).waitFor();
    await page.getByRole('link', { name: 'Clients', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Your cabinet’s robots are paused: pricings wait.' })
      .getByRole('link', { name: 'Wallet & status' })
      .click();
    await page.getByText('Insurer portal maintenance').waitFor();
    const off = automationStatusSchema.parse(await (await client.request('/api/v1/console/status')).json());
    expect(off).toMatchObject({ robots_enabled: false, kill_switch: null, cabinet_pause: { reason: 'Insurer portal maintenance' } });
    await saveScreenshot(page, 'admin-wallet');

    await page.getByRole('button', { name: 'Resume our robots' }).click();
    await page.getByTestId('robots-state').filter({ hasText: 'Robots are on.' }).waitFor();
    await page.getByText('Your cabinet’s robots are paused: pricings wait.').waitFor({ state: 'detached' });
    const on = automationStatusSchema.parse(await (await client.request('/api/v1/console/status')).json());
    expect(on).toMatchObject({ robots_enabled: true, kill_switch: null, cabinet_pause: null });
  });

  it('Connected apps: a real grant is listed with its scopes, and revoking it kills its token on /mcp', async () => {
    const { tokens } = await authorizeOverHttp(ui.server, admin, 'crm:read devis:read');
    expect((await postMcp(ui.server, tokens.access_token)).status).toBe(200);

    const page = adminPage;
    await page.goto(`${ui.server.url}/console/apps`);
    const card = page.getByRole('article', { name: 'Test assistant' });
    await card.waitFor();
    await card.getByText(MCP_SCOPE_WORDING['crm:read'].en).waitFor();
    await card.getByText(MCP_SCOPE_WORDING['devis:read'].en).waitFor();
    expect(await card.getByText(MCP_SCOPE_WORDING['crm:write'].en).count()).toBe(0);
    await saveScreenshot(page, 'admin-apps');

    await card.getByRole('button', { name: 'Revoke Test assistant' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke access for “Test assistant”?' });
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Access for “Test assistant” was revoked.' }).waitFor();
    await page.getByText('No application is connected to your account.').waitFor();
    expect((await postMcp(ui.server, tokens.access_token)).status).toBe(401);
  });

  it('in French: the browser’s language chooses, with French scope descriptions, and the switch goes to English', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/keys', { locale: 'fr-FR' });
    expect(await page.locator('html').getAttribute('lang')).toBe('fr');
    await page.getByRole('heading', { name: 'Clés d’API', level: 1 }).waitFor();
    await expect.poll(() => page.title()).toBe('Clés d’API · Courtier');
    await page.getByRole('button', { name: 'Nouvelle clé' }).click();
    await page.getByLabel('Nom', { exact: true }).waitFor();
    await page.getByLabel('Environnement').waitFor();
    await page.getByRole('checkbox', { name: 'crm:write' }).waitFor();
    await page.getByText('Créer et modifier des opportunités et des clients.').waitFor();
    await page.getByLabel('Adresses IP autorisées (facultatif)').waitFor();
    await page.getByLabel('Expire le (facultatif)').waitFor();
    await page.getByRole('button', { name: 'Créer la clé' }).waitFor();
    await page
      .getByRole('row', { name: /Website forms/ })
      .getByText(/^Révoquée le/)
      .waitFor();
    const nav = page.getByRole('navigation', { name: 'Rubriques de la console' });
    for (const name of ['Applications connectées', 'Crédits et état', 'Utilisateurs', 'Réglages'])
      await nav.getByRole('link', { name }).waitFor();
    await saveScreenshot(page, 'admin-keys-fr');

    await page.goto(`${ui.server.url}/console/wallet`);
    await page.getByRole('heading', { name: 'Crédits Robot' }).waitFor();
    await page.getByTestId('wallet-balance').filter({ hasText: '120 crédits' }).waitFor();
    await page.getByRole('button', { name: 'Mettre nos robots en pause' }).waitFor();
    await saveScreenshot(page, 'admin-wallet-fr');

    await page.getByLabel('Langue').selectOption('en');
    await page.getByRole('heading', { name: 'Wallet & status', level: 1 }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
  });
});
