// @module-tag postgres
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { createOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { databaseFile, openDatabase } from '../../server/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { pullOnce } from '../../server/sync/pull.js';
import { pushQueued } from '../../server/sync/push.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, hubClientFor, joinCabinet } from '../../server/sync/service.js';
import * as store from '../../server/sync/store.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { startListeningHub, type ListeningHub } from '../helpers/hub-server.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir, testClock, type TestClock } from '../helpers/server.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * Three installs of one cabinet edit the same records in random interleavings of edits, pushes
 * and pulls through a real hub on PostgreSQL; once everyone has pushed and pulled, all three hold
 * the same rows.
 */
const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);
const records = syncedRecords();
const PASSWORD = 'correct horse battery';

let pg: TestPostgres;
let hub: ListeningHub;

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startListeningHub(await pg.createDatabase());
}, 60_000);
afterAll(async () => {
  await hub?.close();
  await pg?.stop();
});

interface Node {
  deps: Deps;
  clock: TestClock;
  dir: string;
  cabinetId: string;
}

function openNode(start: number): Omit<Node, 'cabinetId'> {
  const dir = tempDir('courtier-converge-');
  const clock = testClock(start);
  const deps: Deps = { ...defaultDeps(openDatabase(databaseFile(dir)), loadConfig({ dataDir: dir }, {}), { insurers: [], env: {} }), clock };
  return { deps, clock, dir };
}

async function push(node: Node): Promise<void> {
  const connection = store.findConnection(node.deps.db.orm, node.cabinetId);
  if (!connection) throw new Error('not linked');
  const context = { deps: node.deps, records, client: hubClientFor(node.deps, connection, fetchHub) };
  await pushQueued(context, node.cabinetId);
}

async function pull(node: Node): Promise<void> {
  const connection = store.findConnection(node.deps.db.orm, node.cabinetId);
  if (!connection) throw new Error('not linked');
  const context = { deps: node.deps, records, client: hubClientFor(node.deps, connection, fetchHub) };
  while ((await pullOnce(context, node.cabinetId, { wait: 0 })).more);
}

const FIELDS = ['title', 'product', 'source'] as const;
const step = fc.record({
  node: fc.integer({ min: 0, max: 2 }),
  record: fc.integer({ min: 0, max: 1 }),
  field: fc.constantFrom(...FIELDS),
  value: fc.stringMatching(/^[a-zé ]{1,10}$/).map((s) => s.trim() || 'x'),
  advanceMs: fc.integer({ min: 0, max: 40 }),
  action: fc.constantFrom('edit', 'edit', 'push', 'pull', 'push+pull'),
});

describe('convergence through a real hub', () => {
  it('brings three installs to the same rows whatever the interleaving of edits, pushes and pulls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        const start = Date.now();
        const first = openNode(start);
        const { cabinet_id: cabinetId } = await initCabinet(first.deps, { cabinet: 'Cabinet Convergence', email: 'a@c.fr', password: PASSWORD });
        const nodes: Node[] = [{ ...first, cabinetId }];
        try {
          const opportunities = [0, 1].map((i) => createOpportunity(first.deps, cabinetId, { title: `base ${i}`, product: 'auto', contact: { last_name: 'Base' }, stage: 'new', expected_value_eur: 0, tags: [] }, 'api').opportunity_id);
          await connectCabinet(first.deps, { cabinetId, hubUrl: hub.url, code: await hub.invite({ register: cabinetId }), deviceName: 'A' }, { fetch: fetchHub, records }, CLI_ACTOR);
          await push(nodes[0] as Node);
          for (const [i, skew] of [[1, 150], [2, -90]] as const) {
            const other = openNode(start + skew);
            await joinCabinet(other.deps, { hubUrl: hub.url, code: await hub.invite({ join: cabinetId }), deviceName: `N${i}`, email: `n${i}@c.fr`, password: PASSWORD }, { fetch: fetchHub }, CLI_ACTOR);
            nodes.push({ ...other, cabinetId });
            await pull(nodes[i] as Node);
          }
          for (const s of steps) {
            const node = nodes[s.node] as Node;
            node.clock.advance(s.advanceMs);
            if (s.action === 'edit') updateOpportunity(node.deps, cabinetId, opportunities[s.record] as string, { [s.field]: s.value });
            if (s.action.startsWith('push')) await push(node);
            if (s.action.endsWith('pull')) await pull(node);
          }
          for (const node of nodes) await push(node);
          for (const node of nodes) await pull(node);
          const rows = nodes.map((node) => node.deps.db.sqlite.prepare('SELECT * FROM opportunities ORDER BY id').all());
          expect(rows[1]).toEqual(rows[0]);
          expect(rows[2]).toEqual(rows[0]);
          for (const node of nodes) expect(store.countOutbox(node.deps.db.orm, cabinetId)).toBe(0);
        } finally {
          for (const node of nodes) {
            node.deps.db.close();
            rmSync(node.dir, { recursive: true, force: true });
          }
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);
});
