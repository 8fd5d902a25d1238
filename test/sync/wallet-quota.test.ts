// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { createLogger } from '../../server/platform/logging.js';
import { createSyncEngine } from '../../server/sync/engine.js';
import { connectCabinet } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { getWallet, grantCredits } from '../../server/wallet/service.js';
import { createOpportunity } from '../../server/crm/service.js';
import { eventually } from '../helpers/eventually.js';
import { startListeningHub, type ListeningHub } from '../helpers/hub-server.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { closeSyncNode, exchangeNode, fetchHub, openSyncNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * An install whose cabinet reached the hub's quota of credits entries, through a real hub on
 * PostgreSQL: as with changes, it keeps its entries pending and shows the refusal, and they go once
 * the hub's operator raises the quota.
 */
let pg: TestPostgres | undefined;
let hub: ListeningHub | undefined;
const nodes: SyncNode[] = [];

afterAll(async () => {
  for (const node of nodes) closeSyncNode(node);
  await hub?.close();
  await pg?.stop();
});

let postcode = 30_000;
function enqueue(on: SyncNode): void {
  postcode += 1;
  enqueueTarification(
    on.deps,
    on.cabinetId,
    { compagnie: 'testco', produit: 'auto', dicData: { postcode: String(postcode), birth_date: '1984-03-09', formula: 'tiers' } },
    'prod',
  );
}

async function hubEntries(cabinetId: string): Promise<number> {
  const [row] = await (hub as ListeningHub).database.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId}`;
  return row?.n ?? -1;
}

async function hubChangesOf(cabinetId: string, kind: string): Promise<number> {
  const [row] = await (hub as ListeningHub).database.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = ${cabinetId} AND kind = ${kind}`;
  return row?.n ?? -1;
}

/**
 * An install of a cabinet whose hub holds the quota of 3 wallet entries (the opening and two
 * debits), with a third debit pending here, and its engine started.
 */
async function installAtQuota(name: string, refusedRetryMs: number) {
  if (!pg) pg = await startTestPostgres();
  const databaseUrl = await pg.createDatabase();
  await hub?.close();
  hub = await startListeningHub(databaseUrl, { limits: { cabinetWalletEntries: 3 } });
  const opened = openSyncNode(Date.now(), undefined, undefined, [createTestInsurer()]);
  const { cabinet_id: cabinetId } = await initCabinet(opened.deps, {
    cabinet: name,
    email: 'a@q.fr',
    password: 'correct horse battery',
  });
  const install = { ...opened, cabinetId };
  nodes.push(install);
  setInsurerCredentials(install.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  grantCredits(install.deps, cabinetId, 100);
  await connectCabinet(
    install.deps,
    { cabinetId, hubUrl: hub.url, code: await hub.invite({ register: cabinetId }), deviceName: 'A' },
    { fetch: fetchHub, records: install.records },
    CLI_ACTOR,
  );
  await pushNode(install);
  enqueue(install);
  enqueue(install);
  // The opening and two debits: the cabinet's quota.
  await exchangeNode(install);
  expect(await hubEntries(cabinetId)).toBe(3);
  enqueue(install);

  const engine = createSyncEngine(install.deps, {
    logger: createLogger({ level: 'silent' }),
    records: install.records,
    pullWaitSeconds: 1,
    pushIntervalMs: 200,
    refusedRetryMs,
    maxBackoffMs: 200,
  });
  engine.start();
  return { install, cabinetId, databaseUrl, engine };
}

describe('a cabinet over the hub’s quota of credits entries', () => {
  it('keeps the install’s entries pending and shows hub_quota_exceeded; they go once the operator raises the quota', async () => {
    const { install, cabinetId, databaseUrl, engine } = await installAtQuota('Cabinet Quota', 200);
    try {
      const status = await eventually(
        () => syncStatus(install.deps, cabinetId),
        (s) => s.last_error_code === 'hub_quota_exceeded',
        'the refusal shown',
        10_000,
      );
      expect(status.last_error).toMatch(/quota of wallet entries \(3\)/);
      expect(getWallet(install.deps, cabinetId)).toMatchObject({ balance: 70, unconfirmed_credits: 10 });
      expect(install.deps.db.sqlite.prepare("SELECT hub_state FROM wallet_ledger WHERE kind = 'debit' ORDER BY id").pluck().all()).toEqual([
        'held',
        'held',
        'pending',
      ]);
      expect(await hubEntries(cabinetId)).toBe(3);

      // The operator raises COURTIER_HUB_CABINET_MAX_WALLET_ENTRIES and restarts the hub: the debit goes.
      const port = Number(new URL((hub as ListeningHub).url).port);
      await hub?.close();
      hub = await startListeningHub(databaseUrl, { port, limits: { cabinetWalletEntries: 10 } });
      await eventually(
        () => getWallet(install.deps, cabinetId).unconfirmed_credits,
        (pending) => pending === 0,
        'the debit acknowledged',
        15_000,
      );
      expect(await hubEntries(cabinetId)).toBe(4);
      await eventually(
        () => syncStatus(install.deps, cabinetId).last_error_code,
        (code) => code === null,
        'the refusal cleared',
        10_000,
      );
    } finally {
      await engine.stop();
    }
  }, 60_000);

  it('goes on pushing and pulling records while the wallet waits to be tried again, with the refusal still shown', async () => {
    // A wait far longer than the test: a record that arrives did not wait for the wallet.
    const { install, cabinetId, engine } = await installAtQuota('Cabinet Quota Records', 120_000);
    try {
      await eventually(
        () => syncStatus(install.deps, cabinetId).last_error_code,
        (code) => code === 'hub_quota_exceeded',
        'the refusal shown',
        10_000,
      );
      const before = await hubChangesOf(cabinetId, 'opportunity');
      createOpportunity(
        install.deps,
        cabinetId,
        { title: 'Flotte', product: 'auto', contact: { last_name: 'Martin' }, stage: 'new', expected_value_eur: 900, tags: [] },
        'api',
      );
      await eventually(
        () => hubChangesOf(cabinetId, 'opportunity'),
        (n) => n === before + 1,
        'the opportunity pushed while the wallet waits',
        10_000,
      );
      expect(syncStatus(install.deps, cabinetId).last_error_code).toBe('hub_quota_exceeded');
      expect(getWallet(install.deps, cabinetId)).toMatchObject({ unconfirmed_credits: 10 });
    } finally {
      await engine.stop();
    }
  }, 60_000);
});
