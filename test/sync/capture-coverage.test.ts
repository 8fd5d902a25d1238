// @module-tag postgres
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { enqueueTarification } from '../../server/automation/service.js';
import { completeJob, failJob, jobClaimed, markSubmitted, reportProgress, requireMfa } from '../../server/automation/lifecycle.js';
import type * as jobStore from '../../server/automation/store.js';
import * as queueStore from '../../server/automation/store-queue.js';
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { createConseil } from '../../server/comparaisons/conseil.js';
import { comparisonsOfJobs, createComparison, getComparison, settleComparisons } from '../../server/comparaisons/service.js';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { addNote } from '../../server/crm/notes.js';
import { createOpportunity, updateOpportunity, winOpportunityIfOpen } from '../../server/crm/service.js';
import { createDevis, recordDevisFailed, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createInsurerRegistry } from '../../server/insurers/registry.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { countOutbox } from '../../server/sync/store.js';
import { shareJoinedAdmin } from '../../server/sync/transfer.js';
import { recordEvent } from '../../server/events/service.js';
import { userIdOf } from '../../server/tenancy/sync.js';
import { addCabinetUser, changeUserRole, listCabinetUsers, removeCabinetUser, setUserDisabled } from '../../server/tenancy/users.js';
import { cabinetOfTwo, closeSyncNode, exchangeNode, grantOnHub, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { AUTO_DIC_DATA, pdf } from '../helpers/insurance-data.js';

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
const AUTO = { ...AUTO_DIC_DATA, insured_name: 'Léa Martin' };

/** What the robot worker does when it takes the next job: the lease and the version of its adapter, then the job marked running. */
function claim(node: SyncNode): jobStore.JobRow {
  const adapterVersions = Object.fromEntries(node.deps.insurers.list().map((insurer) => [insurer.code, insurer.version]));
  const row = queueStore.claimNextJob(node.deps.db.orm, node.clock.now(), 60_000, { adapterVersions });
  if (!row) throw new Error('no job to claim');
  expect(row.adapterVersion).toBe(node.deps.insurers.get(row.robotCompagnie)?.version);
  jobClaimed(node.deps, row);
  return row;
}

/** Every synced record of the cabinet on an install, by kind and id, as the sync reads it (its local columns left out). */
function syncedState(node: SyncNode): Map<string, unknown> {
  const state = new Map<string, unknown>();
  for (const [kind, records] of node.records) {
    for (const { recordId, fields } of records.snapshot(node.deps.db, node.cabinetId)) state.set(`${kind} ${recordId}`, fields);
  }
  return state;
}

/**
 * A job's progress within a status: it travels with the job's next status (server/automation/sync.ts),
 * not at each step, so that a robot's steps do not each make a change for the hub.
 */
const JOB_PROGRESS = ['progress_step', 'progress_percent', 'submitted', 'updated_at'];

/** What differs between two installs' synced records (less the fields `deferred` leaves out): a write one of them did not queue. */
function differences(a: SyncNode, b: SyncNode, deferred: readonly string[] = []): { record: string; onA: unknown; onB: unknown }[] {
  const onA = syncedState(a);
  const onB = syncedState(b);
  const compared = (fields: unknown) =>
    JSON.stringify(
      fields === undefined ? fields : Object.fromEntries(Object.entries(fields as object).filter(([name]) => !deferred.includes(name))),
    );
  return [...new Set([...onA.keys(), ...onB.keys()])]
    .filter((key) => compared(onA.get(key)) !== compared(onB.get(key)))
    .map((key) => ({ record: key, onA: onA.get(key), onB: onB.get(key) }));
}

describe('sync: every write to a synced table is captured', () => {
  it('after each write of the staff list, clients, opportunities and their notes, quotes, contracts, jobs, comparisons, advice documents and events, another install holds the same', async () => {
    const [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
    nodes.push(a, b);
    const cabinetId = a.cabinetId;
    a.deps = {
      ...a.deps,
      insurers: createInsurerRegistry([sandboxInsurer({ portalUrl: () => 'http://127.0.0.1:9/sandbox/insurer' })]),
    };
    const kinds = new Set<string>();
    /**
     * After one write on A (a second apart on its clock): what A queued goes through the hub to B,
     * and B then holds what A holds. Compared after each write, not only at the end: a write whose
     * effect a later one overwrites (a job's claim before its MFA prompt) is caught too.
     */
    const then = async <T>(what: string, write: () => T | Promise<T>, deferred: readonly string[] = []): Promise<T> => {
      a.clock.advance(1_000);
      const result = await write();
      await pushNode(a);
      await pullNode(b);
      for (const key of syncedState(a).keys()) kinds.add(key.split(' ')[0] ?? '');
      expect(differences(a, b, deferred), `after ${what}: a write on A that was not queued for the hub leaves B different`).toEqual([]);
      return result;
    };

    // B's administrator joins the staff list once B has downloaded the cabinet, as `sync join` does.
    expect(shareJoinedAdmin(b.deps, cabinetId, userIdOf(cabinetId, 'b@c.fr'))).toBe(true);
    await pushNode(b);
    await pullNode(a);
    expect(differences(a, b)).toEqual([]);

    // The staff list: added, its role changed, disabled; another added then removed.
    const broker = await then('adding a user', () =>
      addCabinetUser(a.deps, cabinetId, { email: 'c@c.fr', password: PASSWORD, role: 'broker' }),
    );
    await then('changing a role', () => changeUserRole(a.deps, cabinetId, broker.user_id, 'admin'));
    await then('disabling a user', () => setUserDisabled(a.deps, cabinetId, broker.user_id, true, () => undefined));
    const leaving = await then('adding another user', () =>
      addCabinetUser(a.deps, cabinetId, { email: 'd@c.fr', password: PASSWORD, role: 'broker' }),
    );
    await then('removing a user', () => removeCabinetUser(a.deps, cabinetId, leaving.user_id, () => undefined));

    // Clients and opportunities, created, edited, one won.
    const client = await then('creating a client', () =>
      createClient(a.deps, cabinetId, { type: 'person', last_name: 'Martin', first_name: 'Léa', email: 'lea@exemple.fr' }),
    );
    await then('editing a client', () => updateClient(a.deps, cabinetId, client.client_id, { phone: '+33 6 12 34 56 78' }));
    const contact = { last_name: 'Martin', first_name: 'Léa' };
    const opportunity = await then('creating an opportunity', () =>
      createOpportunity(
        a.deps,
        cabinetId,
        { title: 'Auto', product: 'auto', stage: 'new', expected_value_eur: 900, tags: [], contact, client_id: client.client_id },
        'api',
      ),
    );
    await then('editing an opportunity', () =>
      updateOpportunity(a.deps, cabinetId, opportunity.opportunity_id, { stage: 'qualified', tags: ['flotte'] }),
    );
    await then('adding a note', () =>
      addNote(a.deps, cabinetId, opportunity.opportunity_id, { author: 'c@c.fr', body: 'Rappeler lundi.' }),
    );
    await then('detaching a client', () => updateOpportunity(a.deps, cabinetId, opportunity.opportunity_id, { client_id: null }));
    await then('winning an opportunity', () => winOpportunityIfOpen(a.deps, cabinetId, opportunity.opportunity_id));

    // A quote priced by a job that went through its steps; another whose job failed; a third signed into a contract.
    await grantOnHub(fixture.hub, cabinetId, 100);
    await exchangeNode(a);
    const devisIds: string[] = [];
    for (const produit of ['auto', 'auto', 'mrh']) {
      const devis = await then(`creating a ${produit} quote`, () =>
        createDevis(a.deps, cabinetId, {
          client_id: client.client_id,
          opportunity_id: opportunity.opportunity_id,
          compagnie: 'sandbox',
          produit,
          dicData: produit === 'auto' ? AUTO : { insured_name: 'Léa Martin' },
        }),
      );
      devisIds.push(devis.devis_id);
    }
    for (const [i, devisId] of devisIds.slice(0, 2).entries()) {
      const { job_id: jobId } = await then('enqueueing a job', () =>
        enqueueTarification(
          a.deps,
          cabinetId,
          { compagnie: 'sandbox', produit: 'auto', devis_id: devisId, dicData: { ...AUTO, postcode: `6900${i + 3}` } },
          'test',
        ),
      );
      const claimed = await then('claiming a job', () => claim(a));
      expect(claimed.id).toBe(jobId);
      await then('reporting progress', () => reportProgress(a.deps, claimed, 'login', 20), JOB_PROGRESS);
      await then('submitting to the insurer', () => markSubmitted(a.deps, claimed), JOB_PROGRESS);
      if (i === 0)
        await then('completing a job', () =>
          expect(completeJob(a.deps, claimed, { outcome: 'complete', tarif_eur: 612.4, pdf: pdf('Devis auto') })).toBe(true),
        );
      else {
        await then('failing a job', () =>
          expect(
            failJob(a.deps, claimed, {
              code: 'portal_changed',
              message: 'The insurer\'s portal changed at the step "driver".',
              technical: true,
              countsForBreaker: true,
              step: 'driver',
            }),
          ).toBe(true),
        );
        await then('marking its quote failed', () => recordDevisFailed(a.deps, cabinetId, devisId));
      }
    }
    // A comparison at the sandbox for the client, completed, and the advice document made from it.
    const comparison = await then('starting a comparison', () =>
      createComparison(
        a.deps,
        cabinetId,
        { ligne: 'auto', risque: RISK_EXAMPLES.auto, client_id: client.client_id, compagnies: ['sandbox'] },
        'test',
      ),
    );
    const compared = await then('claiming a job', () => claim(a));
    await then('completing a job', () =>
      expect(completeJob(a.deps, compared, { outcome: 'complete', tarif_eur: 598.1, pdf: pdf('Devis auto comparé') })).toBe(true),
    );
    await then('recording the comparison’s end', () => settleComparisons(a.deps, comparisonsOfJobs(a.deps, [compared.id])));
    expect(getComparison(a.deps, cabinetId, comparison.comparaison_id).status).toBe('completed');
    await then('making an advice document', () =>
      createConseil(
        a.deps,
        cabinetId,
        comparison.comparaison_id,
        { compagnie: 'sandbox', besoins: 'Une voiture pour le travail.', motif: 'Le tarif.' },
        CLI_ACTOR,
      ),
    );

    // A job waiting for the broker's code.
    await then('enqueueing a job', () =>
      enqueueTarification(a.deps, cabinetId, { compagnie: 'sandbox', produit: 'auto', dicData: { ...AUTO, postcode: '69010' } }, 'test'),
    );
    const waiting = await then('claiming a job', () => claim(a));
    await then('asking for a code', () =>
      expect(requireMfa(a.deps, waiting, { kind: 'otp', channel: 'sms', prompt: 'Code reçu par SMS' })).toEqual(expect.any(Number)),
    );
    await then('pricing a quote', () => recordDevisPriced(a.deps, cabinetId, devisIds[2]!, { tarifEur: 210, pdf: pdf('Devis MRH') }));
    await then('signing a quote', () =>
      expect(signDevis(a.deps, cabinetId, devisIds[2]!, undefined).contract_id).toEqual(expect.any(String)),
    );

    // A second client with an opportunity naming them, erased: the erasure reaches every copy.
    const erased = await then('creating a client', () =>
      createClient(a.deps, cabinetId, { type: 'person', last_name: 'Durand', first_name: 'Paul' }),
    );
    const erasedOpportunity = await then('creating an opportunity', () =>
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
          client_id: erased.client_id,
        },
        'api',
      ),
    );
    await then('adding a note', () =>
      addNote(a.deps, cabinetId, erasedOpportunity.opportunity_id, { author: 'c@c.fr', body: 'Paul Durand déménage.' }),
    );
    await then('starting a comparison', () =>
      createComparison(
        a.deps,
        cabinetId,
        {
          ligne: 'mrh',
          risque: { ...RISK_EXAMPLES.mrh, souscripteur: { nom: 'Durand', prenom: 'Paul' } },
          client_id: erased.client_id,
          compagnies: ['sandbox'],
        },
        'test',
      ),
    );
    await then('erasing a client', () => eraseClient(a.deps, cabinetId, erased.client_id));

    // The scenario wrote every synced kind.
    expect(kinds).toEqual(new Set(a.records.keys()));
    expect(listCabinetUsers(a.deps, cabinetId).map((user) => user.email)).toEqual(expect.arrayContaining(['c@c.fr']));
  }, 120_000);

  it('queues nothing for a write that changes nothing synced: a webhook test event, an edit of an erased client', async () => {
    const [a] = await cabinetOfTwo(fixture.hub, Date.now());
    nodes.push(a);
    const queued = () => countOutbox(a.deps.db.orm, a.cabinetId);
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Martin', email: 'lea@exemple.fr' });
    eraseClient(a.deps, a.cabinetId, client.client_id);
    const before = queued();
    recordEvent(a.deps, a.cabinetId, 'webhook.test', { message: 'ping', webhook_id: randomUUID() });
    expect(queued(), 'a test delivery concerns one subscription of this install').toBe(before);
    expect(() => updateClient(a.deps, a.cabinetId, client.client_id, { phone: '+33 6 12 34 56 78' })).toThrow(/client/);
    expect(queued(), 'an erased client is no longer edited, here nor elsewhere').toBe(before);
  });
});
