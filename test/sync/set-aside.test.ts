// @module-tag postgres
import { sqliteTable, text, integer } from 'drizzle-orm/sqlite-core';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { formatHlc } from '../../shared/hlc.js';
import { createClient } from '../../server/crm/clients.js';
import { createOpportunity, getOpportunity, updateOpportunity } from '../../server/crm/service.js';
import { opportunityRow } from '../../server/crm/sync.js';
import { createDevis, recordDevisPriced, signDevis } from '../../server/devis/service.js';
import { applyNowUnderstood } from '../../server/sync/retry-set-aside.js';
import { createHubClient } from '../../server/sync/hub-client.js';
import { syncedRecords } from '../../server/sync/records.js';
import { listSyncConflicts } from '../../server/sync/conflicts.js';
import { syncedTable } from '../../server/sync/synced-table.js';
import * as store from '../../server/sync/store.js';
import * as conflictsStore from '../../server/sync/conflicts-store.js';
import { runCourtier } from '../helpers/cli.js';
import { compactCabinet } from '../../server/hub/compaction.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { joinCabinet } from '../../server/sync/service.js';
import { downloadAll } from '../../server/sync/transfer.js';
import {
  cabinetOfTwo as linkedPair,
  closeSyncNode,
  fetchHub,
  openSyncNode,
  pullNode,
  pushNode,
  syncContext,
  type SyncNode,
} from '../helpers/sync-node.js';

/**
 * What an install cannot apply is kept aside, never lost: a kind or a field of a newer version is
 * applied once the install is updated, and a person can try a set-aside change again or discard it.
 */
// The hub refuses clocks far ahead of its own: the installs start at its time.
const START = Date.now();

const fixture = useListeningHub();
const nodes: SyncNode[] = [];

afterEach(() => {
  for (const node of nodes.splice(0)) closeSyncNode(node);
});

async function cabinetOfTwo(bVersion: SyncNode['records']): Promise<[SyncNode, SyncNode]> {
  const pair = await linkedPair(fixture.hub, START, bVersion);
  nodes.push(...pair);
  return pair;
}

/** This version's records without one kind: what an install of a version before that kind knows. */
function withoutKind(kind: string) {
  const records = new Map(syncedRecords());
  records.delete(kind);
  return records;
}

/** The opportunities table of a version after this one, with a `priority` column (its migration adds it). */
const opportunitiesWithPriority = sqliteTable('opportunities', {
  id: text('id').primaryKey(),
  cabinetId: text('cabinet_id').notNull(),
  title: text('title').notNull(),
  product: text('product').notNull(),
  clientId: text('client_id'),
  stage: text('stage').notNull(),
  expectedValueCents: integer('expected_value_cents').notNull(),
  source: text('source').notNull(),
  contact: text('contact').notNull(),
  tags: text('tags').notNull(),
  createdVia: text('created_via').notNull(),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
  priority: text('priority'),
});

function updatedTo(node: SyncNode): SyncNode['records'] {
  node.deps.db.sqlite.exec('ALTER TABLE opportunities ADD COLUMN priority text');
  const records = new Map(syncedRecords());
  records.set(
    'opportunity',
    syncedTable('opportunity', opportunitiesWithPriority, { fields: opportunityRow.extend({ priority: z.string().max(20).nullable() }) }),
  );
  return records;
}

/** A device of the cabinet that speaks as a newer version: it pushes changes made by hand. */
async function newerPeer(cabinetId: string) {
  const pairing = createHubClient({ hubUrl: fixture.hub.url, fetch: fetchHub, now: () => START });
  const paired = await pairing.pair({ code: await fixture.hub.invite({ join: cabinetId }), device_name: 'Poste plus récent' });
  const client = createHubClient({ hubUrl: fixture.hub.url, fetch: fetchHub, now: () => START, credential: paired.device_secret });
  let number = 0;
  return {
    push: (recordId: string, fields: Record<string, unknown>, atMs: number) => {
      number += 1;
      const hlc = formatHlc({ time: atMs, counter: 0, device: paired.device_id });
      return client.push({ changes: [{ number, kind: 'opportunity', record_id: recordId, op: 'upsert', hlc, fields }] });
    },
  };
}

