// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pushChanges } from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import { compactCabinet } from '../../server/hub/compaction.js';
import { eventually } from '../helpers/eventually.js';
import { pairTestDevice, sha256, startHub, uploadBlob, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { pdf } from '../helpers/insurance-data.js';

/**
 * PDF collection, PDF uploads and a push whose erasure deletes a PDF all lock the cabinet's row
 * before any PDF's: run together on real PostgreSQL, none of them is aborted as a deadlock. The
 * order is made deterministic by holding the push between the two locks (an uncommitted row of
 * hub_erasure_links that its erasure must write) while the others start.
 */
let pg: TestPostgres;
let hub: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg);
});
afterAll(async () => {
  await hub.close();
  await pg.stop();
});

const HOUR = 3600_000;

/** Backends of the test's database waiting for a lock another transaction holds. */
async function waitingForLocks(): Promise<number> {
  const [row] = await hub.deps.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row?.n ?? 0;
}

class Released extends Error {}

describe('PDF collection beside uploads and an erasure', () => {
  it('never deadlocks: each waits for the cabinet’s row, and all of them end', async () => {
    const cabinet = 'cab-locks';
    const device = await pairTestDevice(hub, { id: cabinet });
    // Another install uploads meanwhile (a device has at most two uploads in progress, its push among them).
    const other = await pairTestDevice(hub, { id: cabinet }, { join: true, name: 'portable' });
    // A PDF uploaded long ago that only the push below names: collection takes it for unnamed.
    const old = pdf('Quintavalle, devis auto');
    expect((await uploadBlob(hub, device, old)).statusCode).toBe(200);
    hub.clock.advance(2 * HOUR);

    // Holds a row the push's erasure writes once it holds the cabinet's row, before it deletes the PDF.
    let release = () => undefined as void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = () => undefined as void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = hub.deps.sql
      .begin(async (tx) => {
        await tx`INSERT INTO hub_erasure_links (cabinet_id, kind, record_id) VALUES (${cabinet}, 'devis', 'D')`;
        holding();
        await released;
        throw new Released();
      })
      .catch((err: unknown) => {
        if (!(err instanceof Released)) throw err;
      });
    await held;

    const hlc = (offset: number) => formatHlc({ time: hub.clock.now() - 1000 + offset, counter: 0, device: device.device_id });
    const push = hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: device.headers,
      body: {
        changes: [
          {
            number: 1,
            kind: 'devis',
            record_id: 'D',
            op: 'upsert',
            hlc: hlc(0),
            fields: { status: 'priced', client_id: 'C', dic_data: '{}', pdf_sha256: sha256(old) },
          },
          {
            number: 2,
            kind: 'client',
            record_id: 'C',
            op: 'erase',
            hlc: hlc(1),
            fields: { type: 'person', erased_at: 1, last_name: null, email: null, siret: null },
          },
        ],
      },
    });
    await eventually(waitingForLocks, (n) => n === 1, 'the push waiting for the held row');
    const collection = compactCabinet(hub.deps, cabinet, { days: 30, changes: 100_000, blobGraceMs: HOUR });
    const uploads = [uploadBlob(hub, other, pdf('nouveau 1')), uploadBlob(hub, other, pdf('nouveau 2'))];
    try {
      await eventually(waitingForLocks, (n) => n === 4, 'the collection and both uploads waiting');
    } finally {
      release();
      await holder;
    }

    const [pushed, collected, ...uploaded] = await Promise.all([push, collection, ...uploads]);
    expect(pushed.statusCode, pushed.body).toBe(200);
    expect(collected).toMatchObject({ cabinet_id: cabinet });
    expect(uploaded.map((res) => res.statusCode)).toEqual([200, 200]);
    // The erasure deleted the unsigned quote's PDF; the new ones stay, and the counters say so.
    const kept = (await hub.deps.sql<{ sha256: string }[]>`SELECT sha256 FROM hub_blobs WHERE cabinet_id = ${cabinet} ORDER BY sha256`).map(
      (row) => row.sha256,
    );
    expect(kept).toEqual([sha256(pdf('nouveau 1')), sha256(pdf('nouveau 2'))].sort());
    expect(hub.logs.join('')).not.toContain('deadlock');
  });
});
