// @module-tag postgres
import { describe, expect, it } from 'vitest';
import { completeJob } from '../../server/automation/lifecycle.js';
import { enqueueTarification } from '../../server/automation/service.js';
import * as jobStore from '../../server/automation/store.js';
import * as queueStore from '../../server/automation/store-queue.js';
import { createClient } from '../../server/crm/clients.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createOpportunity, getOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { createDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { createInsurerRegistry } from '../../server/insurers/registry.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { exchangeWalletNow } from '../../server/sync/transfer.js';
import { createHubClient, type HubRefusal } from '../../server/sync/hub-client.js';
import { listSyncConflicts } from '../../server/sync/conflicts.js';
import { formatHlc } from '../../shared/hlc.js';
import { randomUUID } from 'node:crypto';
import * as refusedStore from '../../server/sync/store-refused.js';
import * as store from '../../server/sync/store.js';
import { connectCabinet, disconnectCabinet } from '../../server/sync/service.js';
import { cabinetsAwaitingHub } from '../../server/sync/status.js';
import { CLI_ACTOR, listAudit } from '../../server/audit/service.js';
import { runCourtier } from '../helpers/cli.js';
import { useListeningHub } from '../helpers/use-hub.js';
import {
  backupSyncNode,
  joinNode,
  cabinetOfTwo,
  fetchHub,
  grantOnHub,
  pullNode,
  pushNode,
  restoreSyncNode,
  useSyncInstalls,
  type SyncNode,
} from '../helpers/sync-node.js';

/**
 * What a cabinet's installs meet in their first months — a clock set right, a reconnect, a restored
 * backup — through a real hub on PostgreSQL: nothing acknowledged is lost, and the installs converge.
 */
const fixture = useListeningHub();
const { nodes } = useSyncInstalls();

async function twoInstalls(): Promise<[SyncNode, SyncNode]> {
  const pair = await cabinetOfTwo(fixture.hub, Date.now());
  nodes.push(...pair);
  return pair;
}

const MINUTE = 60_000;
const newOpportunity = {
  title: 'Flotte',
  product: 'auto',
  contact: { last_name: 'G' },
  stage: 'new' as const,
  expected_value_eur: 0,
  tags: [],
};

describe('a clock set right', () => {
  it('stamps the changes it re-stamps after everything of this device the hub holds: a later edit never orders before an earlier one', async () => {
    const [a, b] = await twoInstalls();
    const { opportunity_id: id } = createOpportunity(a.deps, a.cabinetId, newOpportunity, 'api');
    await pushNode(a);
    await pullNode(b);
    // Four minutes ahead: the hub takes it (at most five).
    a.clock.set(Date.now() + 4 * MINUTE);
    updateOpportunity(a.deps, a.cabinetId, id, { title: 'Flotte v1' });
    await pushNode(a);
    // Ten minutes ahead: refused, queued.
    a.clock.set(Date.now() + 10 * MINUTE);
    updateOpportunity(a.deps, a.cabinetId, id, { title: 'Flotte v2' });
    await expect(pushNode(a)).rejects.toMatchObject({ code: 'clock_skew' } satisfies Partial<HubRefusal>);
    // Set right: the queued edit is stamped again, and must still come after v1.
    a.clock.set(Date.now());
    await expect(pushNode(a)).rejects.toMatchObject({ code: 'clock_skew' });
    await pushNode(a);
    await pullNode(b);
    expect(getOpportunity(a.deps, a.cabinetId, id).title).toBe('Flotte v2');
    expect(getOpportunity(b.deps, b.cabinetId, id).title).toBe('Flotte v2');
    const stamps = (
      await fixture.hub.database.sql<
        { hlc: string }[]
      >`SELECT hlc FROM hub_changes WHERE device_id = ${store.findConnection(a.deps.db.orm, a.cabinetId)?.deviceId ?? ''} ORDER BY number`
    ).map((row) => row.hlc);
    expect(stamps).toEqual([...stamps].sort());
  });
});