describe('changes an install cannot apply yet', () => {
  it('keeps a kind an older version does not know, and applies it once the install is updated', async () => {
    const [a, b] = await cabinetOfTwo(withoutKind('contract'));
    const client = createClient(a.deps, a.cabinetId, { type: 'person', last_name: 'Martin' });
    const quote = createDevis(a.deps, a.cabinetId, { client_id: client.client_id, compagnie: 'sandbox', produit: 'auto', dicData: {} });
    recordDevisPriced(a.deps, a.cabinetId, quote.devis_id, { tarifEur: 310 });
    signDevis(a.deps, a.cabinetId, quote.devis_id, undefined);
    await pushNode(a);
    await pullNode(b);
    const count = () => (b.deps.db.sqlite.prepare('SELECT count(*) AS n FROM contracts').get() as { n: number }).n;
    expect(count()).toBe(0);
    const setAside = listSyncConflicts(b.deps, b.cabinetId, 10);
    expect(setAside).toMatchObject([{ kind: 'contract', reason: 'not_understood' }]);
    // The cursor moved on: what follows still arrives.
    const later = createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Après le contrat', product: 'auto', contact: { last_name: 'M' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    await pullNode(b);
    expect(getOpportunity(b.deps, b.cabinetId, later.opportunity_id).title).toBe('Après le contrat');

    // Still the older version: nothing to apply yet.
    expect(await applyNowUnderstood(syncContext(b), b.cabinetId)).toBe(0);
    const updated = { ...b, records: syncedRecords() };
    expect(await applyNowUnderstood(syncContext(updated), b.cabinetId)).toBe(1);
    expect(count()).toBe(1);
    expect(b.deps.db.sqlite.prepare('SELECT * FROM contracts').all()).toEqual(a.deps.db.sqlite.prepare('SELECT * FROM contracts').all());
    expect(listSyncConflicts(b.deps, b.cabinetId, 10)).toEqual([]);
  });

  it('applies the fields it knows of a newer version’s change, clocks none it cannot store, and the rest once updated', async () => {
    const [a, b] = await cabinetOfTwo(syncedRecords());
    const created = createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Flotte', product: 'auto', contact: { last_name: 'G' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    await pullNode(b);
    const peer = await newerPeer(a.cabinetId);
    await peer.push(created.opportunity_id, { title: 'Flotte 12 véhicules', priority: 'haute' }, START + 60_000);
    await peer.push(created.opportunity_id, { priority: 'urgente' }, START + 120_000);
    await pullNode(b);
    expect(getOpportunity(b.deps, b.cabinetId, created.opportunity_id).title).toBe('Flotte 12 véhicules');
    expect(listSyncConflicts(b.deps, b.cabinetId, 10).map((c) => [c.reason, c.message])).toEqual([
      ['not_understood', expect.stringContaining('priority')],
      ['not_understood', expect.stringContaining('priority')],
    ]);
    const clocks = store.findFieldClocks(b.deps.db.orm, b.cabinetId, 'opportunity', created.opportunity_id)?.clocks ?? {};
    expect(clocks.title).toMatch(/^0*\d+-000000-/);
    expect(clocks).not.toHaveProperty('priority');

    const updated = { ...b, records: updatedTo(b) };
    expect(await applyNowUnderstood(syncContext(updated), b.cabinetId)).toBe(2);
    const row = b.deps.db.sqlite.prepare('SELECT title, priority FROM opportunities WHERE id = ?').get(created.opportunity_id);
    // Both changes applied, oldest first: the later value wins.
    expect(row).toEqual({ title: 'Flotte 12 véhicules', priority: 'urgente' });
    expect(listSyncConflicts(b.deps, b.cabinetId, 10)).toEqual([]);
  });
  it('applies them from the record’s state once updated, though the hub compacted the changes meanwhile', async () => {
    const [a, b] = await cabinetOfTwo(syncedRecords());
    const created = createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Flotte', product: 'auto', contact: { last_name: 'G' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    await pullNode(b);
    const peer = await newerPeer(a.cabinetId);
    await peer.push(created.opportunity_id, { title: 'Flotte 12 véhicules', priority: 'haute' }, START + 60_000);
    await peer.push(created.opportunity_id, { priority: 'urgente' }, START + 120_000);
    await pullNode(b);
    expect(listSyncConflicts(b.deps, b.cabinetId, 10)).toHaveLength(2);
    // Another change after them, then a compaction that keeps only the newest: theirs are gone.
    createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Autre', product: 'auto', contact: { last_name: 'H' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    expect(await compactCabinet(fixture.hub.deps, a.cabinetId, { days: 0, changes: 1, blobGraceMs: 3600_000 })).toMatchObject({
      changes_deleted: expect.any(Number),
    });

    const updated = { ...b, records: updatedTo(b) };
    expect(await applyNowUnderstood(syncContext(updated), b.cabinetId)).toBe(2);
    expect(b.deps.db.sqlite.prepare('SELECT title, priority FROM opportunities WHERE id = ?').get(created.opportunity_id)).toEqual({
      title: 'Flotte 12 véhicules',
      priority: 'urgente',
    });
    expect(listSyncConflicts(b.deps, b.cabinetId, 10)).toEqual([]);
  });
});

