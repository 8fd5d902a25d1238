// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueTarification } from '../../server/automation/service.js';
import { completeJob } from '../../server/automation/lifecycle.js';
import * as queueStore from '../../server/automation/store-queue.js';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { addNote } from '../../server/crm/notes.js';
import { createOpportunity } from '../../server/crm/service.js';
import { createDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createLogger } from '../../server/platform/logging.js';
import { createInsurerRegistry } from '../../server/insurers/registry.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { setLlmDataSharing } from '../../server/tenancy/service.js';
import { createDispatcher, type Dispatcher } from '../../server/webhooks/dispatcher.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { sha256 } from '../helpers/hub.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { cabinetOfTwo, closeSyncNode, exchangeNode, grantOnHub, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';

/**
 * The right to erasure leaves no copies: once a client's erasure has synced, neither the hub nor
 * any install holds the person's data anywhere — in the client, the opportunities and their notes, the quotes, the
 * job, the events, the PDFs — but the signed quote's PDF (the contract's proof, README "Right to
 * erasure"); and no webhook carries it afterwards, even when an install that had not heard of the
 * erasure pushes an edit of the client made meanwhile.
 */
const fixture = useListeningHub();
let receiverA: Receiver;
let receiverB: Receiver;
const nodes: SyncNode[] = [];
const dispatchers: Dispatcher[] = [];

beforeAll(async () => {
  [receiverA, receiverB] = await Promise.all([startReceiver(), startReceiver()]);
}, 60_000);
afterAll(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
  for (const node of nodes.splice(0)) closeSyncNode(node);
  await Promise.allSettled([receiverA?.close(), receiverB?.close()]);
});

/** The person: what must be found nowhere once erased (lower case; phones as the digits' groups). */
const PERSON = { first_name: 'Maëlys', last_name: 'Quintavalle', email: 'maelys.quintavalle@exemple.fr', phone: '+33 6 71 82 93 04' };
const TRACES = ['quintavalle', '71 82 93 04', '55 44 33 22'];
const carries = (text: string) => TRACES.some((trace) => text.toLowerCase().includes(trace));
const bytesCarry = (bytes: Buffer) =>
  TRACES.some((trace) => bytes.includes(Buffer.from(trace, 'latin1')) || bytes.toString('latin1').toLowerCase().includes(trace));

/** A PDF as an insurer's portal makes it, naming the insured in clear. */
const pdf = (what: string) =>
  Buffer.from(
    `%PDF-1.4\n1 0 obj << /Title (${what}) >> endobj\nBT (Assure : ${PERSON.first_name} ${PERSON.last_name}, ${PERSON.phone}) Tj ET\n%%EOF\n`,
    'latin1',
  );

/** An install whose webhooks go to a real HTTPS receiver, every event, data unmasked (the cabinet shares it). */
function withWebhooks(node: SyncNode, receiver: Receiver): Dispatcher {
  node.deps = { ...node.deps, config: { ...node.deps.config, webhookAllowPrivateTargets: true, webhookRetryDelays: [0, 60, 300] } };
  setLlmDataSharing(node.deps, node.cabinetId, true);
  createWebhook(node.deps, node.cabinetId, { url: receiver.url, events: ['*'] });
  const dispatcher = createDispatcher(node.deps, { logger: createLogger({ level: 'silent' }), extraCa: [receiver.ca] });
  dispatchers.push(dispatcher);
  return dispatcher;
}

/** Every table of an install, row by row, as text (blobs as bytes): where the person's data is found. */
function installTraces(node: SyncNode): { table: string; row: Record<string, unknown> }[] {
  const sqlite = node.deps.db.sqlite;
  const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name);
  expect(tables).toEqual(
    expect.arrayContaining([
      'clients',
      'opportunities',
      'devis',
      'devis_documents',
      'jobs',
      'events',
      'sync_outbox',
      'sync_conflicts',
      'idempotency_keys',
    ]),
  );
  return tables.flatMap((table) =>
    (sqlite.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[])
      .filter((row) =>
        Object.values(row).some((value) => (Buffer.isBuffer(value) ? bytesCarry(value) : typeof value === 'string' && carries(value))),
      )
      .map((row) => ({ table, row })),
  );
}

