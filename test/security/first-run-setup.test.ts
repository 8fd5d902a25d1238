import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupStateSchema } from '../../shared/console-session.js';
import { errorBodySchema } from '../../shared/errors.js';
import { launchChromium } from '../helpers/oauth.js';
import { lanAddress, lanClient, lanPeerAddress } from '../helpers/peer.js';
import { startTestServer, type StartOptions, type TestServer } from '../helpers/server.js';

const SETUP = '/api/v1/console/setup';
const BODY = JSON.stringify({ cabinet: 'Cabinet du voisin', email: 'voisin@example.fr', password: 'the neighbour password' });

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** An empty install shared on the LAN (COURTIER_HOST=0.0.0.0), as before its owner set it up. */
async function lanInstall(config: StartOptions['config'] = {}): Promise<TestServer> {
  server = await startTestServer({ listenHost: '0.0.0.0', config: { host: '0.0.0.0', ...config } });
  return server;
}

function cabinetCount(s: TestServer): number {
  return (s.deps.db.sqlite.prepare('SELECT count(*) AS n FROM cabinets').get() as { n: number }).n;
}

const jsonPost = (body: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body,
});

describe('CWE-306 Missing authentication for critical function (first-run setup claimed from the network)', () => {
  it('a neighbour on the LAN is told setup is not possible from there, and its POST is refused with 403 setup_local_only', async () => {
    const s = await lanInstall();
    const neighbour = lanClient(s);
    const state = setupStateSchema.parse(await (await neighbour.request(SETUP)).json());
    expect(state, neighbour.via).toEqual({ needed: true, allowed_here: false });

    const refused = await neighbour.request(SETUP, jsonPost(BODY));
    expect(refused.status).toBe(403);
    const body = errorBodySchema.parse(await refused.json());
    expect(body.error).toBe('setup_local_only');
    expect(body.message).toMatch(/on the machine that runs Courtier.*open http:\/\/127\.0\.0\.1:\d+\/console\//);
    expect(refused.headers.getSetCookie()).toEqual([]);
    expect(cabinetCount(s)).toBe(0);
  });

  it('the refusal comes before the body is read: an invalid body from the LAN is 403 too', async () => {
    const s = await lanInstall();
    const refused = await lanClient(s).request(SETUP, jsonPost('{"cabinet": ""}'));
    expect(refused.status).toBe(403);
    expect(errorBodySchema.parse(await refused.json()).error).toBe('setup_local_only');
  });

  it('X-Forwarded-For: 127.0.0.1 does not help, even from a proxy the configuration trusts', async () => {
    for (const trustProxy of [[lanPeerAddress()], 1]) {
      const s = await lanInstall({ trustProxy });
      const refused = await lanClient(s).request(SETUP, jsonPost(BODY, { 'X-Forwarded-For': '127.0.0.1' }));
      expect(refused.status, JSON.stringify(trustProxy)).toBe(403);
      expect(cabinetCount(s)).toBe(0);
      await s.close();
      server = undefined;
    }
  });

  it('a request a trusted proxy on this machine forwards for a LAN client is refused too', async () => {
    server = await startTestServer({ config: { trustProxy: ['127.0.0.1'] } });
    const refused = await server.request(SETUP, jsonPost(BODY, { 'X-Forwarded-For': '192.168.1.50', Origin: server.url }));
    expect(refused.status).toBe(403);
    expect(cabinetCount(server)).toBe(0);
  });

  it('a proxy on this machine that the configuration does not list is not this machine either (its X-Forwarded-For is ignored for the address, not for this)', async () => {
    server = await startTestServer();
    const headers: Record<string, string>[] = [
      { 'X-Forwarded-For': '192.168.1.50' },
      { Forwarded: 'for=192.168.1.50' },
      { 'X-Real-IP': '192.168.1.50' },
    ];
    for (const header of headers) {
      expect(setupStateSchema.parse(await (await server.request(SETUP, { headers: header })).json()).allowed_here).toBe(false);
      const refused = await server.request(SETUP, jsonPost(BODY, { ...header, Origin: server.url }));
      expect(refused.status, JSON.stringify(header)).toBe(403);
    }
    expect(cabinetCount(server)).toBe(0);
  });

  it('the owner, at the machine itself, sets it up (also while it listens on the LAN)', async () => {
    const s = await lanInstall();
    expect(setupStateSchema.parse(await (await s.request(SETUP)).json())).toEqual({ needed: true, allowed_here: true });
    const created = await s.request(SETUP, jsonPost(BODY, { Origin: s.url }));
    expect(created.status).toBe(201);
    expect(cabinetCount(s)).toBe(1);
  });

  describe('the setup page', { tags: ['browser'] }, () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it.skipIf(lanAddress() === null).each([
      ['en-GB', /can only be done on the computer that runs it.*Open the console on that computer/s],
      ['fr-FR', /ne peut se faire que sur l’ordinateur qui l’exécute.*Ouvrez la console sur cet ordinateur/s],
    ])('in %s, opened from another machine, explains where to do the setup instead of showing the form', async (locale, message) => {
      const s = await lanInstall();
      const context = await browser.newContext({ locale });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        await page.goto(`http://${lanAddress() ?? ''}:${new URL(s.url).port}/console/`);
        await page.waitForURL(/\/console\/setup$/);
        const alert = page.getByRole('alert');
        await alert.waitFor();
        expect(await alert.innerText()).toMatch(message);
        expect(await page.getByRole('textbox').count()).toBe(0);
        expect(cabinetCount(s)).toBe(0);
      } finally {
        await context.close();
      }
    });
  });
});
