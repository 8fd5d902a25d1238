// @module-tag browser
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatHlc } from '../../shared/hlc.js';
import { deviceSecretName } from '../../server/sync/service.js';
import { appendOutbox, findConnection, insertConnection } from '../../server/sync/store.js';
import { insertConflict } from '../../server/sync/conflicts-store.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { addCabinetUser } from '../../server/tenancy/users.js';
import { audit } from '../helpers/axe.js';
import { saveScreenshot, signedIn } from '../helpers/console.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { freePort } from '../helpers/free-port.js';

/**
 * The console's Sync page and the header's sync status, in real Chromium against the real app: the
 * connect form and its refusals (a URL the agent refuses, a hub that does not answer), then a link
 * put in the database as the sync engine leaves it during an outage (the hub is a closed port, so
 * the engine keeps finding it offline), as the admin and a broker see it, with changes set aside
 * (tried again, discarded), catching up after a restored backup, paused, and disconnected.
 * Connecting to a real hub end to end is tested with the hub itself; a set-aside change tried
 * again through a real hub, in console-sync-hub.test.ts.
 */

const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'admin@cabinet-moreau.fr', password: PASSWORD };
const BROKER = { email: 'broker@cabinet-moreau.fr', password: PASSWORD };
/** The refusals the tests provoke (400 invalid_hub_url, 404 not_found, 502 hub_unreachable) are logged by the browser as failed loads. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of (400|404|502)/;

let cabinetId: string;
/** A loopback port nothing listens on: a hub that does not answer. */
let closedPort: number;
/** The admin's tab, kept open from test to test as the person would. */
let adminPage: Page;
/** The tabs the tests open, watched for script errors, unexpected console errors and CSP refusals. */
const ui = useConsoleBrowser({ expected: (text) => EXPECTED_NETWORK_ERROR.test(text), timeout: 10_000, closeTabs: 'afterAll' });

beforeAll(async () => {
  ({ cabinet_id: cabinetId } = await initCabinet(ui.server.deps, { cabinet: 'Cabinet Moreau', ...ADMIN }));
  await addCabinetUser(ui.server.deps, cabinetId, { ...BROKER, role: 'broker' });
  closedPort = await freePort();
});

