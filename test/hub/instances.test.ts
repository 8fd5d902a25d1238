// @module-tag postgres
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, pushChanges, type PullResponse } from '../../shared/sync-protocol.js';
import { revokeHubDevice } from '../../server/hub/admin.js';
import { changes, pairTestDevice, startHub, type TestDevice, type TestHub, stampedBy } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/** Two hub apps on one database, each with its own connections and LISTEN: two hub processes. */
let pg: TestPostgres;
let one: TestHub;
let two: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
  one = await startHub(pg);
  two = await startHub(pg, { databaseUrl: one.databaseUrl });
});
afterAll(async () => {
  await two.close();
  await one.close();
  await pg.stop();
});

function push(hub: TestHub, device: TestDevice, from: number, count: number) {
  return hub.request({
    method: 'POST',
    url: pathTo(pushChanges),
    headers: device.headers,
    body: { changes: stampedBy(device, changes(from, count, hub.clock.now())) },
  });
}

function pull(hub: TestHub, device: TestDevice, query: { after?: number; wait?: number }) {
  return hub.request({ method: 'GET', url: pathTo(pullChanges, {}, query), headers: device.headers });
}

/** Resolves once the hub app holds `n` long polls. */
async function waitersOn(hub: TestHub, n: number): Promise<void> {
  for (let i = 0; i < 500 && hub.app.hubWaiters.count() !== n; i++) await sleep(10);
  expect(hub.app.hubWaiters.count()).toBe(n);
}

describe('long poll', () => {
  it('is answered as soon as a device pushes through another hub process', async () => {
    const reader = await pairTestDevice(one, { id: 'cab-poll' });
    const writer = await pairTestDevice(two, { id: 'cab-poll' }, { join: true });
    const started = Date.now();
    const waiting = pull(one, reader, { after: 0, wait: 20 });
    await waitersOn(one, 1);
    expect((await push(two, writer, 1, 3)).statusCode).toBe(200);
    const answer = (await waiting).json<PullResponse>();
    expect(answer.changes.map((c) => c.seq)).toEqual([1, 2, 3]);
    expect(answer.last_seq).toBe(3);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(one.app.hubWaiters.count()).toBe(0);
  });

  it('answers at once when there is something, and empty at the end of its wait when nothing comes', async () => {
    const device = await pairTestDevice(one, { id: 'cab-quiet' });
    const reader = await pairTestDevice(two, { id: 'cab-quiet' }, { join: true, name: 'lecteur' });
    await push(one, device, 1, 1);
    const started = Date.now();
    expect((await pull(two, reader, { after: 0, wait: 20 })).json<PullResponse>().changes).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2000);
    const quiet = Date.now();
    const empty = (await pull(two, reader, { after: 1, wait: 1 })).json<PullResponse>();
    expect(empty).toMatchObject({ changes: [], last_seq: 1, more: false });
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(950);
  });

  it('is not answered by another cabinet’s pushes', async () => {
    const mine = await pairTestDevice(one, { id: 'cab-mine' });
    const theirs = await pairTestDevice(two, { id: 'cab-theirs' });
    const started = Date.now();
    const waiting = pull(one, mine, { after: 0, wait: 2 });
    await waitersOn(one, 1);
    await push(two, theirs, 1, 2);
    // Woken for nothing: it goes on waiting for the rest of its 2 s.
    await sleep(300);
    expect(one.app.hubWaiters.count()).toBe(1);
    const answer = (await waiting).json<PullResponse>();
    expect(answer.changes).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1950);
  });

  it('stops waiting when the client goes away, and answers at once when the hub stops', async () => {
    const third = await startHub(pg, { databaseUrl: one.databaseUrl });
    const device = await pairTestDevice(third, { id: 'cab-gone' });
    await third.app.listen({ host: '127.0.0.1', port: 0 });
    const address = third.app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const controller = new AbortController();
    const abandoned = fetch(base + pathTo(pullChanges, {}, { wait: 30 }), { headers: device.headers, signal: controller.signal }).catch(
      (err: unknown) => err,
    );
    await waitersOn(third, 1);
    controller.abort();
    await abandoned;
    await waitersOn(third, 0);

    const held = fetch(base + pathTo(pullChanges, {}, { wait: 30 }), { headers: device.headers });
    await waitersOn(third, 1);
    const stopping = Date.now();
    await third.close();
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as PullResponse).changes).toEqual([]);
    expect(Date.now() - stopping).toBeLessThan(5000);
  });
});

describe('revocation', () => {
  it('takes effect at once on every hub process', async () => {
    const device = await pairTestDevice(one, { id: 'cab-revoke' });
    const other = await pairTestDevice(one, { id: 'cab-revoke' }, { join: true });
    expect((await pull(two, device, {})).statusCode).toBe(200);
    const revoked = await revokeHubDevice(one.deps, device.device_id);
    expect(revoked).toMatchObject({ device_id: device.device_id, cabinet_id: 'cab-revoke', revoked: true });
    for (const hub of [two, one]) {
      const refused = await pull(hub, device, {});
      expect(refused.statusCode).toBe(401);
      expect(refused.json().error).toBe('device_revoked');
      expect((await push(hub, device, 1, 1)).json().error).toBe('device_revoked');
    }
    // The cabinet's other devices go on.
    expect((await push(two, other, 1, 1)).statusCode).toBe(200);
    // Revoking again keeps the first revocation.
    one.clock.advance(60_000);
    expect((await revokeHubDevice(two.deps, device.device_id)).revoked_at).toBe(revoked.revoked_at);
  });
});
