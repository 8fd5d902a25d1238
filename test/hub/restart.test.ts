// @module-tag postgres
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, pushChanges, type PullResponse } from '../../shared/sync-protocol.js';
import { changes, pairTestDevice, startHub, type TestDevice, type TestHub, stampedBy } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/** PostgreSQL going away under running hub processes: they reconnect, LISTEN included. */
let pg: TestPostgres;
let one: TestHub;
let two: TestHub;
let reader: TestDevice;
let writer: TestDevice;
beforeAll(async () => {
  pg = await startTestPostgres();
  one = await startHub(pg);
  two = await startHub(pg, { databaseUrl: one.databaseUrl });
  reader = await pairTestDevice(one, { id: 'cab-restart' });
  writer = await pairTestDevice(two, { id: 'cab-restart' }, { join: true });
});
afterAll(async () => {
  await two.close();
  await one.close();
  await pg.stop();
});

function push(from: number, count: number) {
  return two.request({
    method: 'POST',
    url: pathTo(pushChanges),
    headers: writer.headers,
    body: { changes: stampedBy(writer, changes(from, count, two.clock.now())) },
  });
}

/** A push through process two wakes a long poll on process one (within a few retries while connections come back). */
async function expectWokenAfterPush(after: number, from: number): Promise<void> {
  const waiting = one.request({ method: 'GET', url: pathTo(pullChanges, {}, { after, wait: 20 }), headers: reader.headers });
  for (let i = 0; i < 500 && one.app.hubWaiters.count() === 0; i++) await sleep(10);
  const started = Date.now();
  expect((await push(from, 1)).statusCode).toBe(200);
  const answer = (await waiting).json<PullResponse>();
  expect(answer.changes.map((c) => c.seq)).toEqual([after + 1]);
  expect(Date.now() - started).toBeLessThan(5000);
}

it('long polls are woken again after PostgreSQL was down for a while', async () => {
  await expectWokenAfterPush(0, 1);
  await pg.stopImmediate();
  // Meanwhile the hub says its database is out of reach, as a 503 with its own code (not a 500).
  const down = await one.request({ method: 'GET', url: pathTo(pullChanges), headers: reader.headers });
  expect(down.statusCode).toBe(503);
  expect(down.json()).toMatchObject({ error: 'hub_database_unavailable' });
  await sleep(1000);
  await pg.start();
  // The pools find their connections gone and reconnect on the next query.
  for (
    let i = 0;
    i < 50 && (await one.request({ method: 'GET', url: pathTo(pullChanges), headers: reader.headers })).statusCode !== 200;
    i++
  )
    await sleep(100);
  await expectWokenAfterPush(1, 2);
});

it('a batch whose answer was lost in a crash of PostgreSQL is acknowledged, once, when replayed', async () => {
  const before = (await push(3, 4)).json<{ acknowledged_number: number }>();
  expect(before.acknowledged_number).toBe(6);
  await pg.stopImmediate();
  const during = await push(3, 4);
  expect(during.statusCode).toBe(503);
  expect(during.json().error).toBe('hub_database_unavailable');
  await pg.start();
  let replay = await push(3, 4);
  for (let i = 0; i < 50 && replay.statusCode !== 200; i++) {
    await sleep(100);
    replay = await push(3, 4);
  }
  expect(replay.json().acknowledged_number).toBe(6);
  const [row] = await one.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = 'cab-restart'`;
  expect(row!.n).toBe(6);
});
