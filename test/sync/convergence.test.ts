// @module-tag postgres
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { syncedRecords } from '../../server/sync/records.js';
import { connectCabinet, joinCabinet } from '../../server/sync/service.js';
import * as store from '../../server/sync/store.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { closeSyncNode, fetchHub, openSyncNode, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { CLI_ACTOR } from '../../server/audit/service.js';

/**
 * Three installs of one cabinet edit the same records in random interleavings of edits, pushes
 * and pulls through a real hub on PostgreSQL; once everyone has pushed and pulled, all three hold
 * the same rows.
 */
const records = syncedRecords();
const PASSWORD = 'correct horse battery';

const fixture = useListeningHub();

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
        const first = openSyncNode(start);
        const { cabinet_id: cabinetId } = await initCabinet(first.deps, {
          cabinet: 'Cabinet Convergence',
          email: 'a@c.fr',
          password: PASSWORD,
        });
        const nodes: SyncNode[] = [{ ...first, cabinetId }];
        try {
          const opportunities = [0, 1].map(
            (i) =>
              createOpportunity(
                first.deps,
                cabinetId,
                { title: `base ${i}`, product: 'auto', contact: { last_name: 'Base' }, stage: 'new', expected_value_eur: 0, tags: [] },
                'api',
              ).opportunity_id,
          );
          await connectCabinet(
            first.deps,
            { cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ register: cabinetId }), deviceName: 'A' },
            { fetch: fetchHub, records },
            CLI_ACTOR,
          );
          await pushNode(nodes[0] as SyncNode);
          for (const [i, skew] of [
            [1, 150],
            [2, -90],
          ] as const) {
            const other = openSyncNode(start + skew);
            await joinCabinet(
              other.deps,
              {
                hubUrl: fixture.hub.url,
                code: await fixture.hub.invite({ join: cabinetId }),
                deviceName: `N${i}`,
                email: `n${i}@c.fr`,
                password: PASSWORD,
              },
              { fetch: fetchHub },
              CLI_ACTOR,
            );
            nodes.push({ ...other, cabinetId });
            await pullNode(nodes[i] as SyncNode);
          }
          for (const s of steps) {
            const node = nodes[s.node] as SyncNode;
            node.clock.advance(s.advanceMs);
            if (s.action === 'edit') updateOpportunity(node.deps, cabinetId, opportunities[s.record] as string, { [s.field]: s.value });
            if (s.action.startsWith('push')) await pushNode(node);
            if (s.action.endsWith('pull')) await pullNode(node);
          }
          for (const node of nodes) await pushNode(node);
          for (const node of nodes) await pullNode(node);
          const rows = nodes.map((node) => node.deps.db.sqlite.prepare('SELECT * FROM opportunities ORDER BY id').all());
          expect(rows[1]).toEqual(rows[0]);
          expect(rows[2]).toEqual(rows[0]);
          for (const node of nodes) expect(store.countOutbox(node.deps.db.orm, cabinetId)).toBe(0);
        } finally {
          for (const node of nodes) closeSyncNode(node);
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);
});
