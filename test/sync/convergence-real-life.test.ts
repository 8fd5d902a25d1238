// @module-tag postgres
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { createDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { connectCabinet, disconnectCabinet } from '../../server/sync/service.js';
import * as store from '../../server/sync/store.js';
import { ApiError } from '../../server/errors.js';
import { useListeningHub } from '../helpers/use-hub.js';
import {
  backupSyncNode,
  cabinetOfTwo,
  closeSyncNode,
  fetchHub,
  joinNode,
  pullNode,
  pushNode,
  restoreSyncNode,
  type SyncNode,
} from '../helpers/sync-node.js';

/**
 * Three installs of one cabinet through a real hub, in random interleavings of what a cabinet meets
 * in its first months: records created on several installs, one quote signed on several, a client
 * erased while others edit it, an install disconnected and connected again, clocks that jump, an
 * install restored from an earlier copy of its data dir. Once everyone has pushed and pulled, all
 * three hold the same records, and nothing the hub acknowledged is lost.
 */
const fixture = useListeningHub();

const MINUTE = 60_000;
const node = fc.integer({ min: 0, max: 2 });
const step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      do: fc.constant('edit' as const),
      node,
      field: fc.constantFrom('title', 'stage', 'source'),
      value: fc.constantFrom('a', 'b', 'c'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('create' as const), node }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('sign' as const), node }) },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('editClient' as const), node, value: fc.constantFrom('Durand', 'Martin') }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('erase' as const), node }) },
  { weight: 4, arbitrary: fc.record({ do: fc.constantFrom('push' as const, 'pull' as const), node }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('reconnect' as const), node }) },
  {
    weight: 1,
    arbitrary: fc.record({ do: fc.constant('clock' as const), node, jump: fc.constantFrom(-2 * MINUTE, 3 * MINUTE, 10 * MINUTE) }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constantFrom('backup' as const, 'restore' as const), node }) },
);

const STAGES = { a: 'new', b: 'qualified', c: 'won' } as const;
const table = (n: SyncNode, name: string) => n.deps.db.sqlite.prepare(`SELECT * FROM ${name} ORDER BY id`).all();

