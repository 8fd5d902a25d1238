// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { createOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { createDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { compactCabinet } from '../../server/hub/compaction.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { joinCabinet } from '../../server/sync/service.js';
import { downloadAll } from '../../server/sync/transfer.js';
import * as refusedStore from '../../server/sync/store-refused.js';
import * as store from '../../server/sync/store.js';
import { startListeningHub, type ListeningHub } from '../helpers/hub-server.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { testClock } from '../helpers/server.js';
import { cabinetOfTwo, closeSyncNode, fetchHub, openSyncNode, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';

/**
 * Installs of a cabinet whose hub keeps each record's state and a bounded tail of changes: a join
 * reads the state then the tail and gets the same records as before compaction; an install whose
 * cursor is older than the tail is answered 410 and reads the state, keeping its unpushed changes.
 */
const START = Date.UTC(2026, 10, 24, 9, 0, 0);
const DAY = 24 * 3600_000;
let pg: TestPostgres;
let hub: ListeningHub;
const hubClock = testClock(START);
const open: SyncNode[] = [];

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startListeningHub(await pg.createDatabase(), { clock: hubClock });
});
afterAll(async () => {
  for (const node of open) closeSyncNode(node);
  await hub.close();
  await pg.stop();
});

/** The cabinet's synced records on an install, table by table, without what is the install's own (an event's outbox position, when a PDF was stored). */
function records(node: SyncNode): Record<string, unknown[]> {
  const rows = (table: string, order = 'id') =>
    node.deps.db.sqlite.prepare(`SELECT * FROM ${table} WHERE cabinet_id = ? ORDER BY ${order}`).all(node.cabinetId);
  return {
    clients: rows('clients'),
    opportunities: rows('opportunities'),
    devis: rows('devis'),
    contracts: rows('contracts'),
    // When a PDF was stored is each install's own.
    documents: (rows('devis_documents', 'devis_id') as Record<string, unknown>[]).map(({ created_at: _at, ...document }) => document),
    events: (rows('events') as Record<string, unknown>[]).map(({ seq: _seq, ...event }) => event),
  };
}

async function join(cabinetId: string, name: string): Promise<SyncNode> {
  const opened = openSyncNode(hubClock.now());
  await joinCabinet(
    opened.deps,
    {
      hubUrl: hub.url,
      code: await hub.invite({ join: cabinetId }),
      deviceName: name,
      email: `${name.toLowerCase()}@c.fr`,
      password: 'correct horse battery',
    },
    { fetch: fetchHub },
    CLI_ACTOR,
  );
  const node = { ...opened, cabinetId };
  open.push(node);
  await downloadAll(node.deps, node.records, cabinetId, fetchHub, () => undefined);
  return node;
}

const contact = (last_name: string, email: string) => ({ last_name, email });

