// @module-tag browser
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRINGS } from '../../renderer/src/i18n.js';
import { packageRoot } from '../../server/paths.js';
import { openConsole } from '../helpers/console.js';
import { createUser, launchChromium } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * An idle page knows the service stopped: the Jobs page, left open with nothing to do, says the
 * service cannot be reached within seconds of it stopping (its live feed dropping), without any
 * click, in real Chromium against a service that really stops.
 */
let browser: Browser;
let server: TestServer | undefined;
beforeAll(async () => {
  if (!existsSync(join(packageRoot(), 'dist', 'renderer', 'index.html'))) throw new Error('run npm run build first');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close().catch(() => undefined);
});

describe('the service stopping', () => {
  it('is said on an idle page within 5 s', async () => {
    server = await startTestServer();
    const user = await createUser(server, 'Cabinet Veille');
    const page = await openConsole(browser, server, user, '/console/jobs');
    await page.getByRole('heading', { level: 1 }).waitFor();
    // The live feed is connected: the page waits for nothing else.
    await page.getByText('Live updates on').waitFor();
    const stopped = Date.now();
    await server.close();
    server = undefined;
    await page.getByRole('alert').filter({ hasText: STRINGS.en.serviceUnreachable }).waitFor({ timeout: 5_000 });
    console.info(`[timing] the idle Jobs page said the service stopped after ${Date.now() - stopped} ms`);
    expect(Date.now() - stopped).toBeLessThan(5_000);
    await page.context().close();
  }, 60_000);
});