describe('a record set aside while an install reads the hub’s state', () => {
  it('is tried again as the record’s state, not as the change under its seq, which holds only that change’s fields', async () => {
    const [a] = await cabinetOfTwo(syncedRecords());
    const created = createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Flotte', product: 'auto', contact: { last_name: 'G' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    const peer = await newerPeer(a.cabinetId);
    await peer.push(created.opportunity_id, { title: 'Flotte 12 véhicules', priority: 'haute' }, START + 60_000);
    // The record's newest change is A's, of its title only; the state holds the newer version's priority too.
    await pullNode(a);
    a.clock.set(START + 120_000);
    updateOpportunity(a.deps, a.cabinetId, created.opportunity_id, { title: 'Flotte 14 véhicules' });
    await pushNode(a);

    const opened = openSyncNode(START + 130_000);
    await joinCabinet(
      opened.deps,
      {
        hubUrl: fixture.hub.url,
        code: await fixture.hub.invite({ join: a.cabinetId }),
        deviceName: 'C',
        email: 'c@c.fr',
        password: 'correct horse battery',
      },
      { fetch: fetchHub },
      CLI_ACTOR,
    );
    const c = { ...opened, cabinetId: a.cabinetId };
    nodes.push(c);
    await downloadAll(c.deps, c.records, c.cabinetId, fetchHub, () => undefined);
    expect(listSyncConflicts(c.deps, c.cabinetId, 10)).toEqual([
      expect.objectContaining({ kind: 'opportunity', reason: 'not_understood' }),
    ]);
    expect(conflictsStore.listConflicts(c.deps.db.orm, c.cabinetId, 10)).toEqual([expect.objectContaining({ fromState: true })]);

    const updated = { ...c, records: updatedTo(c) };
    expect(await applyNowUnderstood(syncContext(updated), c.cabinetId)).toBe(1);
    expect(c.deps.db.sqlite.prepare('SELECT title, priority FROM opportunities WHERE id = ?').get(created.opportunity_id)).toEqual({
      title: 'Flotte 14 véhicules',
      priority: 'haute',
    });
    expect(listSyncConflicts(c.deps, c.cabinetId, 10)).toEqual([]);
  });
});

describe('a person deals with a set-aside change', () => {
  it('lists, tries again and discards through the CLI, and the audit log says who did', async () => {
    const [a, b] = await cabinetOfTwo(syncedRecords());
    const created = createOpportunity(
      a.deps,
      a.cabinetId,
      { title: 'Habitation', product: 'mrh', contact: { last_name: 'P' }, stage: 'new', expected_value_eur: 0, tags: [] },
      'api',
    );
    await pushNode(a);
    await pullNode(b);
    const peer = await newerPeer(a.cabinetId);
    // A value this install refuses (a stage it does not have): set aside as invalid.
    await peer.push(created.opportunity_id, { stage: 'on_hold' }, START + 60_000);
    await pullNode(b);
    const dataDir = ['--data-dir', b.dir];
    const listed = await runCourtier(['sync', 'conflicts', '--cabinet', b.cabinetId, '--json', ...dataDir]);
    expect(listed.code, listed.stderr).toBe(0);
    const [conflict] = (JSON.parse(listed.stdout) as { conflicts: { seq: number; reason: string }[] }).conflicts;
    expect(conflict).toMatchObject({ reason: 'invalid_fields' });
    const seq = String(conflict?.seq);

    const retried = await runCourtier(['sync', 'conflicts', 'retry', '--cabinet', b.cabinetId, '--seq', seq, '--json', ...dataDir]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({ applied: [], still_set_aside: [Number(seq)], no_longer_on_hub: [] });

    const unknown = await runCourtier(['sync', 'conflicts', 'discard', '--cabinet', b.cabinetId, '--seq', '999999', ...dataDir]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/No change set aside with seq 999999/);

    const discarded = await runCourtier(['sync', 'conflicts', 'discard', '--cabinet', b.cabinetId, '--seq', seq, '--json', ...dataDir]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(listSyncConflicts(b.deps, b.cabinetId, 10)).toEqual([]);
    const audit = b.deps.db.sqlite
      .prepare("SELECT action, actor_kind FROM audit_events WHERE action LIKE 'sync.conflict%' ORDER BY rowid")
      .all();
    expect(audit).toEqual([
      { action: 'sync.conflicts_retried', actor_kind: 'cli' },
      { action: 'sync.conflict_discarded', actor_kind: 'cli' },
    ]);
  });
});
