// @module-tag browser
// @module-tag postgres
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatHlc } from '../../shared/hlc.js';
import { MAX_RECORD_BYTES } from '../../shared/sync-protocol.js';
import { createOpportunity, getOpportunity } from '../../server/crm/service.js';
import { packageRoot } from '../../server/paths.js';
import { createHubClient } from '../../server/sync/hub-client.js';
import { findConflict, insertConflict } from '../../server/sync/conflicts-store.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { audit } from '../helpers/axe.js';
import { collectProblems, openConsole, saveScreenshot } from '../helpers/console.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The Sync page's Try again through a real hub: the console connects the cabinet, another computer
 * of the cabinet sends changes, and each outcome is said as a broker reads it — still set aside
 * (a value this install refuses, set aside by the sync itself), applied, and no longer on the hub.
 */

const BUILT = join(packageRoot(), 'dist', 'renderer');
const ADMIN = { email: 'admin@cabinet-leroy.fr', password: 'correct horse battery' };

const fixture = useListeningHub();
let server: TestServer;
let browser: Browser;
let cabinetId: string;
let page: Page;
/** The changes set aside by the first test, tried again by the second. */
let setAside: { refused: number; applicable: number; lost: number; recordId: string };
const problems: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(BUILT, 'index.html'))) throw new Error(`${BUILT}/index.html is missing: run npm run build first`);
  server = await startTestServer();
  ({ cabinet_id: cabinetId } = await initCabinet(server.deps, { cabinet: 'Cabinet Leroy', ...ADMIN }));
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Another computer of the cabinet, paired on the hub, that sends changes to an opportunity; each send gives the change's seq on the hub. */
async function otherComputer() {
  const now = () => Date.now();
  const paired = await createHubClient({ hubUrl: fixture.hub.url, fetch: globalThis.fetch, now }).pair({
    code: await fixture.hub.invite({ join: cabinetId }),
    device_name: 'Poste de Julie',
  });
  const client = createHubClient({ hubUrl: fixture.hub.url, fetch: globalThis.fetch, now, credential: paired.device_secret });
  let number = 0;
  return async (recordId: string, fields: Record<string, unknown>): Promise<number> => {
    number += 1;
    const hlc = formatHlc({ time: Date.now(), counter: 0, device: paired.device_id });
    await client.push({ changes: [{ number, kind: 'opportunity', record_id: recordId, op: 'upsert', hlc, fields }] });
    const stored = (await client.pull({ after: 0, own: true })).changes.find((change) => change.hlc === hlc);
    if (stored === undefined) throw new Error(`the hub did not store change ${number}`);
    return stored.seq;
  };
}

/** The records of the changes made here that the hub refused. */
function refusedRecords(): string[] {
  return (server.deps.db.sqlite.prepare('SELECT record_id FROM sync_refused ORDER BY record_id').all() as { record_id: string }[]).map(
    (row) => row.record_id,
  );
}

/** Whether the hub holds a state of the record. */
async function onHub(recordId: string): Promise<boolean> {
  const rows = await fixture.hub.database.sql`SELECT 1 FROM hub_records WHERE record_id = ${recordId}`;
  return rows.length > 0;
}

function conflictSeqs(): number[] {
  return (server.deps.db.sqlite.prepare('SELECT seq FROM sync_conflicts ORDER BY seq').all() as { seq: number }[]).map((row) => row.seq);
}