describe('an install that disconnects and connects again', () => {
  it('sends what changed here meanwhile, with when it changed: a stale value never wins over a later edit made elsewhere', async () => {
    const [a, b] = await twoInstalls();
    const { opportunity_id: id } = createOpportunity(a.deps, a.cabinetId, newOpportunity, 'api');
    await pushNode(a);
    await pullNode(b);
    // An edit queued on A and never sent: disconnecting drops the queue, not the edit.
    a.clock.advance(1000);
    updateOpportunity(a.deps, a.cabinetId, id, { source: 'salon' });
    expect((await disconnectCabinet(a.deps, a.cabinetId, { fetch: fetchHub }, CLI_ACTOR)).left_hub).toBe(true);
    // Meanwhile, B wins the deal; then A, disconnected, edits another field and creates a record.
    b.clock.advance(2000);
    updateOpportunity(b.deps, b.cabinetId, id, { stage: 'won' });
    await pushNode(b);
    a.clock.advance(3000);
    updateOpportunity(a.deps, a.cabinetId, id, { title: 'Flotte 12 véhicules' });
    const { opportunity_id: offline } = createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Créée hors synchro' }, 'api');

    // The operator gives a code that joins the cabinet the hub has: connect takes it as a reconnect.
    const again = await connectCabinet(
      a.deps,
      { cabinetId: a.cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ join: a.cabinetId }), deviceName: 'A' },
      { fetch: fetchHub, records: a.records },
      CLI_ACTOR,
    );
    // The dropped edit, the offline edit, the offline creation and its event: nothing else A holds.
    expect(again).toMatchObject({ reconnected: true, queued: 4 });
    await pushNode(a);
    await pullNode(a);
    await pullNode(b);
    for (const node of [a, b]) {
      expect(getOpportunity(node.deps, node.cabinetId, id)).toMatchObject({ stage: 'won', title: 'Flotte 12 véhicules', source: 'salon' });
      expect(getOpportunity(node.deps, node.cabinetId, offline).title).toBe('Créée hors synchro');
    }
    const row = (node: SyncNode) => node.deps.db.sqlite.prepare('SELECT * FROM opportunities ORDER BY id').all();
    expect(row(a)).toEqual(row(b));
  });

  it('refuses a code that joins another cabinet, and leaves nothing paired', async () => {
    const [a] = await twoInstalls();
    const [other] = await twoInstalls();
    await disconnectCabinet(a.deps, a.cabinetId, { fetch: fetchHub }, CLI_ACTOR);
    const code = await fixture.hub.invite({ join: other.cabinetId });
    await expect(
      connectCabinet(
        a.deps,
        { cabinetId: a.cabinetId, hubUrl: fixture.hub.url, code, deviceName: 'A' },
        { fetch: fetchHub, records: a.records },
        CLI_ACTOR,
      ),
    ).rejects.toMatchObject({ code: 'pairing_code_joins' });
    expect(store.findConnection(a.deps.db.orm, a.cabinetId)).toBeUndefined();
    const live = await fixture.hub.database.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM hub_devices WHERE cabinet_id = ${other.cabinetId} AND revoked_at IS NULL`;
    expect(live[0]?.n).toBe(2);
  });
});

/** The node restored from a backup, in place of the one it replaces (closed with the others). */
function restored(node: SyncNode, backup: string): SyncNode {
  const back = restoreSyncNode(node, backup);
  nodes.splice(nodes.indexOf(node), 1, back);
  return back;
}

const titles = (node: SyncNode) =>
  (node.deps.db.sqlite.prepare('SELECT title FROM opportunities ORDER BY title').all() as { title: string }[]).map((row) => row.title);
const rows = (node: SyncNode) => node.deps.db.sqlite.prepare('SELECT * FROM opportunities ORDER BY id').all();

describe('an install restored from a backup', () => {
  it('loses nothing made after the restore, and gets back from the hub what it made after the backup', async () => {
    const [a, b] = await twoInstalls();
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Avant la sauvegarde' }, 'api');
    await pushNode(a);
    const backup = backupSyncNode(a);
    a.clock.advance(1000);
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Après la sauvegarde' }, 'api');
    await pushNode(a);
    // The laptop's disk dies; last night's copy of its data dir comes back, with the same device credential.
    const back = restored(a, backup);
    back.clock.advance(60_000);
    createOpportunity(back.deps, back.cabinetId, { ...newOpportunity, title: 'Après la restauration' }, 'api');
    // Its next numbers are ones the hub holds for other changes: told so, it numbers again and pulls its own back.
    await pushNode(back);
    await pushNode(back);
    await pullNode(back);
    await pullNode(b);
    const all = ['Après la restauration', 'Après la sauvegarde', 'Avant la sauvegarde'];
    expect(titles(back)).toEqual(all);
    expect(titles(b)).toEqual(all);
    expect(rows(back)).toEqual(rows(b));
    expect(store.findConnection(back.deps.db.orm, back.cabinetId)).toMatchObject({ resyncing: false });
    expect(store.countOutbox(back.deps.db.orm, back.cabinetId)).toBe(0);
  });

  it('learns it at its first pull, before pushing anything, and its robots never start again a job that ran after the backup', async () => {
    const [a] = await twoInstalls();
    a.deps = {
      ...a.deps,
      insurers: createInsurerRegistry([sandboxInsurer({ portalUrl: () => 'http://127.0.0.1:9/sandbox/insurer' })]),
    };
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Roux', first_name: 'Inès' });
    const dicData = {
      insured_name: 'Inès Roux',
      driver_birth_date: '1990-01-01',
      licence_date: '2010-01-01',
      bonus_malus: 1,
      vehicle_make: 'Peugeot',
      vehicle_model: '208',
      first_registration_date: '2020-01-01',
      postcode: '75011',
      usage: 'prive',
      formula: 'tiers',
    };
    const devisId = createDevis(a.deps, a.cabinetId, {
      client_id: client.client_id,
      compagnie: 'sandbox',
      produit: 'auto',
      dicData,
    }).devis_id;
    await grantOnHub(fixture.hub, a.cabinetId, 10);
    await exchangeWalletNow(a.deps, a.cabinetId, fetchHub);
    const { job_id: jobId } = enqueueTarification(
      a.deps,
      a.cabinetId,
      { compagnie: 'sandbox', produit: 'auto', devis_id: devisId, dicData },
      'test',
    );
    await pushNode(a);
    const backup = backupSyncNode(a);
    // After the backup, the robot prices the quote at the insurer.
    const claimed = queueStore.claimNextJob(a.deps.db.orm, a.clock.now(), 60_000);
    expect(claimed?.id).toBe(jobId);
    expect(completeJob(a.deps, claimed!, { outcome: 'complete', tarif_eur: 480 })).toBe(true);
    const ran = jobStore.findJob(a.deps.db.orm, a.cabinetId, jobId);
    expect(ran?.finishedAt).not.toBeNull();
    await pushNode(a);

    // Restored, the install holds the job as pending. The service starts: its robots wait for the hub.
    const back = restored(a, backup);
    back.clock.advance(60_000);
    const startedAt = back.clock.now();
    expect(jobStore.findJob(back.deps.db.orm, back.cabinetId, jobId)?.status).toBe('pending');
    const held = () => ({ cabinetIds: cabinetsAwaitingHub(back.deps, startedAt), queuedBefore: startedAt });
    expect(held().cabinetIds).toEqual([back.cabinetId]);
    expect(queueStore.claimNextJob(back.deps.db.orm, back.clock.now(), 60_000, { held: held() })).toBeUndefined();
    // Had the hub not answered for long, they would have gone ahead.
    expect(cabinetsAwaitingHub(back.deps, startedAt - 31_000)).toEqual([]);

    // Its first pull: the hub holds later changes of its device. It starts over, and gets the job's run back.
    await pullNode(back);
    expect(jobStore.findJob(back.deps.db.orm, back.cabinetId, jobId)).toMatchObject({
      status: ran?.status,
      finishedAt: ran?.finishedAt,
      resultTarifCents: 48_000,
    });
    expect(held().cabinetIds).toEqual([]);
    expect(queueStore.claimNextJob(back.deps.db.orm, back.clock.now(), 60_000, { held: held() })).toBeUndefined();
    expect(listAudit(back.deps, back.cabinetId, { action: 'sync.resynced', limit: 10 }).map((entry) => entry.details)).toEqual([
      expect.objectContaining({ reason: 'install_restored' }),
    ]);
    // Its next change takes a number after the hub's.
    createOpportunity(back.deps, back.cabinetId, { ...newOpportunity, title: 'Après la restauration' }, 'api');
    await pushNode(back);
    expect(store.countOutbox(back.deps.db.orm, back.cabinetId)).toBe(0);
  });
});

describe('a hub restored from a backup', () => {
  it('makes every install pull again and send again what the backup lacks, once the operator says so', () => restoredHub(true));

  it('is found out by the installs themselves when the operator does not say so: a cursor past the hub’s newest change', () =>
    restoredHub(false));
});

/** Two installs, a hub put back to a backup of its changes, with or without `courtier hub restored`: they converge, nothing lost. */
async function restoredHub(operatorSaysSo: boolean): Promise<void> {
  const [a, b] = await twoInstalls();
  createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Avant la sauvegarde du hub' }, 'api');
  await pushNode(a);
  await pullNode(b);
  // The hub's backup: its cabinet's changes as they are now.
  const backup = `backup_${a.cabinetId.replaceAll('-', '_')}`;
  await fixture.hub.database
    .sql`CREATE TABLE ${fixture.hub.database.sql(backup)} AS SELECT * FROM hub_changes WHERE cabinet_id = ${a.cabinetId}`;
  const [cabinetRow] = await fixture.hub.database
    .sql`SELECT next_seq, changes_count, changes_bytes FROM hub_cabinets WHERE id = ${a.cabinetId}`;
  const devicesRow = await fixture.hub.database.sql`SELECT id, last_number FROM hub_devices WHERE cabinet_id = ${a.cabinetId}`;
  a.clock.advance(1000);
  b.clock.advance(1000);
  createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Après, de A' }, 'api');
  createOpportunity(b.deps, b.cabinetId, { ...newOpportunity, title: 'Après, de B' }, 'api');
  await pushNode(a);
  await pushNode(b);
  await pullNode(a);
  await pullNode(b);
  // The hub's database comes back from that backup: what A and B sent since is gone from it.
  await fixture.hub.database.sql.begin(async (tx) => {
    await tx`DELETE FROM hub_changes WHERE cabinet_id = ${a.cabinetId}`;
    await tx`INSERT INTO hub_changes SELECT * FROM ${tx(backup)}`;
    await tx`UPDATE hub_cabinets SET next_seq = ${cabinetRow?.next_seq}, changes_count = ${cabinetRow?.changes_count}, changes_bytes = ${cabinetRow?.changes_bytes} WHERE id = ${a.cabinetId}`;
    for (const device of devicesRow) await tx`UPDATE hub_devices SET last_number = ${device.last_number} WHERE id = ${device.id}`;
  });
  if (operatorSaysSo) {
    const restoredCommand = await runCourtier(['hub', 'restored', '--json', '--database-url', fixture.hub.databaseUrl]);
    expect(restoredCommand.code, restoredCommand.stderr).toBe(0);
  }
  // The installs go on as their services would: each exchange may start them over, then they catch up.
  for (let round = 0; round < 3; round += 1) {
    for (const node of [a, b]) {
      await pushNode(node).catch(() => undefined);
      await pullNode(node).catch(() => undefined);
    }
  }
  const all = ['Après, de A', 'Après, de B', 'Avant la sauvegarde du hub'];
  expect(titles(a)).toEqual(all);
  expect(titles(b)).toEqual(all);
  const onHub = await fixture.hub.database.sql<
    { n: number }[]
  >`SELECT count(DISTINCT record_id)::int AS n FROM hub_changes WHERE cabinet_id = ${a.cabinetId} AND kind = 'opportunity'`;
  expect(onHub[0]?.n).toBe(3);
  for (const node of [a, b]) expect(store.findConnection(node.deps.db.orm, node.cabinetId)).toMatchObject({ resyncing: false });
  const reasons = [a, b].flatMap((node) =>
    listAudit(node.deps, node.cabinetId, { action: 'sync.resynced', limit: 10 }).map(
      (entry) => (entry.details as { reason: string }).reason,
    ),
  );
  expect(reasons.length).toBeGreaterThan(0);
  if (!operatorSaysSo) expect(reasons).toContain('hub_went_back');
}

describe('a history with two contracts of one quote', () => {
  it('joins all the same: one contract applied, the other set aside, as an install of an earlier version (ids of its own) left it on the hub', async () => {
    const [a] = await twoInstalls();
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Petit' });
    const quote = createDevis(a.deps, a.cabinetId, { client_id: client.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
    recordDevisPriced(a.deps, a.cabinetId, quote.devis_id, { tarifEur: 300 });
    signDevis(a.deps, a.cabinetId, quote.devis_id, undefined);
    await pushNode(a);
    const [signed] = await fixture.hub.database.sql<{ fields: Record<string, unknown> }[]>`
      SELECT fields FROM hub_changes WHERE cabinet_id = ${a.cabinetId} AND kind = 'contract'`;
    if (!signed) throw new Error('the contract did not reach the hub');
    // Another install, of a version that made a contract id of its own, signed the same quote offline.
    const paired = await createHubClient({ hubUrl: fixture.hub.url, fetch: globalThis.fetch, now: Date.now }).pair({
      code: await fixture.hub.invite({ join: a.cabinetId }),
      device_name: 'Ancienne version',
    });
    const older = createHubClient({ hubUrl: fixture.hub.url, fetch: globalThis.fetch, now: Date.now, credential: paired.device_secret });
    const otherId = randomUUID();
    await older.push({
      changes: [
        {
          number: 1,
          kind: 'contract',
          record_id: otherId,
          op: 'upsert',
          hlc: formatHlc({ time: Date.now(), counter: 0, device: paired.device_id }),
          fields: signed.fields,
        },
      ],
    });

    const c = await joinNode(fixture.hub, a.cabinetId, Date.now(), 'C');
    nodes.push(c);
    const contracts = c.deps.db.sqlite.prepare('SELECT id FROM contracts WHERE devis_id = ?').all(quote.devis_id) as { id: string }[];
    expect(contracts).toHaveLength(1);
    const both = [(a.deps.db.sqlite.prepare('SELECT id FROM contracts').get() as { id: string }).id, otherId];
    const applied = contracts[0]?.id;
    expect(both).toContain(applied);
    expect(listSyncConflicts(c.deps, c.cabinetId, 10).map((conflict) => [conflict.kind, conflict.record_id])).toEqual([
      ['contract', both.find((id) => id !== applied)],
    ]);
    // And it goes on pulling.
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Après la double signature' }, 'api');
    await pushNode(a);
    await pullNode(c);
    expect(titles(c)).toContain('Après la double signature');
  });
});

/** Pushes until the queue is empty, at most `attempts` times: each refusal of the hub sets a change aside and ends that push. */
async function pushThroughRefusals(node: SyncNode, attempts: number): Promise<void> {
  for (let attempt = 0; attempt < attempts && store.countOutbox(node.deps.db.orm, node.cabinetId) > 0; attempt += 1)
    await pushNode(node).catch(() => undefined);
}

describe('a change the hub refuses for what it holds', () => {
  it('is taken out of the queue and shown, and the changes after it still go', async () => {
    const [a, b] = await twoInstalls();
    // Written past the API's checks (which refuse both since): a NUL, then a title over the hub's 256 KiB.
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Nul\u0000 octet' }, 'api');
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'x'.repeat(300 * 1024) }, 'api');
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Après les refus' }, 'api');
    await pushThroughRefusals(a, 4);
    expect(store.countOutbox(a.deps.db.orm, a.cabinetId)).toBe(0);
    await pullNode(b);
    expect(titles(b)).toEqual(['Après les refus']);
    const refused = refusedStore.listRefused(a.deps.db.orm, a.cabinetId, 10);
    // The oversized opportunity's creation event carries the title too.
    expect(refused.map((row) => [row.kind, row.code]).sort()).toEqual([
      ['event', 'payload_too_large'],
      ['opportunity', 'payload_too_large'],
      ['opportunity', 'validation_error'],
    ]);
    const listed = await runCourtier(['sync', 'conflicts', '--cabinet', a.cabinetId, '--json', '--data-dir', a.dir]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { refused_by_hub: unknown[] }).refused_by_hub).toHaveLength(3);
  });

  it('is forgotten when the client it names is erased: no copy of their data stays in the list', async () => {
    const [a] = await twoInstalls();
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Nul\u0000 Martin', first_name: 'Léa' });
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Nul\u0000 flotte', client_id: client.id }, 'api');
    await pushThroughRefusals(a, 4);
    expect(
      refusedStore
        .listRefused(a.deps.db.orm, a.cabinetId, 10)
        .map((row) => row.kind)
        .sort(),
    ).toEqual(['client', 'opportunity']);
    eraseClient(a.deps, a.cabinetId, client.id);
    expect(refusedStore.countRefused(a.deps.db.orm, a.cabinetId)).toBe(0);
  });

  it('is sent again from the CLI with its own stamp, after what is queued, comes back if refused again, and is discarded', async () => {
    const [a, b] = await twoInstalls();
    const cli = (...args: string[]) => runCourtier(['sync', 'conflicts', ...args, '--cabinet', a.cabinetId, '--json', '--data-dir', a.dir]);
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Nul\u0000 octet' }, 'api');
    await pushThroughRefusals(a, 3);
    const [refused] = refusedStore.listRefused(a.deps.db.orm, a.cabinetId, 10);
    if (!refused) throw new Error('the hub did not refuse the change');
    // Made after the refusal, not pushed yet: the change sent again goes behind it.
    a.clock.set(Date.now() + MINUTE);
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'En attente' }, 'api');

    const sent = await cli('retry', '--refused', 'all');
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toEqual({ queued: 1 });
    const queued = store.readOutboxAfter(a.deps.db.orm, a.cabinetId, 0, 100);
    expect(queued.at(-1)).toMatchObject({ hlc: refused.hlc, recordId: refused.recordId });
    expect(refusedStore.countRefused(a.deps.db.orm, a.cabinetId)).toBe(0);
    // The next change made here is stamped after every change queued before, the one sent again (an older stamp) last in the queue.
    createOpportunity(a.deps, a.cabinetId, { ...newOpportunity, title: 'Après le renvoi' }, 'api');
    const stamps = store.readOutboxAfter(a.deps.db.orm, a.cabinetId, 0, 100).map((row) => row.hlc);
    expect(stamps.at(-1)! > [...stamps.slice(0, -1)].sort().at(-1)!).toBe(true);

    // Still holding a NUL: refused again, back in the list; the changes around it go.
    await pushThroughRefusals(a, 3);
    expect(refusedStore.listRefused(a.deps.db.orm, a.cabinetId, 10).map((row) => row.hlc)).toEqual([refused.hlc]);
    await pullNode(b);
    expect(titles(b)).toEqual(['Après le renvoi', 'En attente']);

    const both = await cli('discard', '--refused', refused.hlc, '--seq', '1');
    expect(both.code).toBe(2);
    const unknown = await cli('discard', '--refused', refused.hlc.replace(/-\d{6}-/, '-999999-'));
    expect(unknown.code).not.toBe(0);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'not_found' });
    const discarded = await cli('discard', '--refused', refused.hlc);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(refusedStore.countRefused(a.deps.db.orm, a.cabinetId)).toBe(0);
    expect(
      (['sync.refused_resent', 'sync.refused_discarded'] as const).map((action) =>
        listAudit(a.deps, a.cabinetId, { action, limit: 10 }).map((entry) => [entry.actor.kind, entry.details]),
      ),
    ).toEqual([[['cli', { queued: 1 }]], [['cli', { hlc: refused.hlc, kind: 'opportunity', code: 'validation_error' }]]]);
  });
});
