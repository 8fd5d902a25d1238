import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { PulledChange } from '../../shared/sync-protocol.js';
import { loadConfig } from '../../server/config.js';
import { createOpportunity, getOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { createClient, updateClient } from '../../server/crm/clients.js';
import { eraseClient } from '../../server/erasure/service.js';
import { createDevis, getDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { applyPage } from '../../server/sync/pull.js';
import { syncedRecords } from '../../server/sync/records.js';
import * as store from '../../server/sync/store.js';
import * as conflictsStore from '../../server/sync/conflicts-store.js';
import { adoptCabinet } from '../../server/tenancy/service.js';
import { tempDir, testClock, type TestClock } from '../helpers/server.js';

/**
 * The capture and the per-field merge of two or three installs on real SQLite files. The changes
 * travel between them in hub order (a seq per change, as the hub serves them); the hub itself is
 * tested in test/hub and end to end in test/sync/end-to-end.test.ts.
 */
interface Install {
  deps: Deps;
  clock: TestClock;
  device: string;
  /** Hub seqs this install has applied. */
  cursor: number;
}

const CABINET = '9f6c1f7e-5d7e-4c55-9b43-0a4a3a8f2c11';
const records = syncedRecords();
const dirs: string[] = [];
const opened: Deps[] = [];

afterEach(() => {
  for (const deps of opened.splice(0)) deps.db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function install(device: string, start: number): Promise<Install> {
  const dataDir = tempDir('courtier-sync-');
  dirs.push(dataDir);
  const db = openDatabase(databaseFile(dataDir));
  const clock = testClock(start);
  const deps: Deps = { ...defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [], env: {} }), clock };
  opened.push(deps);
  await adoptCabinet(
    deps,
    { cabinetId: CABINET, cabinet: 'Cabinet Partagé', email: `${device}@example.fr`, password: 'correct horse battery' },
    () =>
      store.insertConnection(db.orm, {
        cabinetId: CABINET,
        hubUrl: 'https://hub.test',
        deviceId: device,
        deviceName: device,
        paused: false,
        nextNumber: 1,
        acknowledgedNumber: 0,
        pullCursor: 0,
        clockTime: 0,
        clockCounter: 0,
        acknowledgedClockTime: 0,
        remoteClockTime: 0,
        hubEpoch: null,
        resyncing: false,
        state: 'idle',
        lastError: null,
        lastErrorCode: null,
        lastErrorAt: null,
        offlineSince: null,
        hubClockOffset: 0,
        lastPushAt: null,
        lastPullAt: null,
        caughtUpAt: null,
        connectedAt: start,
      }),
  );
  return { deps, clock, device, cursor: 0 };
}

/** A stand-in for the hub's log: every install's pushed changes, in the order they were pushed. */
function createLog() {
  const log: PulledChange[] = [];
  return {
    log,
    push(from: Install) {
      const rows = store.readOutboxAfter(from.deps.db.orm, CABINET, 0, 10_000);
      for (const row of rows) {
        log.push({
          seq: log.length + 1,
          device_id: from.device,
          kind: row.kind as PulledChange['kind'],
          record_id: row.recordId,
          op: row.op,
          hlc: row.hlc,
          fields: JSON.parse(row.fields) as Record<string, unknown>,
        });
      }
      store.forgetThrough(from.deps.db.orm, CABINET, rows.at(-1)?.number ?? 0, from.clock.now());
    },
    pull(into: Install) {
      applyPage({ deps: into.deps, records }, CABINET, { after: into.cursor, lastSeq: log.length, changes: log.slice(into.cursor) });
      into.cursor = log.length;
    },
  };
}

function opportunityRow(node: Install, id: string): unknown {
  return node.deps.db.sqlite.prepare('SELECT * FROM opportunities WHERE id = ?').get(id);
}

const START = Date.UTC(2026, 10, 24, 9, 0, 0);
const contact = { last_name: 'Martin', first_name: 'Léa', email: 'lea.martin@example.fr' };

describe('sync: capture and per-field merge', () => {
  it('queues a creation whole and an edit by its changed columns, numbered per device, in the transaction of the change', async () => {
    const a = await install('device-a', START);
    const created = createOpportunity(
      a.deps,
      CABINET,
      { title: 'Flotte auto', product: 'auto', contact, stage: 'new', expected_value_eur: 1200, tags: [] },
      'api',
    );
    a.clock.advance(1000);
    updateOpportunity(a.deps, CABINET, created.opportunity_id, { stage: 'qualified' });
    const rows = store.readOutboxAfter(a.deps.db.orm, CABINET, 0, 10);
    const changes = rows.filter((row) => row.kind === 'opportunity');
    expect(changes.map((row) => row.number)).toEqual([rows[0]?.number, expect.any(Number)]);
    expect(Object.keys(JSON.parse(changes[0]?.fields ?? '{}') as object)).toEqual(
      expect.arrayContaining(['title', 'product', 'stage', 'contact', 'created_at']),
    );
    expect(JSON.parse(changes[1]?.fields ?? '{}')).toEqual({ stage: 'qualified', updated_at: START + 1000 });
    // The events of those writes are queued too, with their ids.
    const events = rows.filter((row) => row.kind === 'event');
    expect(events).toHaveLength(2);
    expect(rows.map((row) => row.number)).toEqual(rows.map((_, i) => i + 1));
    // A creation writes no field clocks (no other device can know the record yet); an edit, its fields'.
    expect(store.findFieldClocks(a.deps.db.orm, CABINET, 'opportunity', created.opportunity_id)?.clocks).toEqual({
      stage: changes[1]?.hlc,
      updated_at: changes[1]?.hlc,
    });
    expect(store.findFieldClocks(a.deps.db.orm, CABINET, 'event', events[0]?.recordId ?? '')).toBeUndefined();
  });

  it('numbers and clocks on from the queue’s newest change, and from the link once the hub acknowledged everything', async () => {
    const a = await install('device-a', START);
    const first = createOpportunity(
      a.deps,
      CABINET,
      { title: 'Un', product: 'auto', contact, stage: 'new', expected_value_eur: 100, tags: [] },
      'api',
    );
    const queued = store.readOutboxAfter(a.deps.db.orm, CABINET, 0, 10);
    const newest = queued.at(-1)!;
    // The clock set back: the next change still orders after the queued ones.
    a.clock.advance(-60_000);
    store.forgetThrough(a.deps.db.orm, CABINET, newest.number, a.clock.now());
    expect(store.readOutboxAfter(a.deps.db.orm, CABINET, 0, 10)).toEqual([]);
    updateOpportunity(a.deps, CABINET, first.opportunity_id, { title: 'Deux' });
    updateOpportunity(a.deps, CABINET, first.opportunity_id, { title: 'Trois' });
    const next = store.readOutboxAfter(a.deps.db.orm, CABINET, 0, 10);
    expect(next.map((row) => row.number)).toEqual([newest.number + 1, newest.number + 2]);
    expect(next.every((row) => row.hlc > newest.hlc)).toBe(true);
    expect(next[1]!.hlc > next[0]!.hlc).toBe(true);
  });

  it('keeps both edits when two installs change different fields of one record at once', async () => {
    const a = await install('device-a', START);
    const b = await install('device-b', START);
    const hub = createLog();
    const created = createOpportunity(
      a.deps,
      CABINET,
      { title: 'Flotte auto', product: 'auto', contact, stage: 'new', expected_value_eur: 1200, tags: [] },
      'api',
    );
    hub.push(a);
    hub.pull(b);
    a.clock.advance(5000);
    b.clock.advance(6000);
    updateOpportunity(a.deps, CABINET, created.opportunity_id, { title: 'Flotte auto 12 véhicules' });
    updateOpportunity(b.deps, CABINET, created.opportunity_id, { stage: 'quoted' });
    hub.push(b);
    hub.push(a);
    hub.pull(a);
    hub.pull(b);
    for (const node of [a, b]) {
      const opportunity = getOpportunity(node.deps, CABINET, created.opportunity_id);
      expect(opportunity).toMatchObject({ title: 'Flotte auto 12 véhicules', stage: 'quoted' });
    }
    expect(opportunityRow(a, created.opportunity_id)).toEqual(opportunityRow(b, created.opportunity_id));
  });

  it('makes one contract of a quote two installs signed while offline, the later signing winning on both', async () => {
    const a = await install('device-a', START);
    const b = await install('device-b', START);
    const hub = createLog();
    const client = createClient(a.deps, CABINET, { type: 'person', last_name: 'Martin', first_name: 'Léa' });
    const quote = createDevis(a.deps, CABINET, { client_id: client.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
    recordDevisPriced(a.deps, CABINET, quote.devis_id, { tarifEur: 420 });
    hub.push(a);
    hub.pull(b);
    a.clock.advance(1000);
    b.clock.advance(2000);
    signDevis(a.deps, CABINET, quote.devis_id, { signed_at: '2026-11-24T09:00:01.000Z' });
    signDevis(b.deps, CABINET, quote.devis_id, { signed_at: '2026-11-24T09:00:02.000Z' });
    hub.push(a);
    hub.push(b);
    hub.pull(a);
    hub.pull(b);
    const contracts = [a, b].map((node) => node.deps.db.sqlite.prepare('SELECT * FROM contracts').all());
    expect(contracts[0]).toHaveLength(1);
    expect(contracts[1]).toEqual(contracts[0]);
    expect(contracts[0]).toMatchObject([{ devis_id: quote.devis_id, signed_at: Date.parse('2026-11-24T09:00:02.000Z') }]);
    const quotes = [a, b].map((node) => getDevis(node.deps, CABINET, quote.devis_id));
    expect(quotes[1]).toEqual(quotes[0]);
    expect(quotes[0]).toMatchObject({ status: 'signed', contract_id: (contracts[0] as { id: string }[])[0]?.id });
    for (const node of [a, b]) expect(conflictsStore.listConflicts(node.deps.db.orm, CABINET, 10)).toEqual([]);
  });

  it('gives a field edited on both sides the later clock’s value, whatever order the hub received them in', async () => {
    const a = await install('device-a', START);
    const b = await install('device-b', START);
    const hub = createLog();
    const created = createOpportunity(
      a.deps,
      CABINET,
      { title: 'MRH', product: 'mrh', contact, stage: 'new', expected_value_eur: 300, tags: [] },
      'api',
    );
    hub.push(a);
    hub.pull(b);
    b.clock.advance(2000);
    updateOpportunity(b.deps, CABINET, created.opportunity_id, { title: 'MRH — plus tard' });
    a.clock.advance(1000);
    updateOpportunity(a.deps, CABINET, created.opportunity_id, { title: 'MRH — plus tôt' });
    // The later edit (b's) reaches the hub first; a's earlier edit must not override it anywhere.
    hub.push(b);
    hub.push(a);
    hub.pull(a);
    hub.pull(b);
    expect(getOpportunity(a.deps, CABINET, created.opportunity_id).title).toBe('MRH — plus tard');
    expect(getOpportunity(b.deps, CABINET, created.opportunity_id).title).toBe('MRH — plus tard');
  });

  it('does not re-queue or re-emit what it applies from another install', async () => {
    const a = await install('device-a', START);
    const b = await install('device-b', START);
    const hub = createLog();
    createOpportunity(a.deps, CABINET, { title: 'Santé', product: 'sante', contact, stage: 'new', expected_value_eur: 0, tags: [] }, 'api');
    hub.push(a);
    hub.pull(b);
    expect(store.countOutbox(b.deps.db.orm, CABINET)).toBe(0);
    const events = b.deps.db.sqlite.prepare('SELECT id, type FROM events').all() as { id: string; type: string }[];
    const origin = a.deps.db.sqlite.prepare('SELECT id, type FROM events').all();
    // The event arrives once, with its original id: it is not a new event of b's.
    expect(events).toEqual(origin);
  });

  it('erases a client everywhere, and a late edit from an offline install never brings its data back', async () => {
    const a = await install('device-a', START);
    const b = await install('device-b', START);
    const hub = createLog();
    const client = createClient(a.deps, CABINET, {
      type: 'person',
      last_name: 'Durand',
      first_name: 'Paul',
      email: 'paul.durand@example.fr',
      phone: '+33612345678',
    });
    hub.push(a);
    hub.pull(b);
    // b edits offline, after a has erased.
    a.clock.advance(1000);
    eraseClient(a.deps, CABINET, client.client_id);
    b.clock.advance(5000);
    updateClient(b.deps, CABINET, client.client_id, { email: 'paul.nouveau@example.fr' });
    hub.push(a);
    hub.push(b);
    hub.pull(a);
    hub.pull(b);
    // b's clearing of its own client.updated event goes to the hub too.
    hub.push(b);
    hub.pull(a);
    for (const node of [a, b]) {
      const row = node.deps.db.sqlite
        .prepare('SELECT last_name, first_name, email, phone, erased_at FROM clients WHERE id = ?')
        .get(client.client_id) as Record<string, unknown>;
      expect(row).toEqual({ last_name: null, first_name: null, email: null, phone: null, erased_at: START + 1000 });
      const events = node.deps.db.sqlite.prepare("SELECT data FROM events WHERE type = 'client.updated'").all() as { data: string }[];
      for (const event of events) expect(event.data).not.toMatch(/Durand|Paul|paul\./);
    }
    // b keeps its own late event, cleared; a, which erased first, drops it (and its erasure) unseen: never stored, never delivered.
    const updates = (node: Install) => node.deps.db.sqlite.prepare("SELECT count(*) AS n FROM events WHERE type = 'client.updated'").get();
    expect([updates(a), updates(b)]).toEqual([{ n: 0 }, { n: 1 }]);
    // What the hub was sent after the erasure carries none of it either, once the erasures are in.
    const erasedEvents = new Set(hub.log.filter((c) => c.kind === 'event' && c.op === 'erase').map((c) => c.record_id));
    for (const change of hub.log.filter((c) => c.kind === 'event' && erasedEvents.has(c.record_id) && c.op === 'upsert')) {
      expect(hub.log.some((c) => c.record_id === change.record_id && c.op === 'erase' && c.seq > change.seq)).toBe(true);
    }
  });

  it('converges three installs editing the same records in any interleaving', async () => {
    const fields = ['title', 'product', 'source'] as const;
    const op = fc.record({
      node: fc.integer({ min: 0, max: 2 }),
      field: fc.constantFrom(...fields),
      value: fc.string({ minLength: 1, maxLength: 12 }).map((s) => s.trim() || 'x'),
      step: fc.integer({ min: 0, max: 3 }),
      sync: fc.integer({ min: 0, max: 5 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const nodes = [await install('device-a', START), await install('device-b', START + 700), await install('device-c', START - 400)];
        const [first] = nodes as [Install, Install, Install];
        const hub = createLog();
        const created = createOpportunity(
          first.deps,
          CABINET,
          { title: 'Base', product: 'auto', contact, stage: 'new', expected_value_eur: 0, tags: [] },
          'api',
        );
        hub.push(first);
        for (const node of nodes) hub.pull(node);
        for (const step of ops) {
          const node = nodes[step.node] as Install;
          node.clock.advance(step.step);
          updateOpportunity(node.deps, CABINET, created.opportunity_id, { [step.field]: step.value });
          // Sometimes push, sometimes pull, sometimes both: the installs are often out of date.
          if (step.sync % 2 === 0) hub.push(node);
          if (step.sync % 3 === 0) hub.pull(nodes[(step.node + 1) % 3] as Install);
        }
        for (const node of nodes) hub.push(node);
        for (const node of nodes) hub.pull(node);
        const rows = nodes.map((node) => opportunityRow(node, created.opportunity_id));
        expect(rows[1]).toEqual(rows[0]);
        expect(rows[2]).toEqual(rows[0]);
        for (const deps of opened.splice(0)) deps.db.close();
      }),
      { numRuns: 15 },
    );
  });
});

describe('a page that cannot be applied as it comes', () => {
  const NOW = Date.UTC(2026, 11, 1);
  const devis = (id: string, contractId: string | null) => ({
    status: contractId ? 'signed' : 'priced',
    client_id: '0d9c9d0a-0d5b-4f7b-9a4a-1d2f3e4a5b6c',
    opportunity_id: null,
    compagnie: 'sandbox',
    produit: 'auto',
    dic_data: '{}',
    tarif_cents: 1000,
    suspens: null,
    job_id: null,
    pdf_sha256: null,
    contract_id: contractId,
    signed_at: contractId ? NOW : null,
    created_at: NOW,
    updated_at: NOW,
  });
  const contract = (devisId: string) => ({
    devis_id: devisId,
    client_id: '0d9c9d0a-0d5b-4f7b-9a4a-1d2f3e4a5b6c',
    opportunity_id: null,
    compagnie: 'sandbox',
    produit: 'auto',
    premium_cents: 1000,
    signed_at: NOW,
    created_at: NOW,
  });
  const opportunity = {
    title: 'Après',
    product: 'auto',
    stage: 'new',
    expected_value_cents: 0,
    source: 'api',
    tags: '[]',
    created_via: 'api',
    created_at: NOW,
    updated_at: NOW,
    contact: JSON.stringify({ last_name: 'X', first_name: null, company_name: null, siret: null, email: null, phone: null }),
  };
  const count = (node: Install, table: string) =>
    (node.deps.db.sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  let seq = 0;
  const change = (kind: PulledChange['kind'], recordId: string, fields: Record<string, unknown>): PulledChange => {
    seq += 1;
    return {
      seq,
      device_id: 'remote',
      kind,
      record_id: recordId,
      op: 'upsert',
      hlc: `${String(NOW).padStart(15, '0')}-${String(seq).padStart(6, '0')}-remote`,
      fields,
    };
  };

  it('a contract before its quote is applied once its quote is, and the page goes on', async () => {
    const b = await install('b', NOW);
    const quote = '5b0f3f1e-2a8e-4d1c-9b7e-3c2d1e0f9a8b';
    const signed = '6c1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    const after = '8e3c4d5e-6f70-4182-8c9d-1e2f3a4b5c6d';
    const changes = [
      change('contract', signed, contract(quote)),
      change('devis', quote, devis(quote, signed)),
      change('opportunity', after, opportunity),
    ];
    expect(applyPage({ deps: b.deps, records }, CABINET, { after: 0, lastSeq: seq, changes })).toBe(3);
    expect(count(b, 'contracts')).toBe(1);
    expect(count(b, 'opportunities')).toBe(1);
    expect(conflictsStore.listConflicts(b.deps.db.orm, CABINET, 10)).toEqual([]);

    // Two installs of a version that made a contract id of its own signed the same quote offline: the
    // contract that comes second cannot be stored (a quote has one contract); it is set aside, and
    // what follows it in the page applies.
    const twice = '7d2b3c4d-5e6f-4071-9b8c-0d1e2f3a4b5c';
    const later = '9f4d5e6f-7081-4293-9dae-2f3a4b5c6d7e';
    const start = seq;
    const next = [change('contract', twice, contract(quote)), change('opportunity', later, opportunity)];
    applyPage({ deps: b.deps, records }, CABINET, { after: start, lastSeq: seq, changes: next });
    expect(count(b, 'contracts')).toBe(1);
    expect(count(b, 'opportunities')).toBe(2);
    const conflicts = conflictsStore.listConflicts(b.deps.db.orm, CABINET, 10);
    expect(conflicts.map((c) => [c.recordId, c.reason])).toEqual([[twice, 'not_applicable']]);
    expect(conflicts[0]?.message).toMatch(/UNIQUE constraint failed: contracts\.devis_id/);
    expect(store.findConnection(b.deps.db.orm, CABINET)?.pullCursor).toBe(seq);
  });

  it('an erasure of a client forgets the set-aside changes that carry its data', async () => {
    const b = await install('b', NOW);
    const client = '3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d';
    const row = {
      type: 'person',
      last_name: 'Durand',
      first_name: null,
      company_name: null,
      siret: null,
      email: 'paul@durand.fr',
      phone: null,
      address: null,
      birth_date: null,
      created_at: NOW,
      updated_at: NOW,
      erased_at: null,
    };
    const page = [
      change('client', client, row),
      // An event about the client that this install refuses (its data is not a client.updated's): set aside, with the client's email in it.
      change('event', '4b5c6d7e-8f90-4b1c-8d2e-3f4a5b6c7d8e', {
        type: 'client.updated',
        version: 'v1',
        created_at: NOW,
        data: JSON.stringify({ client_id: client, email: 'paul@durand.fr' }),
      }),
    ];
    applyPage({ deps: b.deps, records }, CABINET, { after: 0, lastSeq: seq, changes: page });
    const cursor = seq;
    expect(conflictsStore.listConflicts(b.deps.db.orm, CABINET, 10).map((c) => c.reason)).toContain('invalid_fields');
    const erasure = change('client', client, { ...row, last_name: null, email: null, erased_at: NOW });
    applyPage({ deps: b.deps, records }, CABINET, { after: cursor, lastSeq: seq, changes: [{ ...erasure, op: 'erase' }] });
    expect(JSON.stringify(conflictsStore.listConflicts(b.deps.db.orm, CABINET, 10))).not.toContain('paul@durand.fr');
  });
});