/** Every table of the hub, row by row (its PDFs as bytes). */
async function hubTraces(): Promise<{ table: string; row: Record<string, unknown> }[]> {
  const sql = fixture.hub.database.sql;
  const tables = (await sql<{ name: string }[]>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`).map(
    (row) => row.name,
  );
  expect(tables).toEqual(expect.arrayContaining(['hub_changes', 'hub_blobs', 'hub_audit_events']));
  const found: { table: string; row: Record<string, unknown> }[] = [];
  for (const table of tables) {
    if (table === 'hub_blobs') {
      for (const row of await sql<
        { cabinet_id: string; sha256: string; content: Buffer }[]
      >`SELECT cabinet_id, sha256, content FROM hub_blobs`) {
        if (bytesCarry(row.content)) found.push({ table, row: { cabinet_id: row.cabinet_id, sha256: row.sha256 } });
      }
      continue;
    }
    for (const row of await sql<{ text: string }[]>`SELECT row_to_json(t)::text AS text FROM ${sql(table)} t`)
      if (carries(row.text)) found.push({ table, row: { text: row.text } });
  }
  return found;
}

/** What the receiver got from the nth delivery on, as text. */
const deliveredFrom = (receiver: Receiver, from: number) => receiver.received.slice(from).map((delivery) => delivery.rawBody);

describe('a client’s erasure, synced to two installs, one of which edited the client offline meanwhile', () => {
  let a: SyncNode;
  let b: SyncNode;
  let cabinetId: string;
  const ids = { client: '', priced: '', signed: '', contract: '' };
  const pdfs = { priced: pdf('Devis auto'), signed: pdf('Devis MRH signe') };
  let afterErasureA = 0;
  let afterErasureB = 0;

  beforeAll(async () => {
    [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
    nodes.push(a, b);
    cabinetId = a.cabinetId;
    const dispatchA = withWebhooks(a, receiverA);
    const dispatchB = withWebhooks(b, receiverB);
    a.deps = {
      ...a.deps,
      insurers: createInsurerRegistry([sandboxInsurer({ portalUrl: () => 'http://127.0.0.1:9/sandbox/insurer' })]),
    };

    // On A: the client, an opportunity whose contact names them, a quote priced by a job (dicData
    // naming them, an insurer's remark naming them, a PDF), a second quote signed into a contract.
    const client = createClient(a.deps, cabinetId, {
      type: 'person',
      ...PERSON,
      address: { line1: '12 rue des Lilas', postcode: '69003', city: 'Lyon', country: 'FR' },
    });
    ids.client = client.client_id;
    updateClient(a.deps, cabinetId, client.client_id, { first_name: 'Maëlys Anne' });
    const opportunity = createOpportunity(
      a.deps,
      cabinetId,
      {
        title: 'Auto',
        product: 'auto',
        stage: 'new',
        expected_value_eur: 900,
        tags: [],
        contact: { last_name: PERSON.last_name, first_name: PERSON.first_name, email: PERSON.email, phone: PERSON.phone },
      },
      'api',
    );
    // An opportunity made for the client (client_id), its contact naming no one, with a note that names them.
    const chosen = createOpportunity(
      a.deps,
      cabinetId,
      {
        title: 'MRH',
        product: 'mrh',
        stage: 'new',
        expected_value_eur: 300,
        tags: [],
        contact: { last_name: 'Prospect' },
        client_id: client.client_id,
      },
      'console',
    );
    addNote(a.deps, cabinetId, chosen.opportunity_id, { author: 'a@c.fr', body: `${PERSON.last_name} rappelle au ${PERSON.phone}` });
    const dicData = { ...AUTO_DIC_DATA, insured_name: `${PERSON.first_name} ${PERSON.last_name}` };
    ids.priced = createDevis(a.deps, cabinetId, {
      client_id: client.client_id,
      opportunity_id: opportunity.opportunity_id,
      compagnie: 'sandbox',
      produit: 'auto',
      dicData,
    }).devis_id;
    await grantOnHub(fixture.hub, cabinetId, 100);
    await exchangeNode(a);
    const { job_id: jobId } = enqueueTarification(
      a.deps,
      cabinetId,
      { compagnie: 'sandbox', produit: 'auto', devis_id: ids.priced, dicData },
      'test',
    );
    const claimed = queueStore.claimNextJob(a.deps.db.orm, a.clock.now(), 60_000);
    expect(claimed?.id).toBe(jobId);
    expect(
      completeJob(a.deps, claimed!, {
        outcome: 'complete',
        tarif_eur: 612.4,
        pdf: pdfs.priced,
        suspens: `Permis de ${PERSON.first_name} ${PERSON.last_name} à fournir`,
      }),
    ).toBe(true);
    ids.signed = createDevis(a.deps, cabinetId, {
      client_id: client.client_id,
      opportunity_id: opportunity.opportunity_id,
      compagnie: 'sandbox',
      produit: 'mrh',
      dicData: { insured_name: `${PERSON.first_name} ${PERSON.last_name}`, phone: PERSON.phone },
    }).devis_id;
    recordDevisPriced(a.deps, cabinetId, ids.signed, { tarifEur: 210, pdf: pdfs.signed });
    ids.contract = signDevis(a.deps, cabinetId, ids.signed, undefined).contract_id ?? '';

    await pushNode(a);
    await pullNode(b);
    await Promise.all([dispatchA.drain(), dispatchB.drain()]);
    // B holds it all, PDFs included.
    expect(installTraces(b).map((trace) => trace.table)).toEqual(
      expect.arrayContaining(['clients', 'opportunities', 'devis', 'devis_documents', 'jobs', 'events']),
    );

    // B, offline, edits the client: its own subscriber is told at once (B has not heard of any erasure).
    b.clock.advance(5_000);
    updateClient(b.deps, cabinetId, client.client_id, { phone: '+33 6 55 44 33 22' });
    addNote(b.deps, cabinetId, chosen.opportunity_id, { author: 'b@c.fr', body: `Nouveau numéro de ${PERSON.last_name} : 06 55 44 33 22` });
    await dispatchB.drain();

    // Meanwhile A erases the client; from then on, A's subscriber must never get the data.
    a.clock.advance(2_000);
    eraseClient(a.deps, cabinetId, client.client_id);
    afterErasureA = receiverA.received.length;
    await pushNode(a);

    // B comes back: it pushes its edit (made before it heard of the erasure), and only then pulls.
    await pushNode(b);
    await pullNode(a);
    await dispatchA.drain();
    await pullNode(b);
    afterErasureB = receiverB.received.length;
    for (let round = 0; round < 2; round += 1) {
      for (const node of [a, b]) {
        await pushNode(node);
        await pullNode(node);
      }
    }
    await Promise.all([dispatchA.drain(), dispatchB.drain()]);
  }, 60_000);

  it('leaves the person’s data in no table of either install, but in the signed quote’s PDF', () => {
    for (const node of [a, b]) {
      const traces = installTraces(node);
      expect(traces.map((trace) => [trace.table, trace.row.devis_id])).toEqual([['devis_documents', ids.signed]]);
      const quotes = node.deps.db.sqlite.prepare('SELECT id, dic_data, suspens, pdf_sha256 FROM devis ORDER BY id').all();
      expect(quotes).toEqual(
        [
          { id: ids.priced, dic_data: '{}', suspens: null, pdf_sha256: null },
          { id: ids.signed, dic_data: '{}', suspens: null, pdf_sha256: sha256(pdfs.signed) },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      expect(node.deps.db.sqlite.prepare('SELECT dic_data, request_hash, result_suspens FROM jobs').all()).toEqual([
        { dic_data: '{}', request_hash: '0'.repeat(64), result_suspens: null },
      ]);
      // The contract stays, with no personal field: it names the client by id.
      expect(node.deps.db.sqlite.prepare('SELECT client_id, premium_cents FROM contracts WHERE id = ?').get(ids.contract)).toEqual({
        client_id: ids.client,
        premium_cents: 21000,
      });
      expect(node.deps.db.sqlite.prepare('SELECT count(*) AS n FROM sync_outbox').get()).toEqual({ n: 0 });
    }
  });

  it('leaves it in no table of the hub, but in the signed quote’s PDF; the other PDF is gone for good', async () => {
    expect(await hubTraces()).toEqual([{ table: 'hub_blobs', row: { cabinet_id: cabinetId, sha256: sha256(pdfs.signed) } }]);
    const blobs = await fixture.hub.database.sql<{ sha256: string }[]>`SELECT sha256 FROM hub_blobs WHERE cabinet_id = ${cabinetId}`;
    expect(blobs.map((row) => row.sha256)).toEqual([sha256(pdfs.signed)]);
  });

  it('has no webhook carry it once its install applied the erasure: B’s late edit never reaches A’s subscriber', () => {
    const bodies = [...deliveredFrom(receiverA, afterErasureA), ...deliveredFrom(receiverB, afterErasureB)];
    expect(bodies.filter(carries)).toEqual([]);
    const typesA = deliveredFrom(receiverA, afterErasureA).map((body) => (JSON.parse(body) as { type: string }).type);
    expect(typesA).toContain('client.erased');
    expect(typesA).not.toContain('client.updated');
  });
});
