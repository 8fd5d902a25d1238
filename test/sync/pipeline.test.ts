// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { createClient } from '../../server/crm/clients.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { HubUnreachable } from '../../server/sync/hub-client.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, deviceSecretName, disconnectCabinet } from '../../server/sync/service.js';
import { syncStatus } from '../../server/sync/status.js';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, SYNC_PROTOCOL_HEADER, SYNC_PROTOCOL_VERSION } from '../../shared/sync-protocol.js';
import { uploadQueue } from '../../server/sync/transfer.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { tempDir } from '../helpers/server.js';
import { fetchHub } from '../helpers/sync-node.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * A large queue goes to the hub two batches at a time (the hub checks one while PostgreSQL stores
 * the other). The hub stores a device's batches one after the other, so a batch that overtakes the
 * one before it is refused as a gap: it is sent again after it, and nothing is stored twice or lost.
 * An install as the CLI opens one (no sync engine), linked to the hub through a proxy that delays
 * or loses pushes. Disconnecting, last: the device leaves the hub, or says it could not.
 */
const PUSH = { method: 'POST', path: /\/sync\/v1\/changes/ };
const RECORDS = 2_500; // three batches of at most 1,000

const fixture = useListeningHub();
const closing: (() => unknown)[] = [];

afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

/** An install holding RECORDS records (its administrator and clients), connected through a fresh proxy: its whole cabinet is queued. */
async function connectedInstall(name: string, records = RECORDS): Promise<{ deps: Deps; cabinetId: string; proxy: FaultProxy }> {
  const dataDir = tempDir();
  const db = openDatabase(databaseFile(dataDir));
  closing.push(() => db.close());
  const deps = defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [], env: {} });
  const { cabinet_id: cabinetId } = await initCabinet(deps, {
    cabinet: `Cabinet ${name}`,
    email: `${name}@example.fr`,
    password: 'correct horse battery',
  });
  for (let i = 1; i < records; i++) createClient(deps, cabinetId, { type: 'person', last_name: `Client ${i}` });
  const proxy = await startFaultProxy(fixture.hub.url);
  closing.push(() => proxy.close());
  const connected = await connectCabinet(
    deps,
    { cabinetId, hubUrl: proxy.url, code: await fixture.hub.invite({ register: cabinetId }), deviceName: name },
    { fetch: fetchHub, records: syncedRecords() },
    CLI_ACTOR,
  );
  expect(connected.queued).toBe(records);
  return { deps, cabinetId, proxy };
}

/** The device's changes on the hub: numbered 1..n, each once. */
async function numbersOnHub(cabinetId: string): Promise<number[]> {
  const rows = await fixture.hub.database.sql<
    { number: string }[]
  >`SELECT number FROM hub_changes WHERE cabinet_id = ${cabinetId} ORDER BY seq`;
  return rows.map((row) => Number(row.number));
}

const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('pushing a large queue, two batches at a time', () => {
  it('sends a batch that overtook the one before it again after that one, storing each change once, in order', async () => {
    const { deps, cabinetId, proxy } = await connectedInstall('depasse');
    // The first batch is held back: the second reaches the hub first and is refused as a gap.
    proxy.inject(PUSH, { kind: 'delay', ms: 1500 });
    const progress: number[] = [];
    const sent = await uploadQueue(deps, syncedRecords(), cabinetId, fetchHub, (done) => progress.push(done));
    expect(sent).toBe(RECORDS);
    expect(progress).toEqual([1000, 2000, RECORDS]);
    expect(await numbersOnHub(cabinetId)).toEqual(oneToN(RECORDS));
    // Three batches, the overtaking one twice (and, on a slow machine, the third as well).
    const pushes = proxy.seen.filter((line) => line.startsWith('POST /sync/v1/changes')).length;
    expect(pushes).toBeGreaterThanOrEqual(4);
    expect(pushes).toBeLessThanOrEqual(5);
    expect(syncStatus(deps, cabinetId).pending_changes).toBe(0);
  });

  it('stops at a batch whose answer was lost, keeps it queued, and the next run stores nothing twice', async () => {
    const { deps, cabinetId, proxy } = await connectedInstall('perdu');
    // The hub stores the first batch, but the answer never arrives.
    proxy.inject(PUSH, { kind: 'drop_response' });
    await expect(uploadQueue(deps, syncedRecords(), cabinetId, fetchHub, () => undefined)).rejects.toBeInstanceOf(HubUnreachable);
    // Queued still: all of it, or what follows the second batch, if that one was stored after the
    // first. The two batches travel at once: when the second reaches the proxy first, its answer is
    // the one lost and the first is acknowledged, so what follows the first is queued.
    expect([RECORDS, RECORDS - 1000, RECORDS - 2000]).toContain(syncStatus(deps, cabinetId).pending_changes);
    expect(await uploadQueue(deps, syncedRecords(), cabinetId, fetchHub, () => undefined)).toBeGreaterThan(0);
    expect(await numbersOnHub(cabinetId)).toEqual(oneToN(RECORDS));
    expect(syncStatus(deps, cabinetId).pending_changes).toBe(0);
  });
});

describe('disconnecting', () => {
  it('makes the device leave the hub: revoked there, its credential refused, its link gone here', async () => {
    const { deps, cabinetId } = await connectedInstall('depart', 3);
    const deviceId = syncStatus(deps, cabinetId).device_id!;
    const credential = deps.secrets.get(deviceSecretName(cabinetId))!;
    expect(await disconnectCabinet(deps, cabinetId, { fetch: fetchHub }, CLI_ACTOR)).toEqual({ left_hub: true, device_id: deviceId });
    expect(syncStatus(deps, cabinetId).state).toBe('off');
    const [device] = await fixture.hub.database.sql<
      { revoked: boolean }[]
    >`SELECT revoked_at IS NOT NULL AS revoked FROM hub_devices WHERE id = ${deviceId}`;
    expect(device?.revoked).toBe(true);
    const refused = await fetch(`${fixture.hub.url}${pathTo(pullChanges)}`, {
      headers: { authorization: `Bearer ${credential}`, [SYNC_PROTOCOL_HEADER]: String(SYNC_PROTOCOL_VERSION) },
    });
    expect(refused.status).toBe(401);
  });

  it('still disconnects when the hub cannot be told, and says so', async () => {
    const { deps, cabinetId, proxy } = await connectedInstall('injoignable', 3);
    const deviceId = syncStatus(deps, cabinetId).device_id!;
    proxy.setDown(true);
    expect(await disconnectCabinet(deps, cabinetId, { fetch: fetchHub }, CLI_ACTOR)).toEqual({ left_hub: false, device_id: deviceId });
    expect(syncStatus(deps, cabinetId).state).toBe('off');
    expect(deps.secrets.get(deviceSecretName(cabinetId))).toBeUndefined();
  });
});
