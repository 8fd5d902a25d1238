// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { enqueueTarification } from '../../server/automation/service.js';
import { completeJob, failJob, markSubmitted, reportProgress } from '../../server/automation/lifecycle.js';
import * as jobStore from '../../server/automation/store.js';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { createOpportunity, updateOpportunity, winOpportunityIfOpen } from '../../server/crm/service.js';
import { createDevis, recordDevisFailed, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createInsurerRegistry } from '../../server/robots/adapter.js';
import { createSandboxAdapter } from '../../server/robots/insurers/sandbox/index.js';
import { shareJoinedAdmin } from '../../server/sync/transfer.js';
import { userIdOf } from '../../server/tenancy/sync.js';
import { addCabinetUser, changeUserRole, listCabinetUsers, removeCabinetUser, setUserDisabled } from '../../server/tenancy/users.js';
import { cabinetOfTwo, closeSyncNode, exchangeNode, grantOnHub, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { useListeningHub } from '../helpers/use-hub.js';

/**
 * Every write to a synced table is captured: what one install queued for the hub rebuilds, on
 * another install of the cabinet, exactly what the first one holds. A write that changes a synced
 * column without queueing the change (a forgotten capture at a new write site) leaves the two
 * installs different, and this test names the kind, the record and the fields.
 */
const fixture = useListeningHub();
const nodes: SyncNode[] = [];
afterAll(() => {
  for (const node of nodes.splice(0)) closeSyncNode(node);
});

const PASSWORD = 'correct horse battery';
const AUTO = {
  insured_name: 'Léa Martin',
  driver_birth_date: '1984-03-09',
  licence_date: '2004-06-01',
  bonus_malus: 0.85,
  vehicle_make: 'Renault',
  vehicle_model: 'Clio',
  first_registration_date: '2021-02-15',
  postcode: '69003',
  usage: 'prive',
  formula: 'tous_risques',
};
const pdf = (what: string) => Buffer.from(`%PDF-1.4\n1 0 obj << /Title (${what}) >> endobj\n%%EOF\n`, 'latin1');

/** Every synced record of the cabinet on an install, by kind and id, as the sync reads it (its local columns left out). */
function syncedState(node: SyncNode): Map<string, unknown> {
  const state = new Map<string, unknown>();
  for (const [kind, records] of node.records) {
    for (const { recordId, fields } of records.snapshot(node.deps.db, node.cabinetId)) state.set(`${kind} ${recordId}`, fields);
  }
  return state;
}

describe('sync: every write to a synced table is captured', () => {
  it('the staff list, clients, opportunities, quotes, contracts, jobs and events an install writes are rebuilt whole on another', async () => {
    const [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
    nodes.push(a, b);
    const cabinetId = a.cabinetId;
    // B's administrator joins the staff list once B has downloaded the cabinet, as `sync join` does.
    expect(shareJoinedAdmin(b.deps, cabinetId, userIdOf(cabinetId, 'b@c.fr'))).toBe(true);
    a.deps = {
      ...a.deps,
      insurers: createInsurerRegistry([createSandboxAdapter({ portalUrl: () => 'http://127.0.0.1:9/sandbox/insurer' })]),
    };
    const step = () => a.clock.advance(1_000);

    // The staff list: added, its role changed, disabled; another added then removed.
    const broker = await addCabinetUser(a.deps, cabinetId, { email: 'c@c.fr', password: PASSWORD, role: 'broker' });
    step();
    changeUserRole(a.deps, cabinetId, broker.user_id, 'admin');
    step();
    setUserDisabled(a.deps, cabinetId, broker.user_id, true, () => undefined);
    const leaving = await addCabinetUser(a.deps, cabinetId, { email: 'd@c.fr', password: PASSWORD, role: 'broker' });
    step();
    removeCabinetUser(a.deps, cabinetId, leaving.user_id, () => undefined);

    // Clients and opportunities, created, edited, one won.
    const client = createClient(a.deps, cabinetId, { type: 'person', last_name: 'Martin', first_name: 'Léa', email: 'lea@exemple.fr' });
    step();
    updateClient(a.deps, cabinetId, client.client_id, { phone: '+33 6 12 34 56 78' });
    const contact = { last_name: 'Martin', first_name: 'Léa' };
    const opportunity = createOpportunity(
      a.deps,
      cabinetId,
      { title: 'Auto', product: 'auto', stage: 'new', expected_value_eur: 900, tags: [], contact },
      'api',
    );
    step();
    updateOpportunity(a.deps, cabinetId, opportunity.opportunity_id, { stage: 'qualified', tags: ['flotte'] });
    step();
    winOpportunityIfOpen(a.deps, cabinetId, opportunity.opportunity_id);

    // A quote priced by a job that went through its steps; another whose job failed; a third signed into a contract.
    await grantOnHub(fixture.hub, cabinetId, 100);
    await exchangeNode(a);
    const devisIds = ['auto', 'auto', 'mrh'].map(
      (produit) =>
        createDevis(a.deps, cabinetId, {
          client_id: client.client_id,
          opportunity_id: opportunity.opportunity_id,
          compagnie: 'sandbox',
          produit,
          dicData: produit === 'auto' ? AUTO : { insured_name: 'Léa Martin' },
        }).devis_id,
    );
    for (const [i, devisId] of devisIds.slice(0, 2).entries()) {
      step();
      const { job_id: jobId } = enqueueTarification(
        a.deps,
        cabinetId,
        { compagnie: 'sandbox', produit: 'auto', devis_id: devisId, dicData: { ...AUTO, postcode: `6900${i + 3}` } },
        'test',
      );
      const claimed = jobStore.claimNextJob(a.deps.db.orm, a.clock.now(), 60_000);
      expect(claimed?.id).toBe(jobId);
      reportProgress(a.deps, claimed!, 'login', 20);
      markSubmitted(a.deps, claimed!);
      step();
      if (i === 0) expect(completeJob(a.deps, claimed!, { outcome: 'complete', tarif_eur: 612.4, pdf: pdf('Devis auto') })).toBe(true);
      else {
        expect(failJob(a.deps, claimed!, { code: 'insurer_refused', message: 'Refus', technical: false, countsForBreaker: true })).toBe(
          true,
        );
        recordDevisFailed(a.deps, cabinetId, devisId);
      }
    }
    step();
    recordDevisPriced(a.deps, cabinetId, devisIds[2]!, { tarifEur: 210, pdf: pdf('Devis MRH') });
    step();
    expect(signDevis(a.deps, cabinetId, devisIds[2]!, undefined).contract_id).toEqual(expect.any(String));

    // A second client with an opportunity naming them, erased: the erasure reaches every copy.
    const erased = createClient(a.deps, cabinetId, { type: 'person', last_name: 'Durand', first_name: 'Paul' });
    createOpportunity(
      a.deps,
      cabinetId,
      {
        title: 'MRH',
        product: 'mrh',
        stage: 'new',
        expected_value_eur: 300,
        tags: [],
        contact: { last_name: 'Durand', first_name: 'Paul' },
      },
      'api',
    );
    step();
    eraseClient(a.deps, cabinetId, erased.client_id);

    // What A queued goes through the hub to B; what B holds that A lacks (its own account) comes back.
    await pushNode(a);
    await pullNode(b);
    await pushNode(b);
    await pullNode(a);

    const onA = syncedState(a);
    const onB = syncedState(b);
    // The scenario wrote every synced kind.
    expect(new Set([...onA.keys()].map((key) => key.split(' ')[0]))).toEqual(new Set(a.records.keys()));
    expect(listCabinetUsers(a.deps, cabinetId).map((user) => user.email)).toEqual(expect.arrayContaining(['c@c.fr']));
    const differences = [...new Set([...onA.keys(), ...onB.keys()])]
      .filter((key) => JSON.stringify(onA.get(key)) !== JSON.stringify(onB.get(key)))
      .map((key) => ({ record: key, onA: onA.get(key), onB: onB.get(key) }));
    expect(differences, 'a write on A that was not queued for the hub leaves B different').toEqual([]);
  }, 60_000);
});
