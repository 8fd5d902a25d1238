import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import type { Insurer } from '../../server/insurers/registry.js';
import type { RecordsByKind } from '../../server/sync/apply.js';
import { pullOnce } from '../../server/sync/catch-up.js';
import { pushQueued } from '../../server/sync/push.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, hubClientFor, joinCabinet } from '../../server/sync/service.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import type { ListeningHub } from './hub-server.js';
import * as store from '../../server/sync/store.js';
import { exchangeWallet } from '../../server/sync/wallet-exchange.js';
import { grantHubCredits } from '../../server/hub/wallet.js';
import { tempDir, testClock, type TestClock, type TestServer } from './server.js';

/**
 * An install of a cabinet driven step by step in this process (its own SQLite file and clock), for
 * tests that choose when it pushes and pulls through a real hub; `records` is the sync's view of
 * its version (an older version knows fewer kinds or fields).
 */
export interface SyncNode {
  deps: Deps;
  clock: TestClock;
  dir: string;
  cabinetId: string;
  records: RecordsByKind;
}

/** The installs and console servers a test file opens, closed after each of its tests (the servers first). */
export function useSyncInstalls(): { nodes: SyncNode[]; servers: TestServer[] } {
  const opened = { nodes: [] as SyncNode[], servers: [] as TestServer[] };
  afterEach(async () => {
    for (const server of opened.servers.splice(0)) await server.close();
    for (const node of opened.nodes.splice(0)) closeSyncNode(node);
  });
  return opened;
}

export const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);

export function openSyncNode(
  start: number,
  records: RecordsByKind = syncedRecords(),
  dir = tempDir('courtier-node-'),
  insurers: Insurer[] = [],
): Omit<SyncNode, 'cabinetId'> {
  const clock = testClock(start);
  const deps: Deps = { ...defaultDeps(openDatabase(databaseFile(dir)), loadConfig({ dataDir: dir }, {}), { insurers, env: {} }), clock };
  return { deps, clock, dir, records };
}

/** A copy of the node's data dir as a backup makes it (the database copied whole, the secrets beside it). */
export function backupSyncNode(node: SyncNode): string {
  const dir = tempDir('courtier-backup-');
  for (const file of readdirSync(node.dir))
    if (!file.startsWith('courtier.sqlite')) cpSync(join(node.dir, file), join(dir, file), { recursive: true });
  node.deps.db.sqlite.exec(`VACUUM INTO '${databaseFile(dir).replaceAll("'", "''")}'`);
  return dir;
}

/** The node as restored from a backup: its data dir replaced by the copy, the same cabinet, its clock where it was. */
export function restoreSyncNode(node: SyncNode, backup: string): SyncNode {
  node.deps.db.close();
  rmSync(node.dir, { recursive: true, force: true });
  return { ...openSyncNode(node.clock.now(), node.records, backup), cabinetId: node.cabinetId };
}

export function closeSyncNode(node: Pick<SyncNode, 'deps' | 'dir'>): void {
  node.deps.db.close();
  rmSync(node.dir, { recursive: true, force: true });
}

/** The node's sync context: its deps, its version's records and a client of its hub. */
export function syncContext(node: SyncNode) {
  const connection = store.findConnection(node.deps.db.orm, node.cabinetId);
  if (!connection) throw new Error('not linked');
  return { deps: node.deps, records: node.records, client: hubClientFor(node.deps, connection, fetchHub) };
}

export async function pushNode(node: SyncNode): Promise<void> {
  await pushQueued(syncContext(node), node.cabinetId);
}

export async function pullNode(node: SyncNode): Promise<void> {
  const context = syncContext(node);
  while ((await pullOnce(context, node.cabinetId, { wait: 0 })).more);
}

/** The node's wallet exchange with the hub, until it holds the cabinet's whole ledger. */
export async function exchangeNode(node: SyncNode): Promise<void> {
  await exchangeWallet(syncContext(node), node.cabinetId);
}

/** The hub's operator grants the cabinet credits (courtier hub credits grant); returns the cabinet's balance on the hub. */
export async function grantOnHub(hub: ListeningHub, cabinetId: string, amount: number): Promise<number> {
  return (await grantHubCredits(hub.deps, cabinetId, amount, null, { warn: () => undefined })).balance;
}

const PASSWORD = 'correct horse battery';

/**
 * A new cabinet on the hub with two installs: A connected (everything uploaded), B joined with the
 * records of `bVersion` and caught up. The caller closes both (closeSyncNode).
 */
export async function cabinetOfTwo(
  hub: ListeningHub,
  start: number,
  bVersion: RecordsByKind = syncedRecords(),
  aStart = start,
): Promise<[SyncNode, SyncNode]> {
  const first = openSyncNode(aStart);
  const { cabinet_id: cabinetId } = await initCabinet(first.deps, {
    cabinet: 'Cabinet à deux postes',
    email: 'a@c.fr',
    password: PASSWORD,
  });
  const a = { ...first, cabinetId };
  await connectCabinet(
    a.deps,
    { cabinetId, hubUrl: hub.url, code: await hub.invite({ register: cabinetId }), deviceName: 'A' },
    { fetch: fetchHub, records: a.records },
    CLI_ACTOR,
  );
  await pushNode(a);
  const second = openSyncNode(start, bVersion);
  await joinCabinet(
    second.deps,
    { hubUrl: hub.url, code: await hub.invite({ join: cabinetId }), deviceName: 'B', email: 'b@c.fr', password: PASSWORD },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  const b = { ...second, cabinetId };
  await pullNode(b);
  return [a, b];
}

/** Another install joining the cabinet (sync join), caught up. */
export async function joinNode(
  hub: ListeningHub,
  cabinetId: string,
  start: number,
  name: string,
  insurers: Insurer[] = [],
): Promise<SyncNode> {
  const opened = openSyncNode(start, undefined, undefined, insurers);
  await joinCabinet(
    opened.deps,
    {
      hubUrl: hub.url,
      code: await hub.invite({ join: cabinetId }),
      deviceName: name,
      email: `${name.toLowerCase()}@c.fr`,
      password: PASSWORD,
    },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  const node = { ...opened, cabinetId };
  await pullNode(node);
  return node;
}
