// @module-tag postgres
import fc from 'fast-check';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { MAX_PULL_PAGE_BYTES, MAX_RECORD_BYTES, pullChanges, pushChanges, type SyncChange } from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import { getState, type StateResponse } from '../../shared/sync-state.js';
import { compactCabinet, type Retention } from '../../server/hub/compaction.js';
import { startCompaction } from '../../server/hub/compaction-runs.js';
import { hubMigrationsFolder } from '../../server/hub/database.js';
import { pairTestDevice, sha256, startHub, storeBlob, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { pdf } from '../helpers/insurance-data.js';

/**
 * The hub keeps each record's state and a bounded tail of changes: the state is the fold of every
 * change it stored (as an install that applied them all holds it), compaction deletes the changes
 * older than the retention and the PDFs no record names, a cursor older than the tail is 410, and a
 * device reads its own cabinet's state only.
 */
let pg: TestPostgres;
let hub: TestHub;
/** A hub that stages every push before its locks (server/hub/store.ts stageChanges), as it does large ones. */
let stagingHub: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg);
  stagingHub = await startHub(pg, { limits: { stagedPushChanges: 1 } });
});
afterAll(async () => {
  await hub.close();
  await stagingHub.close();
  await pg.stop();
});

const HOUR = 3600_000;
const numbers = new Map<string, number>();
let cabinets = 0;

/** Pushes a batch as the device's install numbers and stamps it: `stamp` is [time offset in ms, counter]. */
async function push(
  device: TestDevice,
  batch: {
    kind?: SyncChange['kind'];
    record_id: string;
    op?: SyncChange['op'];
    fields: Record<string, unknown>;
    stamp?: [number, number];
  }[],
  on: TestHub = hub,
): Promise<void> {
  const first = numbers.get(device.device_id) ?? 1;
  const changes = batch.map((c, i) => ({
    number: first + i,
    kind: c.kind ?? 'client',
    record_id: c.record_id,
    op: c.op ?? 'upsert',
    hlc: formatHlc({ time: on.clock.now() - 60_000 + (c.stamp?.[0] ?? i), counter: c.stamp?.[1] ?? 0, device: device.device_id }),
    fields: c.fields,
  }));
  numbers.set(device.device_id, first + batch.length);
  const res = await on.request({ method: 'POST', url: pathTo(pushChanges), headers: device.headers, body: { changes } });
  expect(res.statusCode, res.body).toBe(200);
}

interface Held {
  fields: Record<string, unknown>;
  stamps: Record<string, string>;
  erased: boolean;
}

/** What an install holds once it applied every change the hub stored, in seq order (server/sync/apply.ts, per field). */
async function replayed(cabinetId: string, on: TestHub = hub): Promise<Map<string, Held>> {
  const rows = await on.deps.sql<{ kind: string; record_id: string; op: string; hlc: string; fields: Record<string, unknown> }[]>`
    SELECT kind, record_id, op, hlc, fields FROM hub_changes WHERE cabinet_id = ${cabinetId} ORDER BY seq`;
  const held = new Map<string, Held>();
  for (const change of rows) {
    const key = `${change.kind}/${change.record_id}`;
    const record = held.get(key) ?? { fields: {}, stamps: {}, erased: false };
    held.set(key, record);
    if (record.erased && change.op !== 'erase') continue;
    const erasing = change.op === 'erase' && !record.erased;
    for (const [field, value] of Object.entries(change.fields)) {
      const stamp = record.stamps[field];
      if (!erasing && stamp !== undefined && change.hlc <= stamp) continue;
      record.fields[field] = value;
      record.stamps[field] = change.hlc;
    }
    if (change.op === 'erase') record.erased = true;
  }
  return held;
}

async function states(cabinetId: string, on: TestHub = hub): Promise<Map<string, Held>> {
  const rows = await on.deps.sql<
    { kind: string; record_id: string; fields: Record<string, unknown>; stamps: Record<string, string>; erased: boolean }[]
  >`
    SELECT kind, record_id, fields, stamps, erased FROM hub_records WHERE cabinet_id = ${cabinetId}`;
  return new Map(rows.map((row) => [`${row.kind}/${row.record_id}`, { fields: row.fields, stamps: row.stamps, erased: row.erased }]));
}

async function newCabinet(devices = 1, on: TestHub = hub): Promise<{ id: string; devices: TestDevice[] }> {
  const id = `cab-ret-${++cabinets}`;
  const first = await pairTestDevice(on, { id });
  const rest = [];
  for (let i = 1; i < devices; i++) rest.push(await pairTestDevice(on, { id }, { join: true, name: `poste ${i}` }));
  return { id, devices: [first, ...rest] };
}

