// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import { completeJob, jobClaimed } from '../../server/automation/lifecycle.js';
import * as queueStore from '../../server/automation/store-queue.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { conseilPdf, createConseil, listConseils } from '../../server/comparaisons/conseil.js';
import {
  comparisonsOfJobs,
  createComparison,
  getComparison,
  openComparisons,
  settleComparisons,
} from '../../server/comparaisons/service.js';
import { createClient } from '../../server/crm/clients.js';
import { eraseClient } from '../../server/erasure/service.js';
import { listEvents } from '../../server/events/service.js';
import { createInsurerRegistry } from '../../server/insurers/registry.js';
import { recordChange } from '../../server/sync/capture.js';
import { listConflicts } from '../../server/sync/conflicts-store.js';
import { pdf } from '../helpers/insurance-data.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { cabinetOfTwo, closeSyncNode, exchangeNode, grantOnHub, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { useListeningHub } from '../helpers/use-hub.js';

/**
 * Comparisons and advice documents between two installs of a cabinet through a real hub: the
 * other install shows the comparison as its jobs arrive, its end is recorded once (where its robots
 * ran), the advice document comes with its PDF and can never be rewritten by another device, and a
 * client's erasure empties the risk everywhere while the document stays.
 */
const fixture = useListeningHub();
const nodes: SyncNode[] = [];
afterAll(() => {
  for (const node of nodes.splice(0)) closeSyncNode(node);
});

const completions = (node: SyncNode) => listEvents(node.deps, node.cabinetId).filter((e) => e.type === 'comparaison.completed');

describe('sync of comparisons and advice documents', () => {
  it('another install shows the comparison, its end once, and the advice document with its PDF; a forged edit of it is set aside', async () => {
    const [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
    nodes.push(a, b);
    const cabinetId = a.cabinetId;
    const insurers = createInsurerRegistry([sandboxInsurer({ portalUrl: () => 'http://127.0.0.1:9/sandbox/insurer' })]);
    a.deps = { ...a.deps, insurers };
    b.deps = { ...b.deps, insurers };
    await grantOnHub(fixture.hub, cabinetId, 100);
    await exchangeNode(a);
    const client = createClient(a.deps, cabinetId, { type: 'person', last_name: 'Martin', first_name: 'Léa' });
    const started = createComparison(
      a.deps,
      cabinetId,
      { ligne: 'auto', risque: RISK_EXAMPLES.auto, client_id: client.client_id, compagnies: ['sandbox'] },
      'test',
    );
    const id = started.comparaison_id;
    await pushNode(a);
    await pullNode(b);
    // Before its job ends, B shows the insurer waiting.
    const early = getComparison(b.deps, cabinetId, id);
    expect(early.resultats.map((r) => [r.compagnie, r.status])).toEqual([['sandbox', 'pending']]);
    expect(early.status).toBe('pending');

    a.clock.advance(1_000);
    const row = queueStore.claimNextJob(a.deps.db.orm, a.clock.now(), 60_000, { adapterVersions: { sandbox: '1.2.0' } })!;
    jobClaimed(a.deps, row);
    expect(completeJob(a.deps, row, { outcome: 'complete', tarif_eur: 598.1, pdf: pdf('Devis auto comparé') })).toBe(true);
    settleComparisons(a.deps, comparisonsOfJobs(a.deps, [row.id]));
    const made = await createConseil(
      a.deps,
      cabinetId,
      id,
      { compagnie: 'sandbox', besoins: 'Une voiture pour le travail.', motif: 'Le meilleur tarif.' },
      CLI_ACTOR,
    );
    await pushNode(a);
    await pullNode(b);

    const onB = getComparison(b.deps, cabinetId, id);
    expect(onB.status).toBe('completed');
    expect(onB.resultats[0]).toMatchObject({ compagnie: 'sandbox', status: 'completed', tarif_eur: 598.1 });
    // Its end was recorded on A, whose robots ran it, and reached B as A's event; B never records it again.
    expect(completions(a)).toHaveLength(1);
    expect(completions(b)).toHaveLength(1);
    settleComparisons(b.deps, openComparisons(b.deps));
    expect(completions(b)).toHaveLength(1);
    // The advice document, and its PDF byte for byte.
    expect(listConseils(b.deps, cabinetId, { limit: 10 }).data.map((c) => [c.conseil_id, c.pdf_sha256])).toEqual([
      [made.conseil_id, made.pdf_sha256],
    ]);
    expect(conseilPdf(b.deps, cabinetId, made.conseil_id).equals(conseilPdf(a.deps, cabinetId, made.conseil_id))).toBe(true);

    // An install with a valid credential rewrites the reason given: the other install keeps the document as made.
    recordChange(b.deps, cabinetId, { kind: 'conseil', recordId: made.conseil_id, how: 'update', fields: () => ({ motif: 'Réécrit.' }) });
    await pushNode(b);
    await pullNode(a);
    expect(listConflicts(a.deps.db.orm, cabinetId, 10).map((c) => [c.kind, c.reason])).toEqual([['conseil', 'operation_refused']]);
    expect(listConseils(a.deps, cabinetId, { limit: 10 }).data[0]?.pdf_sha256).toBe(made.pdf_sha256);

    // The client's erasure on B: the risk is emptied on both, the advice document stays.
    eraseClient(b.deps, cabinetId, client.client_id);
    await pushNode(b);
    await pullNode(a);
    await pushNode(a);
    await pullNode(b);
    for (const node of [a, b]) {
      const risk = node.deps.db.sqlite.prepare('SELECT risque FROM comparaisons WHERE id = ?').get(id) as { risque: string };
      expect(risk.risque).toBe('{}');
      expect(listConseils(node.deps, cabinetId, { limit: 10 }).data).toHaveLength(1);
    }
  }, 60_000);
});