function connectionRows(): number {
  return (ui.server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM sync_connections').get() as { n: number }).n;
}

function outboxRows(): number {
  return (ui.server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM sync_outbox').get() as { n: number }).n;
}

/** Connects from the form and returns the API's answer. */
async function connect(page: Page, hubUrl: string, code = 'K7QF-2M9X'): Promise<{ status: number; body: { error?: string } }> {
  await page.getByLabel('Hub URL').fill(hubUrl);
  await page.getByLabel('Pairing code').fill(code);
  const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/sync/connect` && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Connect' }).click();
  const response = await answer;
  return { status: response.status(), body: (await response.json()) as { error?: string } };
}

function conflictRows(): number {
  return (ui.server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM sync_conflicts').get() as { n: number }).n;
}

/** A change from another computer of the cabinet, set aside as the engine sets one aside. */
function setAside(seq: number, recordId: string, setAsideAt: number): void {
  insertConflict(ui.server.deps.db.orm, {
    cabinetId,
    seq,
    deviceId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    kind: 'opportunity',
    recordId,
    op: 'upsert',
    hlc: formatHlc({ time: setAsideAt, counter: 0, device: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }),
    fields: JSON.stringify({ stage: 'on_hold' }),
    reason: 'invalid_fields',
    message: 'stage: Invalid option',
    notUnderstood: null,
    setAsideAt,
  });
}

function setResyncing(resyncing: boolean): void {
  ui.server.deps.db.sqlite.prepare('UPDATE sync_connections SET resyncing = ? WHERE cabinet_id = ?').run(resyncing ? 1 : 0, cabinetId);
}

function timeOfDay(ms: number): string {
  const date = new Date(ms);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

const offlineSince = Date.now() - 12 * 60_000;

describe('the Sync page and the header’s sync status', () => {
  it('off: the page says what syncs and shows the connect form; Sync is in the navigation; the header shows nothing', async () => {
    adminPage = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/sync');
    const page = adminPage;
    await page.getByRole('heading', { name: 'Sync', level: 1 }).waitFor();
    await expect.poll(() => page.title()).toBe('Sync · Courtier');
    await page.getByText(/clients, opportunities, quotes with their PDFs, contracts, finished jobs and events/).waitFor();
    await page.getByText(/API keys, webhooks, insurer passwords, the wallet, sessions and connected apps stay on this install/).waitFor();
    await page.getByRole('heading', { name: 'Connect to a hub' }).waitFor();
    await page.getByLabel('Name of this computer (optional)').waitFor();
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Sync', exact: true }).waitFor();
    expect(await page.getByTestId('sync-indicator').innerText()).toBe('');

    // Nothing typed: said beside the field, and nothing sent.
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('alert').filter({ hasText: 'Enter the hub’s URL.' }).waitFor();
    expect(await page.getByLabel('Hub URL').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Hub URL').fill('https://hub.example.fr');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('alert').filter({ hasText: 'Enter the pairing code.' }).waitFor();
    expect(await page.getByLabel('Pairing code').getAttribute('aria-invalid')).toBe('true');
    await saveScreenshot(page, 'sync-off');
  });

  it('a hub URL in clear to another machine: invalid_hub_url, said beside the URL, and nothing written', async () => {
    const page = adminPage;
    const { status, body } = await connect(page, 'http://example.com');
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_hub_url');
    const alert = page.getByRole('alert').filter({ hasText: 'an http:// hub URL is accepted only on this machine' });
    await alert.waitFor();
    expect(await page.getByLabel('Hub URL').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Hub URL').getAttribute('aria-describedby')).toContain((await alert.getAttribute('id')) ?? 'no id');
    expect(await page.getByLabel('Pairing code').getAttribute('aria-invalid')).toBeNull();
    expect(connectionRows()).toBe(0);
    expect(ui.server.deps.secrets.get(deviceSecretName(cabinetId))).toBeUndefined();
    await saveScreenshot(page, 'sync-invalid-url');
  });

  it('a hub that does not answer: hub_unreachable, said beside the URL, and nothing written', async () => {
    const page = adminPage;
    const hubUrl = `http://127.0.0.1:${closedPort}`;
    const { status, body } = await connect(page, hubUrl);
    expect(status).toBe(502);
    expect(body.error).toBe('hub_unreachable');
    await page
      .getByRole('alert')
      .filter({ hasText: `The hub at ${hubUrl} cannot be reached: nothing answers on that port (the hub may be stopped) (ECONNREFUSED)` })
      .waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'fetch failed' }).count(), 'why, not "fetch failed"').toBe(0);
    expect(await page.getByLabel('Hub URL').getAttribute('aria-invalid')).toBe('true');
    expect(connectionRows()).toBe(0);
    expect(outboxRows()).toBe(0);
    expect(await page.getByTestId('sync-indicator').innerText()).toBe('');
  });

  it('linked and offline: the page shows the state, the last problem, the changes waiting and the exchanges; the header says offline', async () => {
    const now = Date.now();
    ui.server.deps.secrets.set(deviceSecretName(cabinetId), '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f.secret-of-the-device');
    ui.server.deps.db.sqlite
      .transaction(() => {
        insertConnection(ui.server.deps.db.orm, {
          cabinetId,
          hubUrl: `http://127.0.0.1:${closedPort}`,
          deviceId: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
          deviceName: 'Poste accueil',
          paused: false,
          nextNumber: 3,
          acknowledgedNumber: 0,
          pullCursor: 0,
          clockTime: now,
          clockCounter: 0,
          acknowledgedClockTime: 0,
          remoteClockTime: 0,
          hubEpoch: null,
          resyncing: false,
          state: 'offline',
          lastError: null,
          lastErrorCode: null,
          lastErrorAt: null,
          offlineSince,
          hubClockOffset: 0,
          lastPushAt: now - 7 * 60_000 - 5000,
          lastPullAt: null,
          caughtUpAt: null,
          connectedAt: now - 3600_000,
        });
        for (const number of [1, 2]) {
          appendOutbox(ui.server.deps.db.orm, {
            cabinetId,
            number,
            kind: 'client',
            recordId: `cli_${number}`,
            op: 'upsert',
            hlc: formatHlc({ time: now, counter: 0, device: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' }),
            fields: JSON.stringify({ nom: `Client ${number}` }),
          });
        }
      })
      .immediate();

    const page = adminPage;
    // The page finds the link on its next refresh, without a reload.
    await page.getByTestId('sync-state').filter({ hasText: 'Offline' }).waitFor();
    await page.getByText('The hub cannot be reached. Changes made here wait').waitFor();
    await page
      .getByTestId('sync-last-error')
      .filter({ hasText: `Last problem: The hub has not answered since ${timeOfDay(offlineSince)}` })
      .waitFor();
    await page.getByTestId('sync-pending').filter({ hasText: '2 changes not yet on the hub' }).waitFor();
    await page.getByText(`http://127.0.0.1:${closedPort}`, { exact: true }).waitFor();
    await page.getByText('Poste accueil').waitFor();
    await page.getByText('4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f').waitFor();
    const facts = page.locator('dl.sync-facts');
    await facts.getByText('7 minutes ago').waitFor();
    expect(await facts.locator('time').first().getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    await facts.getByText('Never').waitFor();

    // The header, on this page and on every other.
    const indicator = page.getByTestId('sync-indicator');
    await indicator.getByRole('link', { name: 'Offline — 2 changes waiting' }).waitFor();
    await saveScreenshot(page, 'sync-offline');
    await page.goto(`${ui.server.url}/console/wallet`);
    const link = page.getByTestId('sync-indicator').getByRole('link', { name: 'Offline — 2 changes waiting' });
    await link.waitFor();
    expect(await link.getAttribute('title')).toContain(`The hub has not answered since ${timeOfDay(offlineSince)}`);
    await link.click();
    await page.waitForURL(`${ui.server.url}/console/sync`);
    await page.getByTestId('sync-state').filter({ hasText: 'Offline' }).waitFor();

    // A change captured meanwhile shows on the page's next refresh (every few seconds).
    appendOutbox(ui.server.deps.db.orm, {
      cabinetId,
      number: 3,
      kind: 'client',
      recordId: 'cli_3',
      op: 'upsert',
      hlc: formatHlc({ time: now, counter: 1, device: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' }),
      fields: '{}',
    });
    await page.getByTestId('sync-pending').filter({ hasText: '3 changes not yet on the hub' }).waitFor();
    // The engine keeps finding the hub offline and leaves the outage's start alone.
    expect(findConnection(ui.server.deps.db.orm, cabinetId)).toMatchObject({ state: 'offline', offlineSince });
  });

  it('in French: the page and the header', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/sync', { locale: 'fr-FR' });
    await page.getByRole('heading', { name: 'Synchronisation', level: 1 }).waitFor();
    await page.getByTestId('sync-state').filter({ hasText: 'Hors ligne' }).waitFor();
    await page.getByTestId('sync-pending').filter({ hasText: '3 modifications pas encore sur le hub' }).waitFor();
    await page
      .locator('dl.sync-facts')
      .getByText(/il y a [78] minutes/)
      .waitFor();
    await page.getByTestId('sync-indicator').getByRole('link', { name: 'Hors ligne — 3 modifications en attente' }).waitFor();
    // The last problem in French too, from its code, not the server's English words.
    await page
      .getByTestId('sync-last-error')
      .filter({ hasText: `Dernier problème : Le hub ne répond plus depuis ${timeOfDay(offlineSince)}` })
      .waitFor();
    await page.getByRole('button', { name: 'Mettre en pause' }).waitFor();
    expect(await page.getByTestId('sync-state').textContent(), 'the state of the link, in French').toContain('Hors ligne');
    expect(await page.getByTestId('sync-last-error').textContent(), 'the last problem, worded in French from its code').toContain(
      `Le hub ne répond plus depuis ${timeOfDay(offlineSince)}`,
    );
    await saveScreenshot(page, 'sync-offline-fr');
  });

  it('a broker: no Sync in the navigation and no controls, but the header says how the sync is doing', async () => {
    const page = await signedIn(ui.browser, ui.server, ui.tabs, BROKER, '/console/');
    const nav = page.getByRole('navigation', { name: 'Console sections' });
    await nav.getByRole('link', { name: 'Wallet & status' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Sync', exact: true }).count()).toBe(0);
    const indicator = page.getByTestId('sync-indicator');
    await indicator.getByText('Offline — 3 changes waiting').waitFor();
    expect(await indicator.getByRole('link').count()).toBe(0);
    await saveScreenshot(page, 'sync-broker-header');

    // Opened by its address, the page reads the status without the administrators' buttons.
    await page.goto(`${ui.server.url}/console/sync`);
    await page.getByTestId('sync-state').filter({ hasText: 'Offline' }).waitFor();
    for (const name of ['Pause sync', 'Resume sync', 'Disconnect', 'Connect'])
      expect(await page.getByRole('button', { name }).count()).toBe(0);
  });

  it('changes set aside: an administrator gets Try again and Discard on each row; a broker sees the count, without the list or the buttons', async () => {
    setAside(41, 'opp_a', Date.now() - 20 * 60_000);
    setAside(42, 'opp_b', Date.now() - 10 * 60_000);
    const page = adminPage;
    await page.getByTestId('sync-set-aside').filter({ hasText: '2 changes from other computers, refused by this one' }).waitFor();
    const list = page.getByTestId('sync-set-aside-list');
    await list.getByRole('row').filter({ hasText: 'opp_b' }).filter({ hasText: 'A value this computer does not accept' }).waitFor();
    for (const record of ['opportunity opp_a', 'opportunity opp_b']) {
      await list.getByRole('button', { name: `Try again: ${record}` }).waitFor();
      await list.getByRole('button', { name: `Discard: ${record}` }).waitFor();
    }
    await saveScreenshot(page, 'sync-set-aside');

    const french = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/sync', { locale: 'fr-FR' });
    await french.getByRole('heading', { name: 'Modifications mises de côté' }).waitFor();
    const liste = french.getByTestId('sync-set-aside-list');
    await liste.getByRole('row').filter({ hasText: 'opp_b' }).filter({ hasText: 'Une valeur que cet ordinateur n’accepte pas' }).waitFor();
    await liste.getByRole('button', { name: 'Réessayer : opportunité opp_b' }).waitFor();
    await liste.getByRole('button', { name: 'Abandonner : opportunité opp_b' }).waitFor();
    await french.close();

    const broker = await signedIn(ui.browser, ui.server, ui.tabs, BROKER, '/console/sync');
    await broker.getByTestId('sync-set-aside').filter({ hasText: '2 changes from other computers' }).waitFor();
    expect(await broker.getByTestId('sync-set-aside-list').count()).toBe(0);
    expect(await broker.getByRole('button', { name: /Try again|Discard/ }).count()).toBe(0);
  });

  it('Try again with the hub out of reach: said under the row, which stays', async () => {
    const page = adminPage;
    const row = page.getByTestId('sync-set-aside-list').getByRole('row').filter({ hasText: 'opp_a' });
    const answer = page.waitForResponse(
      (r) => r.url() === `${ui.server.url}/api/v1/console/sync/conflicts/41/retry` && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Try again: opportunity opp_a' }).click();
    const response = await answer;
    expect(response.status()).toBe(502);
    expect(((await response.json()) as { error: string }).error).toBe('hub_unreachable');
    // Under the row whose button was pressed, in the console's words, and given the focus.
    const said = row.locator('+ tr.sync-feedback-row').getByRole('alert');
    await said.filter({ hasText: 'The sync server cannot be reached. Check its address and the network, then try again.' }).waitFor();
    await expect.poll(() => said.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.getByRole('button', { name: 'Try again: opportunity opp_a' }).waitFor();
    expect(await page.getByTestId('sync-set-aside').innerText()).toBe('2 changes from other computers, refused by this one');
    expect(conflictRows()).toBe(2);
    await saveScreenshot(page, 'sync-set-aside-retry-unreachable');
    // The list, its buttons and the error under a row, on a desktop and on a phone.
    const found = await audit(page, 'set aside, an error under a row');
    await page.setViewportSize({ width: 390, height: 844 });
    found.push(...(await audit(page, 'set aside on a phone')));
    // The list scrolls sideways to its buttons; the error stays in view beside them.
    await page.getByRole('button', { name: 'Try again: opportunity opp_a' }).scrollIntoViewIfNeeded();
    const box = await said.boundingBox();
    expect(box !== null && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await saveScreenshot(page, 'sync-set-aside-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(found, found.join('\n')).toEqual([]);
  });

  it('Discard: asked first (this computer forgets it, the others keep it), then the row and the count go; one gone meanwhile is said', async () => {
    const page = adminPage;
    await page.getByRole('button', { name: 'Discard: opportunity opp_a' }).click();
    const dialog = page.getByRole('dialog', { name: 'Discard this change?' });
    await dialog.getByText('This computer forgets this change to opportunity opp_a for good').waitFor();
    await dialog.getByText('The other computers of the cabinet keep what they applied of it.').waitFor();
    await saveScreenshot(page, 'sync-set-aside-discard');
    const found = await audit(page, 'the discard dialog');
    expect(found, found.join('\n')).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(conflictRows()).toBe(2);

    await page.getByRole('button', { name: 'Discard: opportunity opp_a' }).click();
    const answer = page.waitForResponse(
      (r) => r.url() === `${ui.server.url}/api/v1/console/sync/conflicts/41` && r.request().method() === 'DELETE',
    );
    await dialog.getByRole('button', { name: 'Discard' }).click();
    expect((await answer).status()).toBe(204);
    await page
      .getByRole('status')
      .filter({ hasText: 'Discarded: this computer has forgotten this change to opportunity opp_a.' })
      .waitFor();
    await page.getByTestId('sync-set-aside').filter({ hasText: '1 change from other computers, refused by this one' }).waitFor();
    expect(await page.getByTestId('sync-set-aside-list').getByRole('row').filter({ hasText: 'opp_a' }).count()).toBe(0);
    expect(conflictRows()).toBe(1);
    const recorded = ui.server.deps.db.sqlite.prepare("SELECT actor_kind FROM audit_events WHERE action = 'sync.conflict_discarded'").all();
    expect(recorded).toEqual([{ actor_kind: 'user' }]);

    // Discarded from elsewhere while the dialog is open: the console's words for not_found, and the list empties.
    await page.getByRole('button', { name: 'Discard: opportunity opp_b' }).click();
    await dialog.waitFor();
    ui.server.deps.db.sqlite.prepare('DELETE FROM sync_conflicts WHERE seq = 42').run();
    const gone = page.waitForResponse(
      (r) => r.url() === `${ui.server.url}/api/v1/console/sync/conflicts/42` && r.request().method() === 'DELETE',
    );
    await dialog.getByRole('button', { name: 'Discard' }).click();
    expect((await gone).status()).toBe(404);
    await page
      .getByRole('alert')
      .filter({ hasText: 'This item no longer exists (it may have been deleted meanwhile). Reload the page.' })
      .waitFor();
    await page.getByText('No change is set aside any more.').waitFor();
    await page.getByTestId('sync-set-aside').filter({ hasText: 'None' }).waitFor();
  });

  it('catching up after a restored backup: said in the state and in the header, in English and French', async () => {
    setResyncing(true);
    const page = adminPage;
    await page
      .getByTestId('sync-resyncing')
      .filter({ hasText: 'Catching up with the hub after a restored backup — nothing is lost meanwhile.' })
      .waitFor();
    // The hub (a closed port) is out of reach too: the header says both.
    const link = page.getByTestId('sync-indicator').getByRole('link', { name: 'Offline — catching up after a restored backup' });
    await link.waitFor();
    expect(await link.getAttribute('title')).toContain('Catching up with the hub after a restored backup — nothing is lost meanwhile.');
    await saveScreenshot(page, 'sync-resyncing');
    const found = await audit(page, 'catching up');
    expect(found, found.join('\n')).toEqual([]);

    const french = await signedIn(ui.browser, ui.server, ui.tabs, ADMIN, '/console/sync', { locale: 'fr-FR' });
    await french
      .getByTestId('sync-resyncing')
      .filter({ hasText: 'Remise à niveau avec le hub après la restauration d’une sauvegarde — rien n’est perdu entre-temps.' })
      .waitFor();
    await french
      .getByTestId('sync-indicator')
      .getByRole('link', { name: 'Hors ligne — remise à niveau après une sauvegarde restaurée' })
      .waitFor();

    setResyncing(false);
    await page.getByTestId('sync-resyncing').waitFor({ state: 'detached' });
    await page.getByTestId('sync-indicator').getByRole('link', { name: 'Offline — 3 changes waiting' }).waitFor();
  });

  it('Pause and Resume: the badge, the notice, the header and the row follow', async () => {
    const page = adminPage;
    await page.getByRole('button', { name: 'Pause sync' }).click();
    await page.getByRole('status').filter({ hasText: 'Sync is paused.' }).waitFor();
    await page.getByTestId('sync-paused').filter({ hasText: 'Paused' }).waitFor();
    await page.getByText('Sync is paused: changes made here wait until you resume it').waitFor();
    // The header follows the page's answer at once, not at its own next poll.
    await page.getByTestId('sync-indicator').getByRole('link', { name: 'Sync paused — 3 changes waiting' }).waitFor();
    expect(findConnection(ui.server.deps.db.orm, cabinetId)?.paused).toBe(true);
    expect(
      (ui.server.deps.db.sqlite.prepare('SELECT paused FROM sync_connections WHERE cabinet_id = ?').get(cabinetId) as { paused: number })
        .paused,
    ).toBe(1);
    await saveScreenshot(page, 'sync-paused');

    await page.getByRole('button', { name: 'Resume sync' }).click();
    await page.getByRole('status').filter({ hasText: 'Sync has resumed.' }).waitFor();
    await page.getByTestId('sync-paused').waitFor({ state: 'detached' });
    expect(findConnection(ui.server.deps.db.orm, cabinetId)?.paused).toBe(false);
    await page.getByRole('button', { name: 'Pause sync' }).click();
    await page.getByTestId('sync-paused').waitFor();
    expect(findConnection(ui.server.deps.db.orm, cabinetId)?.paused).toBe(true);
  });

  it('Disconnect: asked first (records stay, the computer leaves the hub), then back to the form and the row gone; a hub out of reach is said', async () => {
    const page = adminPage;
    await page.getByRole('button', { name: 'Disconnect' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect this cabinet from the hub?' });
    await dialog.waitFor();
    await dialog.getByText(/records stay on this install/).waitFor();
    await dialog.getByText(/This computer leaves the hub/).waitFor();
    await saveScreenshot(page, 'sync-disconnect');
    // Cancel first: nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(connectionRows()).toBe(1);

    await page.getByRole('button', { name: 'Disconnect' }).click();
    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/sync` && r.request().method() === 'DELETE');
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    expect((await answer).status()).toBe(200);
    // The hub (a closed port here) could not be told: the notice says whom to ask, and about which device.
    await page
      .getByRole('status')
      .filter({ hasText: 'The hub could not be told: ask its operator to revoke the device 4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f.' })
      .waitFor();
    await page.getByRole('heading', { name: 'Connect to a hub' }).waitFor();
    expect(await page.getByTestId('sync-indicator').innerText()).toBe('');
    expect(connectionRows()).toBe(0);
    expect(outboxRows()).toBe(0);
    expect(ui.server.deps.secrets.get(deviceSecretName(cabinetId))).toBeUndefined();
    await saveScreenshot(page, 'sync-disconnected');
  });
});