async function pull(device: TestDevice, after: number) {
  return hub.request({ method: 'GET', url: pathTo(pullChanges, {}, { after, limit: 1000 }), headers: device.headers });
}

async function readAllState(device: TestDevice, limit: number): Promise<{ records: StateResponse['records']; asOf: number }> {
  const records: StateResponse['records'] = [];
  let asOf: number | undefined;
  for (let after = { kind: '', id: '' }; ;) {
    const res = await hub.request({
      method: 'GET',
      url: pathTo(getState, {}, { after_kind: after.kind, after_id: after.id, limit }),
      headers: device.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<StateResponse>();
    asOf ??= page.as_of_seq;
    records.push(...page.records);
    const last = page.records.at(-1);
    if (!page.more || !last) return { records, asOf };
    after = { kind: last.kind, id: last.record_id };
  }
}

const blobsOf = async (cabinetId: string) =>
  (await hub.deps.sql<{ sha256: string }[]>`SELECT sha256 FROM hub_blobs WHERE cabinet_id = ${cabinetId} ORDER BY sha256`).map(
    (row) => row.sha256,
  );

const compact = (cabinetId: string, retention: Partial<Retention>) =>
  compactCabinet(hub.deps, cabinetId, { days: 0, changes: 1, blobGraceMs: HOUR, ...retention });

/** The migration's backfill, as a hub with older data runs it once. */
const backfill = readMigrationFiles({ migrationsFolder: hubMigrationsFolder() })
  .flatMap((migration) => migration.sql)
  .find((statement) => statement.includes('INSERT INTO "hub_records"'));
const recount = readMigrationFiles({ migrationsFolder: hubMigrationsFolder() })
  .flatMap((migration) => migration.sql)
  .find((statement) => statement.includes('UPDATE "hub_cabinets" c SET'));
const signedBackfill = readMigrationFiles({ migrationsFolder: hubMigrationsFolder() })
  .flatMap((migration) => migration.sql)
  .find((statement) => statement.includes('UPDATE "hub_records" r SET "signed" = true'));

describe('each record’s state on the hub', () => {
  it.each([
    { path: 'stored straight', on: () => hub },
    { path: 'staged before the locks', on: () => stagingHub },
  ])(
    'is what an install holds once it applied every stored change, whatever the order of stamps, batches, devices and erasures, pushes $path; the migration’s backfill makes the same',
    async ({ on }) => {
      const target = on();
      const op = fc.record({
        device: fc.integer({ min: 0, max: 1 }),
        record: fc.constantFrom('c1', 'c2', 'c3'),
        erase: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
        fields: fc.subarray(['last_name', 'city', 'notes'], { minLength: 1 }),
        value: fc.string({ maxLength: 6 }),
        stamp: fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 2 })),
        sameBatch: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
          const cabinet = await newCabinet(2, target);
          const batches: { device: number; changes: Parameters<typeof push>[1] }[] = [];
          for (const o of ops) {
            const change = o.erase
              ? {
                  record_id: o.record,
                  op: 'erase' as const,
                  fields: { type: 'person', erased_at: o.stamp[0], email: null },
                  stamp: o.stamp,
                }
              : {
                  record_id: o.record,
                  fields: Object.fromEntries(o.fields.map((field) => [field, `${field}:${o.value}`])),
                  stamp: o.stamp,
                };
            const previous = batches.at(-1);
            if (o.sameBatch && previous?.device === o.device) previous.changes.push(change);
            else batches.push({ device: o.device, changes: [change] });
          }
          for (const batch of batches) await push(cabinet.devices[batch.device]!, batch.changes, target);
          const expected = await replayed(cabinet.id, target);
          expect(await states(cabinet.id, target)).toEqual(expected);
          // Each state's size is its fields' and stamps' as PostgreSQL writes them out, however the push went.
          const [missized] = await target.deps.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM hub_records WHERE cabinet_id = ${cabinet.id} AND bytes <> octet_length(fields::text) + octet_length(stamps::text)`;
          expect(missized?.n).toBe(0);
          await target.deps.sql`DELETE FROM hub_records WHERE cabinet_id = ${cabinet.id}`;
          await target.deps.sql.unsafe(
            backfill!.replace('FROM "hub_changes" GROUP BY', `FROM "hub_changes" WHERE "cabinet_id" = '${cabinet.id}' GROUP BY`),
          );
          expect(await states(cabinet.id, target)).toEqual(expected);
        }),
        { numRuns: 40 },
      );
    },
  );
});

describe('compaction', () => {
  it('keeps the newest changes or those of the last days, whichever keeps more, counts what it deleted, and answers an older cursor with 410', async () => {
    const { id, devices } = await newCabinet(2);
    const [x, y] = devices as [TestDevice, TestDevice];
    for (let round = 0; round < 5; round++)
      await push(
        x,
        Array.from({ length: 10 }, (_, i) => ({
          record_id: `r${i}`,
          fields: { last_name: `Nom ${round}`, [`round_${round}`]: round },
          stamp: [round * 10 + i, 0],
        })),
      );
    const before = await readAllState(y, 1000);
    const [counted] = await hub.deps.sql<
      { changes_count: string; changes_bytes: string }[]
    >`SELECT changes_count, changes_bytes FROM hub_cabinets WHERE id = ${id}`;

    // All 50 were received now: 30 days keep them all, whatever the count.
    expect(await compact(id, { days: 30, changes: 10 })).toMatchObject({ changes_deleted: 0, retained_from_seq: 1 });
    hub.clock.advance(2 * 24 * HOUR);
    const summary = await compact(id, { days: 1, changes: 15 });
    expect(summary).toMatchObject({ changes_deleted: 35, retained_from_seq: 36 });
    const [after] = await hub.deps.sql<
      { changes_count: string; changes_bytes: string; retained_from_seq: string }[]
    >`SELECT changes_count, changes_bytes, retained_from_seq FROM hub_cabinets WHERE id = ${id}`;
    const [held] = await hub.deps.sql<
      { count: string; bytes: string }[]
    >`SELECT count(*) AS count, sum(bytes) AS bytes FROM hub_changes WHERE cabinet_id = ${id}`;
    expect(Number(after!.changes_count)).toBe(Number(counted!.changes_count) - 35);
    expect(Number(after!.changes_count)).toBe(Number(held!.count));
    expect(Number(after!.changes_bytes)).toBe(Number(held!.bytes));

    // The state did not move; a cursor in the tail pulls as before, an older one is told where the tail starts.
    expect(await readAllState(y, 3)).toEqual(before);
    const old = await pull(y, 34);
    expect(old.statusCode).toBe(410);
    expect(old.json()).toMatchObject({
      error: 'cursor_expired',
      details: { oldest_seq: 35 },
      message: expect.stringContaining('Read the cabinet’s current state'),
    });
    const edge = await pull(y, 35);
    expect(edge.statusCode, edge.body).toBe(200);
    expect(edge.json<{ changes: unknown[]; last_seq: number }>()).toMatchObject({ last_seq: 50 });
    expect(edge.json<{ changes: unknown[] }>().changes).toHaveLength(15);
    // Compacting again finds nothing more to delete.
    expect(await compact(id, { days: 1, changes: 15 })).toMatchObject({ changes_deleted: 0, retained_from_seq: 36 });
  });

  it('runs from hub serve once a period, and records in the audit log the cabinets it took something from', async () => {
    const { id, devices } = await newCabinet();
    await push(devices[0]!, [{ record_id: 'p1', fields: { last_name: 'Un' } }]);
    await push(devices[0]!, [{ record_id: 'p1', fields: { last_name: 'Deux' }, stamp: [5, 0] }]);
    hub.clock.advance(24 * HOUR);
    const errors: unknown[] = [];
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let loop: ReturnType<typeof startCompaction>;
    try {
      loop = startCompaction(hub.deps, { days: 0, changes: 1, blobGraceMs: HOUR }, 3600_000, {
        error: (...args: unknown[]) => errors.push(args),
      });
      await vi.advanceTimersByTimeAsync(3600_000 - 1);
      expect(Number((await hub.deps.sql<{ n: string }[]>`SELECT retained_from_seq AS n FROM hub_cabinets WHERE id = ${id}`)[0]!.n)).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
    } finally {
      vi.useRealTimers();
    }
    await loop.stop();
    expect(errors).toEqual([]);
    expect(Number((await hub.deps.sql<{ n: string }[]>`SELECT retained_from_seq AS n FROM hub_cabinets WHERE id = ${id}`)[0]!.n)).toBe(2);
    const audited = await hub.deps.sql<
      { actor_kind: string; details: Record<string, unknown> }[]
    >`SELECT actor_kind, details FROM hub_audit_events WHERE cabinet_id = ${id} AND action = 'hub.compacted'`;
    expect(audited).toEqual([{ actor_kind: 'system', details: expect.objectContaining({ changes_deleted: 1 }) }]);
  });

  it('never deletes the newest change, so that a cursor at the cabinet’s newest seq (a waiting long poll) never expires', async () => {
    const { id, devices } = await newCabinet(2);
    await push(devices[0]!, [{ record_id: 'seul', fields: { last_name: 'Seul' } }]);
    hub.clock.advance(400 * 24 * HOUR);
    expect(await compact(id, { days: 0, changes: 0 })).toMatchObject({ changes_deleted: 0, retained_from_seq: 1 });
    expect((await pull(devices[1]!, 1)).statusCode).toBe(200);
    expect((await pull(devices[1]!, 0)).statusCode).toBe(200);
  });

  it('takes a replayed batch whose numbers it deleted for a restored install’s: device_rewound, nothing stored', async () => {
    const { id, devices } = await newCabinet();
    const x = devices[0]!;
    await push(x, [{ record_id: 'a', fields: { last_name: 'A' } }]);
    await push(x, [{ record_id: 'b', fields: { last_name: 'B' } }]);
    hub.clock.advance(24 * HOUR);
    await compact(id, { changes: 1 });
    const res = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: x.headers,
      body: {
        changes: [
          {
            number: 1,
            kind: 'client',
            record_id: 'a',
            op: 'upsert',
            hlc: formatHlc({ time: hub.clock.now() - 1000, counter: 0, device: x.device_id }),
            fields: { last_name: 'A' },
          },
        ],
      },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'device_rewound', details: { expected_number: 3 } });
  });
});

describe('PDFs no record names', () => {
  it('are collected once past their grace period; a PDF a record’s state or a change still held names stays, and so does one just uploaded', async () => {
    const { id, devices } = await newCabinet();
    const x = devices[0]!;
    const [first, current, orphan, tailOnly, fresh] = ['premier', 'actuel', 'orphelin', 'dans la file', 'tout juste'].map(pdf) as [
      Buffer,
      Buffer,
      Buffer,
      Buffer,
      Buffer,
    ];
    for (const bytes of [first, current, orphan, tailOnly]) await storeBlob(hub, x, bytes);
    let edits = 0;
    const devis = (record: string, bytes: Buffer) => ({
      kind: 'devis' as const,
      record_id: record,
      fields: { status: 'priced', pdf_sha256: sha256(bytes) },
      stamp: [++edits, 0] as [number, number],
    });
    await push(x, [devis('D1', first)]);
    await push(x, [devis('D1', current)]);
    hub.clock.advance(2 * HOUR);
    // A change in the tail names tailOnly; the state of D2 names another PDF since.
    await push(x, [devis('D2', tailOnly), devis('D2', current)]);
    await storeBlob(hub, x, fresh);
    const [countsBefore] = await hub.deps.sql<
      { blobs_count: string; blobs_bytes: string }[]
    >`SELECT blobs_count, blobs_bytes FROM hub_cabinets WHERE id = ${id}`;

    const summary = await compact(id, { days: 0, changes: 2, blobGraceMs: HOUR });
    expect(summary).toMatchObject({ changes_deleted: 2, blobs_deleted: 2, blob_bytes_deleted: first.length + orphan.length });
    const kept = (await hub.deps.sql<{ sha256: string }[]>`SELECT sha256 FROM hub_blobs WHERE cabinet_id = ${id}`)
      .map((row) => row.sha256)
      .sort();
    expect(kept).toEqual([current, tailOnly, fresh].map(sha256).sort());
    const [countsAfter] = await hub.deps.sql<
      { blobs_count: string; blobs_bytes: string }[]
    >`SELECT blobs_count, blobs_bytes FROM hub_cabinets WHERE id = ${id}`;
    expect(Number(countsAfter!.blobs_count)).toBe(Number(countsBefore!.blobs_count) - 2);
    expect(Number(countsAfter!.blobs_bytes)).toBe(Number(countsBefore!.blobs_bytes) - first.length - orphan.length);

    // A PUT of a PDF the hub holds starts its grace period again: the change naming it is on its way.
    hub.clock.advance(2 * HOUR);
    await storeBlob(hub, x, fresh);
    expect(await compact(id, { days: 0, changes: 100, blobGraceMs: HOUR })).toMatchObject({ blobs_deleted: 0 });
  });

  it('keeps the PDFs a quote’s other documents and an advice document name, as long as the records name them', async () => {
    const { id, devices } = await newCabinet();
    const x = devices[0]!;
    const [conditions, advice] = ['conditions générales', 'document de conseil'].map(pdf) as [Buffer, Buffer];
    for (const bytes of [conditions, advice]) await storeBlob(hub, x, bytes);
    const documents = JSON.stringify([{ kind: 'conditions', title: 'CG', sha256: sha256(conditions), size: conditions.length }]);
    await push(x, [
      { kind: 'devis', record_id: 'D1', fields: { status: 'priced', documents }, stamp: [1, 0] },
      { kind: 'conseil', record_id: 'K1', fields: { pdf_sha256: sha256(advice), formule: 'confort' }, stamp: [2, 0] },
      { kind: 'client', record_id: 'C1', fields: { last_name: 'Martin' }, stamp: [3, 0] },
    ]);
    hub.clock.advance(2 * HOUR);
    // The changes are compacted away; the records' state still names both PDFs.
    expect(await compact(id, { days: 0, changes: 1, blobGraceMs: HOUR })).toMatchObject({ changes_deleted: 2, blobs_deleted: 0 });
    expect(await blobsOf(id)).toEqual([conditions, advice].map(sha256).sort());
  });
});

describe('erasure and the state', () => {
  it('leaves no personal data in hub_records, even for records whose changes naming the client were compacted', async () => {
    const { id, devices } = await newCabinet();
    const x = devices[0]!;
    const contact = JSON.stringify({
      last_name: 'Quintavalle',
      first_name: null,
      company_name: null,
      siret: null,
      email: 'm.quintavalle@exemple.fr',
      phone: null,
    });
    await storeBlob(hub, x, pdf('Quintavalle, devis auto'));
    await push(x, [
      { record_id: 'C', fields: { type: 'person', last_name: 'Quintavalle', email: 'm.quintavalle@exemple.fr', siret: null } },
      { kind: 'opportunity', record_id: 'O', fields: { title: 'Auto', contact } },
      {
        kind: 'devis',
        record_id: 'D',
        fields: {
          status: 'priced',
          client_id: 'C',
          opportunity_id: 'O',
          dic_data: '{"insured_name":"Quintavalle"}',
          suspens: 'Permis de Quintavalle',
          pdf_sha256: sha256(pdf('Quintavalle, devis auto')),
        },
      },
      {
        kind: 'job',
        record_id: 'J',
        fields: { status: 'completed', devis_id: 'D', dic_data: '{"insured_name":"Quintavalle"}', error_message: null },
      },
      {
        kind: 'event',
        record_id: 'E',
        fields: {
          type: 'opportunity.created',
          version: 'v1',
          created_at: 1,
          data: JSON.stringify({ opportunity_id: 'O', contact: { last_name: 'Quintavalle', company_name: null, siret: null } }),
        },
      },
    ]);
    await push(x, [{ kind: 'opportunity', record_id: 'O', fields: { title: 'Auto (relance)' } }]);
    hub.clock.advance(2 * 24 * HOUR);
    await compact(id, { changes: 1 });
    expect(Number((await hub.deps.sql<{ count: string }[]>`SELECT count(*) FROM hub_changes WHERE cabinet_id = ${id}`)[0]!.count)).toBe(1);

    await push(x, [{ record_id: 'C', op: 'erase', fields: { type: 'person', erased_at: 2, last_name: null, email: null, siret: null } }]);
    const text = (await hub.deps.sql<{ text: string }[]>`SELECT fields::text AS text FROM hub_records WHERE cabinet_id = ${id}`)
      .map((row) => row.text)
      .join('\n');
    expect(text).not.toMatch(/quintavalle/i);
    const [devis] = await hub.deps.sql<
      { fields: Record<string, unknown> }[]
    >`SELECT fields FROM hub_records WHERE cabinet_id = ${id} AND kind = 'devis'`;
    expect(devis!.fields).toMatchObject({ status: 'priced', dic_data: '{}', suspens: null, pdf_sha256: null });
    expect(await hub.deps.sql`SELECT 1 FROM hub_blobs WHERE cabinet_id = ${id}`).toHaveLength(0);
  });
});

describe('the quota counters', () => {
  it('agree with what the hub holds after an erasure and a compaction: an erasure gives back the PDFs it deletes, compaction what it counted of the changes it deletes', async () => {
    const { id, devices } = await newCabinet();
    const x = devices[0]!;
    const quotePdf = pdf('Quintavalle, devis auto, '.repeat(50));
    await storeBlob(hub, x, quotePdf);
    await push(x, [
      { record_id: 'C', fields: { type: 'person', last_name: 'Quintavalle', email: 'q@exemple.fr', siret: null, notes: 'n'.repeat(5000) } },
      {
        kind: 'devis',
        record_id: 'D',
        fields: {
          status: 'priced',
          client_id: 'C',
          dic_data: JSON.stringify({ insured_name: 'Quintavalle', more: 'd'.repeat(5000) }),
          pdf_sha256: sha256(quotePdf),
        },
      },
      {
        kind: 'event',
        record_id: 'E',
        fields: {
          type: 'client.updated',
          version: 'v1',
          created_at: 1,
          data: JSON.stringify({ client_id: 'C', last_name: 'Quintavalle', changed_fields: ['notes'] }),
        },
      },
    ]);
    const counters = async () => {
      const [row] = await hub.deps.sql<{ changes_count: string; changes_bytes: string; blobs_count: string; blobs_bytes: string }[]>`
        SELECT changes_count, changes_bytes, blobs_count, blobs_bytes FROM hub_cabinets WHERE id = ${id}`;
      return {
        changes: Number(row!.changes_count),
        changeBytes: Number(row!.changes_bytes),
        blobs: Number(row!.blobs_count),
        blobBytes: Number(row!.blobs_bytes),
      };
    };
    const held = async () => {
      const [changes] = await hub.deps.sql<
        { n: string; bytes: string | null }[]
      >`SELECT count(*) AS n, sum(bytes) AS bytes FROM hub_changes WHERE cabinet_id = ${id}`;
      const [blobs] = await hub.deps.sql<
        { n: string; bytes: string | null }[]
      >`SELECT count(*) AS n, sum(size) AS bytes FROM hub_blobs WHERE cabinet_id = ${id}`;
      return {
        changes: Number(changes!.n),
        changeBytes: Number(changes!.bytes ?? 0),
        blobs: Number(blobs!.n),
        blobBytes: Number(blobs!.bytes ?? 0),
      };
    };
    const sent = await counters();
    expect(sent).toEqual(await held());

    await push(x, [{ record_id: 'C', op: 'erase', fields: { type: 'person', erased_at: 2, last_name: null, email: null, siret: null } }]);
    const erased = await counters();
    // The changes' bytes stay counted as sent; the PDF is gone, and uncounted.
    expect(erased.changeBytes).toBeGreaterThan(sent.changeBytes);
    expect(erased).toMatchObject({ changes: sent.changes + 1, blobs: 0, blobBytes: 0 });
    expect(erased).toEqual(await held());

    hub.clock.advance(2 * 24 * HOUR);
    await push(x, [{ record_id: 'autre', fields: { last_name: 'Autre' } }]);
    const summary = await compact(id, { changes: 1 });
    expect(summary.changes_deleted).toBe(4);
    expect(await counters()).toEqual(await held());
    expect(await counters()).toMatchObject({ changes: 1, blobs: 0 });

    // Counters an older hub left higher are counted again by the migration.
    await hub.deps
      .sql`UPDATE hub_cabinets SET changes_bytes = changes_bytes + 9999, blobs_count = blobs_count + 1, blobs_bytes = blobs_bytes + 512 WHERE id = ${id}`;
    await hub.deps.sql.unsafe(recount!.replace(/;\s*$/, ` WHERE c."id" = '${id}';`));
    expect(await counters()).toEqual(await held());
  });
});

describe('a signed quote, once compaction deleted the changes that said so', () => {
  it('keeps its PDF and its other fields through an erasure, though a device with a valid credential unsigned it since, and through collection once its PDF is named no more', async () => {
    const { id, devices } = await newCabinet(2);
    const [x, hostile] = devices as [TestDevice, TestDevice];
    const signedPdf = pdf('Quintavalle, contrat MRH');
    await storeBlob(hub, x, signedPdf);
    await push(x, [
      { record_id: 'C', fields: { type: 'person', last_name: 'Quintavalle', email: 'q@exemple.fr', siret: null } },
      {
        kind: 'devis',
        record_id: 'D',
        fields: {
          status: 'priced',
          client_id: 'C',
          dic_data: '{"insured_name":"Quintavalle"}',
          tarif_cents: 21000,
          pdf_sha256: sha256(signedPdf),
        },
      },
    ]);
    await push(x, [
      { kind: 'devis', record_id: 'D', fields: { status: 'signed', signed_at: 5, contract_id: 'K' }, stamp: [5, 0] },
      { kind: 'contract', record_id: 'K', fields: { devis_id: 'D', client_id: 'C', premium_cents: 21000 }, stamp: [6, 0] },
    ]);
    hub.clock.advance(2 * 24 * HOUR);
    await push(x, [{ record_id: 'autre', fields: { last_name: 'Autre' } }]);
    await compact(id, { changes: 1 });
    expect(await hub.deps.sql`SELECT 1 FROM hub_changes WHERE cabinet_id = ${id} AND kind IN ('devis', 'contract')`).toHaveLength(0);

    // Raw HTTP, as a stolen laptop would: the quote said priced again, its contract pointed elsewhere, then the client erased.
    await push(hostile, [
      { kind: 'devis', record_id: 'D', fields: { status: 'priced', signed_at: null, contract_id: null } },
      { kind: 'contract', record_id: 'K', fields: { devis_id: 'ailleurs' } },
    ]);
    await push(hostile, [
      { record_id: 'C', op: 'erase', fields: { type: 'person', erased_at: 9, last_name: null, email: null, siret: null } },
    ]);
    expect(await blobsOf(id)).toEqual([sha256(signedPdf)]);
    const [state] = await hub.deps.sql<
      { fields: Record<string, unknown>; signed: boolean }[]
    >`SELECT fields, signed FROM hub_records WHERE cabinet_id = ${id} AND kind = 'devis' AND record_id = 'D'`;
    expect(state).toEqual({
      signed: true,
      fields: expect.objectContaining({ pdf_sha256: sha256(signedPdf), tarif_cents: 21000, client_id: 'C', dic_data: '{}' }),
    });

    // Its PDF named by nothing any more: collection keeps it all the same.
    await push(hostile, [{ kind: 'devis', record_id: 'D', fields: { pdf_sha256: null } }]);
    hub.clock.advance(2 * 24 * HOUR);
    await push(x, [{ record_id: 'autre', fields: { last_name: 'Autre encore' } }]);
    expect(await compact(id, { changes: 1, blobGraceMs: HOUR })).toMatchObject({ blobs_deleted: 0 });
    expect(await blobsOf(id)).toEqual([sha256(signedPdf)]);
  });

  it('is found by the migration’s backfill from the state, from a change still held, or from a contract', async () => {
    const { id, devices } = await newCabinet();
    await push(devices[0]!, [
      { kind: 'devis', record_id: 'by-state', fields: { status: 'signed', pdf_sha256: 'a'.repeat(64) } },
      { kind: 'devis', record_id: 'by-change', fields: { status: 'signed', pdf_sha256: 'b'.repeat(64) } },
      { kind: 'devis', record_id: 'by-change', fields: { status: 'priced' }, stamp: [10, 0] },
      { kind: 'devis', record_id: 'by-contract', fields: { status: 'priced', pdf_sha256: 'c'.repeat(64) } },
      { kind: 'contract', record_id: 'K', fields: { devis_id: 'by-contract' } },
      { kind: 'devis', record_id: 'unsigned', fields: { status: 'priced', pdf_sha256: 'd'.repeat(64) } },
      // The first the hub hears of a quote may be an edit that says nothing of its signing.
      { kind: 'devis', record_id: 'without-status', fields: { pdf_sha256: 'e'.repeat(64) } },
    ]);
    const signed = async () =>
      hub.deps.sql<{ record_id: string; signed: boolean; signed_pdf: string | null }[]>`
        SELECT record_id, signed, signed_pdf FROM hub_records WHERE cabinet_id = ${id} AND kind = 'devis' ORDER BY record_id`;
    const expected = [
      { record_id: 'by-change', signed: true, signed_pdf: 'b'.repeat(64) },
      { record_id: 'by-contract', signed: true, signed_pdf: 'c'.repeat(64) },
      { record_id: 'by-state', signed: true, signed_pdf: 'a'.repeat(64) },
      { record_id: 'unsigned', signed: false, signed_pdf: null },
      { record_id: 'without-status', signed: false, signed_pdf: null },
    ];
    expect(await signed()).toEqual(expected);
    await hub.deps.sql`UPDATE hub_records SET signed = false, signed_pdf = NULL WHERE cabinet_id = ${id}`;
    await hub.deps.sql.unsafe(
      signedBackfill!.replace('WHERE r."kind" = \'devis\'', `WHERE r."cabinet_id" = '${id}' AND r."kind" = 'devis'`),
    );
    expect(await signed()).toEqual(expected);
  });
});

describe('a hostile device with a valid credential', () => {
  it.each([
    { path: 'stored straight', on: () => hub },
    { path: 'staged before the locks', on: () => stagingHub },
  ])(
    'cannot grow one record’s state past what a state page holds, pushes $path: the change that grew it is refused as too large, by its number, nothing stored, and the record still takes edits',
    async ({ on }) => {
      const target = on();
      const { id, devices } = await newCabinet(1, target);
      const x = devices[0]!;
      const big = (field: string) => ({ record_id: 'gros', fields: { [field]: 'x'.repeat(250 * 1024) } });
      for (const field of ['a', 'b', 'c', 'd']) await push(x, [big(field)], target);
      const held = async () => ({
        records: [
          ...(await target.deps.sql`SELECT record_id, fields::text, bytes FROM hub_records WHERE cabinet_id = ${id} ORDER BY record_id`),
        ],
        changes: Number((await target.deps.sql<{ n: string }[]>`SELECT count(*) AS n FROM hub_changes WHERE cabinet_id = ${id}`)[0]!.n),
      });
      const before = await held();

      const number = numbers.get(x.device_id)!;
      const hlc = (offset: number) => formatHlc({ time: target.clock.now() - 1000 + offset, counter: 0, device: x.device_id });
      const refused = await target.request({
        method: 'POST',
        url: pathTo(pushChanges),
        headers: x.headers,
        body: {
          changes: [
            { number, kind: 'client', record_id: 'petit', op: 'upsert', hlc: hlc(0), fields: { last_name: 'Petit' } },
            { number: number + 1, kind: 'client', record_id: 'gros', op: 'upsert', hlc: hlc(1), fields: { e: 'x'.repeat(250 * 1024) } },
            // A small edit of the same record after it: not the one named, so that it can go once the large one is set aside.
            { number: number + 2, kind: 'client', record_id: 'gros', op: 'upsert', hlc: hlc(2), fields: { first_name: 'Gros' } },
          ],
        },
      });
      expect(refused.statusCode).toBe(413);
      expect(refused.json()).toMatchObject({ error: 'payload_too_large', details: { number: number + 1, limit: MAX_RECORD_BYTES } });
      expect(await held()).toEqual(before);

      // The numbers were not taken: the rest of the batch goes, and a change that shrinks the record too.
      await push(
        x,
        [
          { record_id: 'petit', fields: { last_name: 'Petit' } },
          { record_id: 'gros', fields: { a: 'court' } },
        ],
        target,
      );
      const [state] = await target.deps.sql<
        { bytes: number }[]
      >`SELECT bytes FROM hub_records WHERE cabinet_id = ${id} AND record_id = 'gros'`;
      expect(state!.bytes).toBeLessThan(MAX_RECORD_BYTES);
    },
  );

  it('never makes a state page larger than what an install reads of an answer, records at the limit included', async () => {
    const { devices } = await newCabinet();
    const x = devices[0]!;
    for (const record of ['r1', 'r2', 'r3', 'r4', 'r5']) {
      for (const field of ['a', 'b', 'c', 'd']) await push(x, [{ record_id: record, fields: { [field]: 'x'.repeat(240 * 1024) } }]);
    }
    const res = await hub.request({ method: 'GET', url: pathTo(getState, {}, { limit: 1000 }), headers: x.headers });
    expect(res.statusCode).toBe(200);
    const page = res.json<StateResponse>();
    expect(page.records.map((record) => record.record_id)).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(page.more).toBe(true);
    expect(res.rawPayload.length).toBeLessThanOrEqual(MAX_PULL_PAGE_BYTES + 64 * 1024);
  });

  it('reads its own cabinet’s state only, cannot compact, and is refused malformed state queries with nothing read', async () => {
    const a = await newCabinet();
    const b = await newCabinet();
    await push(a.devices[0]!, [{ record_id: 'secret-a', fields: { last_name: 'Secret' } }]);
    await push(b.devices[0]!, [{ record_id: 'own-b', fields: { last_name: 'Mine' } }]);
    const seen = await readAllState(b.devices[0]!, 1000);
    expect(seen.records.map((r) => r.record_id)).toEqual(['own-b']);
    // A cursor naming another cabinet's record only pages within its own.
    const after = await hub.request({
      method: 'GET',
      url: pathTo(getState, {}, { after_kind: 'client', after_id: 'secret-a', limit: 10 }),
      headers: b.devices[0]!.headers,
    });
    expect(after.body).not.toContain('Secret');
    for (const url of ['/sync/v1/compact', '/sync/v1/state/compact']) {
      const res = await hub.request({ method: 'POST', url, headers: b.devices[0]!.headers, body: { cabinet: a.id } });
      expect(res.statusCode).toBe(404);
    }
    for (const query of ['limit=0', 'limit=5000', `after_kind=${'k'.repeat(65)}`, `after_id=${'i'.repeat(255)}`]) {
      const res = await hub.request({ method: 'GET', url: `${pathTo(getState)}?${query}`, headers: b.devices[0]!.headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_error' });
    }
    const unauthenticated = await hub.request({ method: 'GET', url: pathTo(getState), headers: {} });
    expect(unauthenticated.statusCode).toBe(401);
    const [retained] = await hub.deps.sql<{ retained_from_seq: string }[]>`SELECT retained_from_seq FROM hub_cabinets WHERE id = ${a.id}`;
    expect(Number(retained!.retained_from_seq)).toBe(1);
  });
});
