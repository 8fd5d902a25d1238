// @module-tag browser
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../server/paths.js';
import { initCabinet } from '../../server/tenancy/service.js';
import * as tenancyStore from '../../server/tenancy/store.js';
import { userIdOf } from '../../server/tenancy/sync.js';
import { collectProblems, openConsole } from '../helpers/console.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The Users page of a synced cabinet, in real Chromium, in English and French: a colleague added on
 * another computer (no password here yet), and changes made elsewhere that wait for an
 * administrator of this computer. The rows are written as a pull writes them (server/tenancy/sync.ts).
 */

const BUILT = join(packageRoot(), 'dist', 'renderer');
const ADMIN = { email: 'admin@cabinet-martin.fr', password: 'correct horse battery' };
let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  if (!existsSync(join(BUILT, 'index.html'))) throw new Error(`${BUILT}/index.html is missing: run npm run build first`);
  server = await startTestServer();
  const { cabinet_id: cabinetId } = await initCabinet(server.deps, { cabinet: 'Cabinet Martin', ...ADMIN });
  const row = (email: string, changes: Partial<tenancyStore.UserRow>): tenancyStore.UserRow => ({
    id: userIdOf(cabinetId, email),
    cabinetId,
    email,
    passwordHash: null,
    role: 'broker',
    createdAt: Date.now(),
    disabledAt: null,
    mustChangePassword: false,
    removedAt: null,
    heldRole: null,
    heldDisabledAt: null,
    ...changes,
  });
  tenancyStore.insertUser(server.deps.db.orm, row('julie@cabinet-martin.fr', {}));
  // A password here (scrypt's format; no one signs in with it in this test), promoted on another computer.
  tenancyStore.insertUser(
    server.deps.db.orm,
    row('paul@cabinet-martin.fr', { passwordHash: 'scrypt$16384$8$1$AA==$AA==', role: 'admin', heldRole: 'broker' }),
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the Users page of a synced cabinet', () => {
  it('says who has no password on this computer yet, and what waits for an administrator here', async () => {
    const page = await openConsole(browser, server, ADMIN, '/console/users');
    const problems: string[] = [];
    collectProblems(page, problems);
    const julie = page.getByRole('row', { name: /julie@cabinet-martin\.fr/ });
    await expect.poll(() => julie.textContent()).toContain('No password on this computer yet');
    expect(await julie.textContent()).toContain('reset the password to give this person one here');
    const paul = page.getByRole('row', { name: /paul@cabinet-martin\.fr/ });
    expect(await paul.textContent()).toContain('Made an administrator on another computer');
    expect(await paul.getByRole('cell').nth(0).textContent()).toBe('Broker');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('in French too', async () => {
    const page = await openConsole(browser, server, ADMIN, '/console/users', 'fr-FR');
    const julie = page.getByRole('row', { name: /julie@cabinet-martin\.fr/ });
    await expect.poll(() => julie.textContent()).toContain('Pas encore de mot de passe sur cet ordinateur');
    expect(await page.getByRole('row', { name: /paul@cabinet-martin\.fr/ }).textContent()).toContain(
      'Nommé administrateur sur un autre ordinateur',
    );
    await page.context().close();
  });
});
