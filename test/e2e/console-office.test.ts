// @module-tag browser
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initCabinet } from '../../server/tenancy/service.js';
import { caCertificate } from '../../server/lan/office-ca.js';
import { consoleClient, openConsole, saveScreenshot } from '../helpers/console.js';
import { freePort } from '../helpers/free-port.js';
import { lanRequest, testNetwork } from '../helpers/lan.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { join } from 'node:path';

const ADMIN = { email: 'admin@cabinet-roux.fr', password: 'correct horse battery' };

describe('the console’s office pages', () => {
  let server: TestServer;
  let browser: Browser;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    server = await startTestServer({
      network: testNetwork('office-pc', ['127.0.0.2']),
      config: { policyFile: join(tempDir(), 'policy.json'), lanCheckIntervalMs: 600_000 },
    });
    await initCabinet(server.deps, { cabinet: 'Cabinet Roux', ...ADMIN });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('an admin at the machine shares Courtier on the office network: URLs, a QR code and the CA fingerprint to give colleagues', async () => {
    const page = await openConsole(browser, server, ADMIN, '/console/office-network');
    await page.getByRole('heading', { name: 'Not shared: only this computer uses Courtier' }).waitFor();
    await page.getByLabel('Share Courtier on the office network').check();
    // Plain HTTP's port is refused beside the field, in words.
    await page.getByLabel('Port').fill('80');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Port 80 is plain HTTP’s: a browser would not speak HTTPS there. Choose another, such as 8443.').waitFor();
    expect(await page.getByLabel('Port').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Port').fill(String(port));
    await page.getByLabel('Extra names (optional)').fill('courtier.cabinet.lan');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('heading', { name: 'Shared on the office network' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Done' }).textContent()).toBe('Done: applied at once, without a restart.');
    const urls = await page.locator('.office-urls li').allTextContents();
    expect(urls).toEqual([
      `https://office-pc:${port}/console/`,
      `https://office-pc.local:${port}/console/`,
      `https://courtier.cabinet.lan:${port}/console/`,
      `https://127.0.0.2:${port}/console/`,
    ]);
    expect(
      await page
        .getByRole('img', { name: `QR code of https://office-pc:${port}/console/` })
        .locator('rect')
        .count(),
    ).toBeGreaterThan(100);
    const ca = caCertificate(server.deps) ?? '';
    const status = await lanRequest({ address: '127.0.0.2', port, name: 'courtier.cabinet.lan', ca }, '/healthz');
    expect(status.status).toBe(200);
    const fingerprint = await page.locator('.office-fingerprint').textContent();
    expect(fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    await saveScreenshot(page, 'office-network');

    // Turning it off is asked first; keeping it changes nothing.
    await page.getByLabel('Share Courtier on the office network').uncheck();
    await page.getByRole('button', { name: 'Apply' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop sharing Courtier on the office network?' });
    await dialog.getByRole('button', { name: 'Keep sharing' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await lanRequest({ address: '127.0.0.2', port, name: 'courtier.cabinet.lan', ca }, '/healthz')).status).toBe(200);
    await page.getByRole('button', { name: 'Apply' }).click();
    await dialog.getByRole('button', { name: 'Stop sharing' }).click();
    await page.getByRole('heading', { name: 'Not shared: only this computer uses Courtier' }).waitFor();
    await page.getByLabel('Share Courtier on the office network').check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('heading', { name: 'Shared on the office network' }).waitFor();
    await page.context().close();
  });

  it('the audit log page lists what happened, filtered by action; a key is named', async () => {
    const admin = await consoleClient(server, ADMIN);
    const key = await admin.request('/api/v1/console/keys', {
      method: 'POST',
      json: { name: 'Formulaire du site', environment: 'test', scopes: ['crm:read'] },
    });
    expect(key.status).toBe(201);
    const page = await openConsole(browser, server, ADMIN, '/console/audit');
    const table = page.getByRole('region', { name: 'Audit log' });
    await table.locator('tbody tr').first().waitFor();
    const actions = await table.locator('tbody th').allTextContents();
    expect(actions).toEqual(expect.arrayContaining(['Office network sharing on · whole install', 'Signed in']));
    // A key is named, its id beside the name.
    await table.getByRole('row').filter({ hasText: 'Formulaire du site' }).first().waitFor();
    await page.getByLabel('Action').selectOption('lan.enabled');
    await page.getByRole('button', { name: 'Filter' }).click();
    // Turned on twice by the test above (off and on again in between).
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(2);
    expect(await table.locator('tbody tr td').nth(1).textContent()).toBe(ADMIN.email);
    await saveScreenshot(page, 'audit-log');
    await page.context().close();
  });
});
