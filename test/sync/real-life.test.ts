// @module-tag postgres
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpportunity, getOpportunity, updateOpportunity } from '../../server/crm/service.js';
import type { HubRefusal } from '../../server/sync/hub-client.js';
import * as store from '../../server/sync/store.js';
import { startListeningHub, type ListeningHub } from '../helpers/hub-server.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { cabinetOfTwo, closeSyncNode, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';

/**
 * What a cabinet's installs meet in their first months — a clock set right, a reconnect, a restored
 * backup — through a real hub on PostgreSQL: nothing acknowledged is lost, and the installs converge.
 */
let pg: TestPostgres;
let hub: ListeningHub;
const nodes: SyncNode[] = [];

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startListeningHub(await pg.createDatabase());
}, 60_000);
afterEach(() => {
  for (const node of nodes.splice(0)) closeSyncNode(node);
});
afterAll(async () => {
  await hub?.close();
  await pg?.stop();
});

async function twoInstalls(): Promise<[SyncNode, SyncNode]> {
  const pair = await cabinetOfTwo(hub, Date.now());
  nodes.push(...pair);
  return pair;
}

const MINUTE = 60_000;
const newOpportunity = { title: 'Flotte', product: 'auto', contact: { last_name: 'G' }, stage: 'new' as const, expected_value_eur: 0, tags: [] };

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
    const stamps = (await hub.database.sql<{ hlc: string }[]>`SELECT hlc FROM hub_changes WHERE device_id = ${store.findConnection(a.deps.db.orm, a.cabinetId)?.deviceId ?? ''} ORDER BY number`).map((row) => row.hlc);
    expect(stamps).toEqual([...stamps].sort());
  });
});