describe('a set-aside change tried again through a real hub', () => {
  it('connects from the console, then a value this computer refuses is set aside by the sync', async () => {
    page = await openConsole(browser, server, ADMIN, '/console/sync');
    // Every answer here is a success (a change the hub no longer has too): no failed load, no script error.
    collectProblems(page, problems);
    await page.getByLabel('Hub URL').fill(fixture.hub.url);
    await page.getByLabel('Pairing code').fill(await fixture.hub.invite({ register: cabinetId }));
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();

    const opportunity = createOpportunity(
      server.deps,
      cabinetId,
      { title: 'Flotte', product: 'auto', contact: { last_name: 'Leroy' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    const send = await otherComputer();
    // A stage this version does not have: the sync sets it aside, the rest goes on.
    const refused = await send(opportunity.opportunity_id, { stage: 'on_hold' });
    await expect.poll(conflictSeqs, { timeout: 20_000 }).toEqual([refused]);
    // A change the sync applied; recorded here as set aside, as an older Courtier that did not know its field would have.
    const applicable = await send(opportunity.opportunity_id, { title: 'Flotte 12 véhicules' });
    await expect
      .poll(() => getOpportunity(server.deps, cabinetId, opportunity.opportunity_id).title, { timeout: 20_000 })
      .toBe('Flotte 12 véhicules');
    const asBefore = findConflict(server.deps.db.orm, cabinetId, refused);
    if (!asBefore) throw new Error('the refused change is not set aside');
    insertConflict(server.deps.db.orm, {
      ...asBefore,
      seq: applicable,
      fields: '{"title":"Flotte 12 véhicules"}',
      reason: 'not_understood',
      message: 'title: unknown field',
      notUnderstood: '["title"]',
    });
    // One the hub never had (a hub restored from an older backup has lost it).
    insertConflict(server.deps.db.orm, {
      ...asBefore,
      seq: applicable + 1000,
      recordId: 'opp_lost',
      reason: 'not_applicable',
      message: 'refused',
    });

    await page.getByTestId('sync-set-aside').filter({ hasText: '3 changes from other computers, refused by this one' }).waitFor();
    await page.getByTestId('sync-set-aside-list').getByRole('row').filter({ hasText: 'opp_lost' }).waitFor();
    await saveScreenshot(page, 'sync-hub-set-aside');
    setAside = { refused, applicable, lost: applicable + 1000, recordId: opportunity.opportunity_id };
    expect(problems).toEqual([]);
  });

  it('Try again: still set aside, with its reason; no longer on the hub; applied, and the row and the count go', async () => {
    const { refused, applicable, lost, recordId } = setAside;
    const list = page.getByTestId('sync-set-aside-list');
    /** Presses Try again on the row that says `why`, and waits for the answer about change `seq`. */
    const retry = async (seq: number, why: string) => {
      const answer = page.waitForResponse((r) => r.url() === `${server.url}/api/v1/console/sync/conflicts/${seq}/retry`);
      await list
        .getByRole('row')
        .filter({ hasText: why })
        .getByRole('button', { name: /^Try again: / })
        .click();
      expect((await answer).status()).toBe(200);
    };

    await retry(refused, 'A value this computer does not accept');
    await list.getByRole('status').filter({ hasText: 'Still set aside: a value this computer does not accept.' }).waitFor();
    expect(conflictSeqs()).toEqual([refused, applicable, lost]);

    await retry(lost, 'opp_lost');
    await list.getByRole('status').filter({ hasText: 'The hub no longer has it: discard it.' }).waitFor();
    await saveScreenshot(page, 'sync-hub-no-longer-on-hub');

    await retry(applicable, 'It comes from a newer Courtier');
    // Its row gone, what became of it is said above the list.
    await page
      .getByTestId('sync-set-aside-feedback')
      .filter({ hasText: `Applied: this change to opportunity ${recordId} is now on this computer.` })
      .waitFor();
    await page.getByTestId('sync-set-aside').filter({ hasText: '2 changes from other computers, refused by this one' }).waitFor();
    expect(conflictSeqs()).toEqual([refused, lost]);
    expect(await list.locator('tr').filter({ hasText: 'Flotte 12' }).count()).toBe(0);
    await saveScreenshot(page, 'sync-hub-applied');
    expect(problems).toEqual([]);
  });

  it('a change made here that the hub refuses: listed with the hub’s reason, sent again once the hub takes it, discarded; in French too', async () => {
    const limits = fixture.hub.deps.limits;
    const opportunity = (title: string) =>
      createOpportunity(
        server.deps,
        cabinetId,
        { title, product: 'auto', contact: { last_name: 'Leroy' }, stage: 'new', expected_value_eur: 0, tags: [] },
        'api',
      ).opportunity_id;
    // A hub that keeps records of 16 KiB at most, then one of today's limit: a hub its operator updated.
    limits.recordBytes = 16 * 1024;
    try {
      const large = opportunity(`Flotte ${'x'.repeat(20 * 1024)}`);
      // Written past the API, which refuses it since: a value no hub can store.
      const nul = opportunity('Nul\u0000 octet');
      await expect.poll(refusedRecords, { timeout: 20_000 }).toEqual(expect.arrayContaining([large, nul]));
      const count = refusedRecords().length;
      await page
        .getByTestId('sync-refused')
        .filter({ hasText: `${count} changes made here, not on the other computers` })
        .waitFor();
      const list = page.getByTestId('sync-refused-list');
      await list.getByRole('row').filter({ hasText: nul }).filter({ hasText: 'A value the hub does not accept' }).waitFor();
      await list.getByRole('row').filter({ hasText: large }).filter({ hasText: 'Too large for the hub' }).first().waitFor();
      await saveScreenshot(page, 'sync-hub-refused');
      const found = await audit(page, 'changes the hub refused');
      expect(found, found.join('\n')).toEqual([]);

      limits.recordBytes = MAX_RECORD_BYTES;
      const sent = page.waitForResponse((r) => r.url().includes('/api/v1/console/sync/refused/') && r.url().endsWith('/send'));
      await page.getByRole('button', { name: `Send again: opportunity ${large}` }).click();
      expect((await sent).status()).toBe(200);
      await page
        .getByTestId('sync-refused-feedback')
        .filter({ hasText: `This change to opportunity ${large} is on its way to the hub again.` })
        .waitFor();
      await expect.poll(() => onHub(large), { timeout: 20_000 }).toBe(true);
      expect(refusedRecords()).not.toContain(large);

      const french = await openConsole(browser, server, ADMIN, '/console/sync', 'fr-FR');
      await french.getByRole('heading', { name: 'Modifications refusées par le hub' }).waitFor();
      await french
        .getByTestId('sync-refused-list')
        .getByRole('row')
        .filter({ hasText: nul })
        .filter({ hasText: 'Une valeur que le hub n’accepte pas' })
        .waitFor();
      await french.close();

      await page.getByRole('button', { name: `Discard: opportunity ${nul}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Discard this change?' });
      await dialog.getByText('the other computers of the cabinet will never get it').waitFor();
      const discarded = page.waitForResponse((r) => r.url().includes('/api/v1/console/sync/refused/') && r.request().method() === 'DELETE');
      await dialog.getByRole('button', { name: 'Discard' }).click();
      expect((await discarded).status()).toBe(204);
      await page
        .getByTestId('sync-refused-feedback')
        .filter({ hasText: `Discarded: the other computers will not get this change to opportunity ${nul}.` })
        .waitFor();
      expect(refusedRecords()).not.toContain(nul);
      expect(await onHub(nul)).toBe(false);
      const recorded = server.deps.db.sqlite
        .prepare("SELECT action, actor_kind FROM audit_events WHERE action LIKE 'sync.refused_%' ORDER BY at, action")
        .all();
      expect(recorded).toEqual([
        { action: 'sync.refused_resent', actor_kind: 'user' },
        { action: 'sync.refused_discarded', actor_kind: 'user' },
      ]);
      expect(problems).toEqual([]);
    } finally {
      limits.recordBytes = MAX_RECORD_BYTES;
    }
  });
});