describe('convergence of what a cabinet meets in its first months', () => {
  it('brings three installs to the same records, and loses nothing acknowledged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const start = Date.now();
        const open: SyncNode[] = [];
        try {
          const [a, b] = await cabinetOfTwo(fixture.hub, start);
          open.push(a, b);
          const cabinetId = a.cabinetId;
          const client = createClient(a.deps, cabinetId, { type: 'person', last_name: 'Petit', email: 'petit@example.fr' });
          const quote = createDevis(a.deps, cabinetId, { client_id: client.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
          recordDevisPriced(a.deps, cabinetId, quote.devis_id, { tarifEur: 300 });
          const base = createOpportunity(
            a.deps,
            cabinetId,
            { title: 'base', product: 'auto', contact: { last_name: 'B' }, stage: 'new', expected_value_eur: 0, tags: [] },
            'api',
          );
          await pushNode(a);
          await pullNode(b);
          open.push(await joinNode(fixture.hub, cabinetId, start, 'C'));
          const nodes = open;
          const opportunities = [base.opportunity_id];
          /** Opportunities each node created, and whether the hub acknowledged them. */
          const created: { id: string; by: number; acknowledged: boolean }[] = [];
          const backups = new Map<number, string>();
          let erased = false;
          for (const s of steps) {
            const n = nodes[s.node] as SyncNode;
            n.clock.advance(50);
            const linked = store.findConnection(n.deps.db.orm, cabinetId) !== undefined;
            switch (s.do) {
              case 'edit': {
                const target = opportunities[s.node % opportunities.length] as string;
                const fields = s.field === 'stage' ? { stage: STAGES[s.value] } : { [s.field]: s.value };
                // A move the service refuses (a won deal back to new) is a person's mistake, not a step.
                if (n.deps.db.sqlite.prepare('SELECT 1 FROM opportunities WHERE id = ?').get(target)) {
                  try {
                    updateOpportunity(n.deps, cabinetId, target, fields);
                  } catch (err) {
                    if (!(err instanceof ApiError)) throw err;
                  }
                }
                break;
              }
              case 'create': {
                const id = createOpportunity(
                  n.deps,
                  cabinetId,
                  { title: `de ${s.node}`, product: 'auto', contact: { last_name: 'N' }, stage: 'new', expected_value_eur: 0, tags: [] },
                  'api',
                ).opportunity_id;
                created.push({ id, by: s.node, acknowledged: false });
                opportunities.push(id);
                break;
              }
              case 'sign': {
                const held = n.deps.db.sqlite.prepare('SELECT status FROM devis WHERE id = ?').get(quote.devis_id) as
                  { status: string } | undefined;
                if (held?.status === 'priced') signDevis(n.deps, cabinetId, quote.devis_id, undefined);
                break;
              }
              case 'editClient': {
                const row = n.deps.db.sqlite.prepare('SELECT erased_at FROM clients WHERE id = ?').get(client.client_id) as
                  { erased_at: number | null } | undefined;
                if (row && row.erased_at === null) updateClient(n.deps, cabinetId, client.client_id, { last_name: s.value });
                break;
              }
              case 'erase': {
                const row = n.deps.db.sqlite.prepare('SELECT erased_at FROM clients WHERE id = ?').get(client.client_id) as
                  { erased_at: number | null } | undefined;
                if (row && row.erased_at === null) {
                  eraseClient(n.deps, cabinetId, client.client_id);
                  erased = true;
                }
                break;
              }
              case 'push':
                if (!linked) break;
                try {
                  await pushNode(n);
                  if (store.countOutbox(n.deps.db.orm, cabinetId) === 0)
                    for (const c of created) if (c.by === s.node) c.acknowledged = true;
                } catch {
                  // A clock too far ahead: refused, queued.
                }
                break;
              case 'pull':
                if (linked) await pullNode(n);
                break;
              case 'reconnect':
                if (!linked) break;
                await disconnectCabinet(n.deps, cabinetId, { fetch: fetchHub }, CLI_ACTOR);
                // A backup from before the reconnect holds a credential the hub revoked: not one to restore.
                backups.delete(s.node);
                await connectCabinet(
                  n.deps,
                  { cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ join: cabinetId }), deviceName: `N${s.node}` },
                  { fetch: fetchHub, records: n.records },
                  CLI_ACTOR,
                );
                break;
              case 'clock':
                n.clock.advance(s.jump);
                break;
              case 'backup':
                if (linked) backups.set(s.node, backupSyncNode(n));
                break;
              case 'restore': {
                const backup = backups.get(s.node);
                if (!backup) break;
                backups.delete(s.node);
                const back = restoreSyncNode(n, backup);
                nodes[s.node] = back;
                // What was made after the backup and never acknowledged is gone with the disk.
                const held = new Set(
                  (back.deps.db.sqlite.prepare('SELECT id FROM opportunities').all() as { id: string }[]).map((row) => row.id),
                );
                for (let i = created.length - 1; i >= 0; i -= 1) {
                  const c = created[i] as (typeof created)[number];
                  if (c.by === s.node && !c.acknowledged && !held.has(c.id)) created.splice(i, 1);
                }
                break;
              }
            }
          }
          for (const dir of backups.values()) rmSync(dir, { recursive: true, force: true });
          // Every install's clock set right, then rounds of push and pull until quiet.
          for (let round = 0; round < 4; round += 1) {
            for (const n of nodes) {
              n.clock.set(Date.now());
              await pushNode(n).catch(() => undefined);
              await pullNode(n);
            }
          }
          for (const n of nodes) expect(store.countOutbox(n.deps.db.orm, cabinetId)).toBe(0);
          for (const name of ['opportunities', 'clients', 'devis', 'contracts']) {
            const [first, ...rest] = nodes.map((n) => table(n, name));
            for (const other of rest) expect(other, name).toEqual(first);
          }
          const ids = new Set((table(nodes[0] as SyncNode, 'opportunities') as { id: string }[]).map((row) => row.id));
          for (const c of created.filter((one) => one.acknowledged))
            expect(ids.has(c.id), `opportunity ${c.id} of node ${c.by}`).toBe(true);
          expect((table(nodes[0] as SyncNode, 'contracts') as unknown[]).length).toBeLessThanOrEqual(1);
          if (erased)
            expect(table(nodes[0] as SyncNode, 'clients')).toMatchObject([
              { id: client.client_id, last_name: null, email: null, erased_at: expect.any(Number) },
            ]);
        } finally {
          for (const n of open) closeSyncNode(n);
        }
      }),
      {
        numRuns: 40,
        examples: [
          // Two edits of the same moment, one of them sent again by a reconnect under the new device's id: the tie is decided alike everywhere.
          [
            [
              { do: 'editClient', node: 1, value: 'Durand' },
              { do: 'editClient', node: 0, value: 'Martin' },
              { do: 'reconnect', node: 0 },
              { do: 'clock', node: 0, jump: -2 * MINUTE },
              { do: 'create', node: 1 },
            ],
          ],
        ],
      },
    );
  }, 300_000);
});
