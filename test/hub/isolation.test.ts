// @module-tag postgres
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { getBlob, pullChanges, pushChanges, putBlob, type PullResponse } from '../../shared/sync-protocol.js';
import { changes, pairTestDevice, startHub, type TestDevice, type TestHub, stampedBy } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * A device reaches its own cabinet and nothing else, on every hub route: the cabinet comes from
 * the credential, never from the request, and every query names it.
 */
let pg: TestPostgres;
let hub: TestHub;
let a: TestDevice;
let b: TestDevice;
/** A second device in each cabinet: a device is not sent its own changes back. */
let readerOfA: TestDevice;
let readerOfB: TestDevice;
const pdfOfB = Buffer.from('%PDF-1.7 devis du cabinet B');
const shaOfB = createHash('sha256').update(pdfOfB).digest('hex');

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg);
  a = await pairTestDevice(hub, { id: 'cab-a' });
  b = await pairTestDevice(hub, { id: 'cab-b' });
  readerOfA = await pairTestDevice(hub, { id: 'cab-a' }, { join: true, name: 'lecteur A' });
  readerOfB = await pairTestDevice(hub, { id: 'cab-b' }, { join: true, name: 'lecteur B' });
  const now = hub.clock.now();
  expect(
    (
      await hub.request({
        method: 'POST',
        url: pathTo(pushChanges),
        headers: b.headers,
        body: { changes: stampedBy(b, changes(1, 5, now, { record_id: 'secret-of-b' })) },
      })
    ).statusCode,
  ).toBe(200);
  expect(
    (
      await hub.request({
        method: 'PUT',
        url: pathTo(putBlob, { sha256: shaOfB }),
        headers: { ...b.headers, 'content-type': 'application/octet-stream' },
        payload: pdfOfB,
      })
    ).statusCode,
  ).toBe(200);
});
afterAll(async () => {
  await hub.close();
  await pg.stop();
});

async function pulled(device: TestDevice): Promise<PullResponse> {
  return (
    await hub.request({ method: 'GET', url: pathTo(pullChanges, {}, { after: 0, limit: 1000 }), headers: device.headers })
  ).json<PullResponse>();
}

describe('cabinet isolation', () => {
  it('pull: a device of A never sees B’s changes, whatever its cursor', async () => {
    for (const device of [a, readerOfA]) {
      expect((await pulled(device)).changes).toEqual([]);
      for (const after of [0, 1, 4]) {
        const res = await hub.request({ method: 'GET', url: pathTo(pullChanges, {}, { after }), headers: device.headers });
        // A's cabinet has no change: a cursor past it is told so (0), never B's seqs.
        expect(res.json<PullResponse>()).toMatchObject({ changes: [], last_seq: 0 });
      }
    }
    expect((await pulled(readerOfB)).changes).toHaveLength(5);
  });

  it('push: a device of A writes into A only, with A’s own seqs and numbers', async () => {
    const res = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: a.headers,
      body: { changes: stampedBy(a, changes(1, 2, hub.clock.now(), { record_id: 'secret-of-b' })) },
    });
    expect(res.json().acknowledged_number).toBe(2);
    expect((await pulled(readerOfA)).changes.map((c) => [c.seq, c.device_id])).toEqual([
      [1, a.device_id],
      [2, a.device_id],
    ]);
    expect((await pulled(readerOfB)).changes.map((c) => c.device_id)).toEqual(Array(5).fill(b.device_id));
    // An erasure in A does not reach B's record of the same kind and id.
    await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: a.headers,
      body: {
        changes: stampedBy(
          a,
          changes(3, 1, hub.clock.now(), { record_id: 'secret-of-b', op: 'erase', fields: { erased_at: hub.clock.now() } }),
        ),
      },
    });
    expect((await pulled(readerOfB)).changes.every((c) => Object.keys(c.fields).length > 0)).toBe(true);
  });

  it('blobs: a device of A can neither read B’s PDF nor overwrite it', async () => {
    const read = await hub.request({ method: 'GET', url: pathTo(getBlob, { sha256: shaOfB }), headers: a.headers });
    expect(read.statusCode).toBe(404);
    expect(read.json().error).toBe('not_found');
    // A stores the same bytes: its own copy; B's stays B's.
    const stored = await hub.request({
      method: 'PUT',
      url: pathTo(putBlob, { sha256: shaOfB }),
      headers: { ...a.headers, 'content-type': 'application/octet-stream' },
      payload: pdfOfB,
    });
    expect(stored.statusCode).toBe(200);
    const rows = await hub.deps.sql<
      { cabinet_id: string }[]
    >`SELECT cabinet_id FROM hub_blobs WHERE sha256 = ${shaOfB} ORDER BY cabinet_id`;
    expect(rows.map((r) => r.cabinet_id)).toEqual(['cab-a', 'cab-b']);
    const other = Buffer.from('%PDF-1.7 only in A');
    const otherSha = createHash('sha256').update(other).digest('hex');
    await hub.request({
      method: 'PUT',
      url: pathTo(putBlob, { sha256: otherSha }),
      headers: { ...a.headers, 'content-type': 'application/octet-stream' },
      payload: other,
    });
    expect((await hub.request({ method: 'GET', url: pathTo(getBlob, { sha256: otherSha }), headers: b.headers })).statusCode).toBe(404);
  });

  it('credentials: B’s device id with A’s secret is no credential at all', async () => {
    for (const authorization of [
      `Bearer ${b.device_id}.${a.device_secret.split('.')[1]}`,
      `Bearer ${a.device_id}.${b.device_secret.split('.')[1]}`,
    ]) {
      for (const request of [
        { method: 'GET' as const, url: pathTo(pullChanges) },
        { method: 'GET' as const, url: pathTo(getBlob, { sha256: shaOfB }) },
      ]) {
        const res = await hub.request({ ...request, headers: { ...a.headers, authorization } });
        expect(res.statusCode).toBe(401);
        expect(res.json().error).toBe('invalid_device_credential');
      }
    }
  });
});