describe('a hub that keeps the state and a bounded tail', () => {
  it('gives a join after compaction the same records as a join before it', async () => {
    const [a, b] = await cabinetOfTwo(hub, START);
    open.push(a, b);
    const kept = createClient(a.deps, a.cabinetId, {
      type: 'person',
      last_name: 'Martin',
      first_name: 'Léa',
      email: 'lea.martin@example.fr',
    });
    const erased = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Durand', email: 'paul.durand@example.fr' });
    const quote = createDevis(a.deps, a.cabinetId, {
      client_id: kept.client_id,
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: { insured_name: 'Martin' },
    });
    recordDevisPriced(a.deps, a.cabinetId, quote.devis_id, { tarifEur: 420, pdf: Buffer.from('%PDF-1.4 devis Martin %%EOF') });
    const unsigned = createDevis(a.deps, a.cabinetId, {
      client_id: erased.client_id,
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: { insured_name: 'Durand' },
    });
    recordDevisPriced(a.deps, a.cabinetId, unsigned.devis_id, { tarifEur: 300, pdf: Buffer.from('%PDF-1.4 devis Durand %%EOF') });
    signDevis(a.deps, a.cabinetId, quote.devis_id, { signed_at: '2026-11-24T09:00:01.000Z' });
    const opportunity = createOpportunity(
      a.deps,
      a.cabinetId,
      {
        title: 'Flotte',
        product: 'auto',
        contact: contact('Durand', 'paul.durand@example.fr'),
        stage: 'new',
        expected_value_eur: 100,
        tags: [],
      },
      'api',
    );
    for (let i = 0; i < 30; i++) {
      a.clock.advance(1000);
      updateClient(a.deps, a.cabinetId, kept.client_id, { first_name: `Léa ${i}` });
      updateOpportunity(a.deps, a.cabinetId, opportunity.id, { expected_value_eur: 100 + i });
    }
    await pushNode(a);
    b.clock.set(a.clock.now());
    await pullNode(b);
    updateClient(b.deps, b.cabinetId, kept.client_id, { phone: '+33612345678' });
    eraseClient(b.deps, b.cabinetId, erased.client_id);
    await pushNode(b);
    await pullNode(a);
    hubClock.set(a.clock.now() + 1000);

    const before = await join(a.cabinetId, 'Avant');
    expect(records(before)).toEqual(records(a));
    hubClock.advance(2 * DAY);
    const summary = await compactCabinet(hub.deps, a.cabinetId, { days: 1, changes: 3, blobGraceMs: DAY });
    expect(summary.changes_deleted).toBeGreaterThan(60);
    const after = await join(a.cabinetId, 'Apres');
    expect(records(after)).toEqual(records(before));
    expect(JSON.stringify(records(after))).not.toContain('paul.durand');
    // The join's cursor is where the state was read: it pulls on from there.
    expect(store.findConnection(after.deps.db.orm, after.cabinetId)?.pullCursor).toBe(
      Number((await hub.deps.sql<{ n: string }[]>`SELECT next_seq - 1 AS n FROM hub_cabinets WHERE id = ${a.cabinetId}`)[0]!.n),
    );
  });

  it('answers an install whose cursor is older than the tail with 410; it reads the state and keeps, then pushes, its unpushed changes', async () => {
    const [a, b] = await cabinetOfTwo(hub, hubClock.now());
    open.push(a, b);
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Bernard', email: 'c.bernard@example.fr' });
    await pushNode(a);
    await pullNode(b);
    const cursorBefore = store.findConnection(b.deps.db.orm, b.cabinetId)?.pullCursor ?? 0;

    // B, offline, edits; A goes on, and the hub compacts what B has not pulled.
    b.clock.advance(60_000);
    updateClient(b.deps, b.cabinetId, client.client_id, { phone: '+33600000001' });
    const offline = createClient(b.deps, b.cabinetId, { type: 'company', last_name: 'Hors ligne SARL' });
    a.clock.advance(1000);
    for (let i = 0; i < 20; i++) createClient(a.deps, a.cabinetId, { type: 'person', last_name: `Nouveau ${i}` });
    updateClient(a.deps, a.cabinetId, client.client_id, { first_name: 'Claire', phone: '+33600000000' });
    await pushNode(a);
    hubClock.set(Math.max(a.clock.now(), b.clock.now()) + 2 * DAY);
    await compactCabinet(hub.deps, a.cabinetId, { days: 1, changes: 2, blobGraceMs: DAY });

    await pullNode(b);
    const resynced = b.deps.db.sqlite
      .prepare("SELECT details FROM audit_events WHERE cabinet_id = ? AND action = 'sync.resynced'")
      .all(b.cabinetId) as { details: string }[];
    expect(resynced.map((row) => JSON.parse(row.details))).toEqual([
      expect.objectContaining({ reason: 'cursor_expired', pulled_from: cursorBefore }),
    ]);
    const onB = records(b).clients as { id: string; last_name: string; phone: string | null; first_name: string | null }[];
    expect(onB.filter((row) => row.last_name.startsWith('Nouveau'))).toHaveLength(20);
    // B's later edit of the phone wins over A's earlier one; A's first name comes.
    expect(onB.find((row) => row.id === client.client_id)).toMatchObject({ phone: '+33600000001', first_name: 'Claire' });
    const queued = store.countOutbox(b.deps.db.orm, b.cabinetId);
    expect(queued).toBeGreaterThanOrEqual(2);
    expect(store.findConnection(b.deps.db.orm, b.cabinetId)?.pullCursor).toBeGreaterThan(cursorBefore);

    await pushNode(b);
    await pullNode(a);
    const onA = records(a).clients as { id: string; last_name: string; phone: string | null }[];
    expect(onA.find((row) => row.id === client.client_id)?.phone).toBe('+33600000001');
    expect(onA.find((row) => row.id === offline.client_id)?.last_name).toBe('Hors ligne SARL');
    expect(records(a).clients).toEqual(records(b).clients);
  });
});

describe('a record grown past what the hub keeps of one', () => {
  it('has its change refused by the hub and set aside on the install, which sends the rest of its queue and goes on', async () => {
    // A hub that keeps small records, so that an install's ordinary fields can pass its limit.
    const small = await startListeningHub(await pg.createDatabase(), { clock: hubClock, limits: { recordBytes: 2000 } });
    try {
      const [a, b] = await cabinetOfTwo(small, hubClock.now());
      open.push(a, b);
      const grown = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Lefebvre' });
      await pushNode(a);
      a.clock.advance(1000);
      const long = (c: string, n: number) => c.repeat(n);
      updateClient(a.deps, a.cabinetId, grown.client_id, {
        first_name: long('é', 200),
        address: { line1: long('r', 200), line2: long('s', 200), postcode: '75001', city: long('P', 100), country: 'FR' },
      });
      const after = createClient(a.deps, a.cabinetId, { type: 'company', last_name: 'Après SARL' });
      // Round after round, as the install's push loop goes: the refused change is set aside, the rest goes.
      for (let round = 0; round < 3 && store.countOutbox(a.deps.db.orm, a.cabinetId) > 0; round += 1) await pushNode(a);

      expect(store.countOutbox(a.deps.db.orm, a.cabinetId)).toBe(0);
      expect(refusedStore.listRefused(a.deps.db.orm, a.cabinetId, 10)).toEqual([
        expect.objectContaining({ kind: 'client', recordId: grown.client_id, code: 'payload_too_large' }),
      ]);
      await pullNode(b);
      const onB = records(b).clients as { id: string; first_name: string | null }[];
      expect(onB.find((row) => row.id === after.client_id)).toBeDefined();
      expect(onB.find((row) => row.id === grown.client_id)).toMatchObject({ first_name: null });
    } finally {
      await small.close();
    }
  });
});
