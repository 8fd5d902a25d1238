// @module-tag postgres
import postgres, { type Sql } from 'postgres';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, pushChanges, type PullResponse, type SyncChange } from '../../shared/sync-protocol.js';
import { CHANGES_CHANNEL } from '../../server/hub/store.js';
import { eventually } from '../helpers/eventually.js';
import { changes, pairTestDevice, startHub, type TestDevice, type TestHub, stampedBy } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * The wake-up of long polls (NOTIFY on hub_changes) is sent once a push has committed, outside its
 * transaction: PostgreSQL commits every notifying transaction of the cluster one at a time, under a
 * lock held until the commit is on disk, and pushes of different cabinets must not wait for each other.
 */
let pg: TestPostgres;
let one: TestHub;
let two: TestHub;
/** Another session of the hub's database: what any hub process's LISTEN hears, and plain reads. */
let outside: Sql;
const QUOTA = 5;

beforeAll(async () => {
  pg = await startTestPostgres();
  const databaseUrl = await pg.createDatabase();
  // The hub's sessions never wait for a standby, so that a test below can make other commits wait for one.
  const admin = postgres(pg.url, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`ALTER DATABASE ${new URL(databaseUrl).pathname.slice(1)} SET synchronous_commit = local`);
  await admin.end();
  one = await startHub(pg, { databaseUrl, limits: { cabinetChanges: QUOTA } });
  two = await startHub(pg, { databaseUrl, limits: { cabinetChanges: QUOTA } });
  outside = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
});
afterAll(async () => {
  await outside.end();
  await two.close();
  await one.close();
  await pg.stop();
});

function push(hub: TestHub, device: TestDevice, batch: SyncChange[]) {
  return hub.request({ method: 'POST', url: pathTo(pushChanges), headers: device.headers, body: { changes: stampedBy(device, batch) } });
}

function pull(hub: TestHub, device: TestDevice, query: { after?: number; wait?: number }) {
  return hub.request({ method: 'GET', url: pathTo(pullChanges, {}, query), headers: device.headers });
}

async function stored(cabinetId: string): Promise<number> {
  const [row] = await outside<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = ${cabinetId}`;
  return row?.n ?? 0;
}

async function waitersOn(hub: TestHub, n: number): Promise<void> {
  await eventually(
    () => hub.app.hubWaiters.count(),
    (count) => count === n,
    `${n} long polls on the hub`,
    5000,
  );
}

describe('the wake-up of a push', () => {
  it('is sent once per push that commits, a replay included; a push refused or rolled back sends none', async () => {
    const heard: string[] = [];
    const listening = await outside.listen(CHANGES_CHANNEL, (cabinetId) => heard.push(cabinetId));
    try {
      const [a, marker] = [await pairTestDevice(one, { id: 'cab-heard' }), await pairTestDevice(one, { id: 'cab-marker' })];
      expect((await push(one, a, changes(1, 2, one.clock.now()))).statusCode).toBe(200);
      // The same batch again (its answer lost): stored once, notified again.
      expect((await push(two, a, changes(1, 2, one.clock.now()))).json()).toMatchObject({ acknowledged_number: 2 });
      await eventually(
        () => heard.length,
        (n) => n === 2,
        'two notifications',
      );
      expect(heard).toEqual(['cab-heard', 'cab-heard']);

      // Rolled back in the transaction: over the quota (after its seqs were allocated), a gap.
      const over = await push(one, a, changes(3, QUOTA, one.clock.now()));
      expect(over.json()).toMatchObject({ error: 'hub_quota_exceeded' });
      const gap = await push(two, a, changes(9, 1, one.clock.now()));
      expect(gap.json()).toMatchObject({ error: 'sync_gap' });
      expect(await stored('cab-heard')).toBe(2);
      // Notifications arrive in the order they were sent: once the marker's is heard, any of the refused pushes would have been.
      expect((await push(one, marker, changes(1, 1, one.clock.now()))).statusCode).toBe(200);
      await eventually(
        () => heard.length,
        (n) => n >= 3,
        'the marker’s notification',
      );
      expect(heard).toEqual(['cab-heard', 'cab-heard', 'cab-marker']);
    } finally {
      await listening.unlisten();
    }
  });

  it('leaves a push committed, and other cabinets’ pushes too, while another transaction holds PostgreSQL’s notify lock', async () => {
    const reader = await pairTestDevice(one, { id: 'cab-held' }, { name: 'lecteur' });
    const writer = await pairTestDevice(two, { id: 'cab-held' }, { join: true, name: 'rédacteur' });
    const elsewhere = await pairTestDevice(two, { id: 'cab-elsewhere' });
    const waiting = pull(one, reader, { after: 0, wait: 20 });
    await waitersOn(one, 1);

    const lock = await holdNotifyLock(pg);
    let pushed: Awaited<ReturnType<typeof push>>[] | undefined;
    try {
      const pushing = Promise.all([
        push(two, writer, changes(1, 3, two.clock.now())),
        push(one, elsewhere, changes(1, 2, one.clock.now())),
      ]).then((answers) => (pushed = answers));
      // Committed and readable, although no transaction that notifies can commit meanwhile.
      await eventually(
        async () => [await stored('cab-held'), await stored('cab-elsewhere')],
        ([held, other]) => held === 3 && other === 2,
        'both pushes committed',
        10_000,
      );
      // The wake-up waits for the lock: the pushes answer after it, and the long poll is still waiting.
      await sleep(200);
      expect(pushed).toBeUndefined();
      expect(one.app.hubWaiters.count()).toBe(1);
      await lock.release();
      const answers = await pushing;
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    } finally {
      await lock.release();
    }
    const answer = (await waiting).json<PullResponse>();
    expect(answer.changes.map((c) => c.record_id)).toEqual(['client-1', 'client-2', 'client-3']);
  });
});

/**
 * Holds the lock every notifying transaction of the cluster takes from its pre-commit to the end of
 * its commit: a transaction of the maintenance database that notifies, then waits at its commit for
 * a standby that does not exist (synchronous_standby_names names one; the hub's database commits
 * with synchronous_commit = local and never waits for it). Released by naming no standby again.
 */
async function holdNotifyLock(cluster: TestPostgres): Promise<{ release(): Promise<void> }> {
  const admin = postgres(cluster.url, { max: 1, onnotice: () => undefined });
  const holder = postgres(cluster.url, { max: 1, onnotice: () => undefined });
  await admin`CREATE TABLE IF NOT EXISTS held (n int)`;
  await admin`ALTER SYSTEM SET synchronous_standby_names = 'nobody'`;
  await admin`SELECT pg_reload_conf()`;
  const holding: Promise<unknown>[] = [];
  let released: Promise<void> | undefined;
  const release = () =>
    (released ??= (async () => {
      await admin`ALTER SYSTEM RESET synchronous_standby_names`;
      await admin`SELECT pg_reload_conf()`;
      // With no standby named, PostgreSQL lets the waiting commit finish.
      await Promise.all(holding);
      await holder.end();
      await admin.end();
    })());
  try {
    // The reload reaches the server's processes in a moment: until then a commit does not wait, and is tried again.
    for (let attempt = 0; attempt < 50; attempt++) {
      let pid = 0;
      let committed = false;
      holding.push(
        holder
          .begin(async (tx) => {
            const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
            pid = row?.pid ?? 0;
            await tx`INSERT INTO held VALUES (1)`;
            await tx`SELECT pg_notify('held', 'by the test')`;
          })
          .then(() => {
            committed = true;
          }),
      );
      for (let i = 0; i < 20 && !committed; i++) {
        const [row] = await admin<
          { waiting: boolean }[]
        >`SELECT count(*) > 0 AS waiting FROM pg_stat_activity WHERE pid = ${pid} AND wait_event = 'SyncRep'`;
        if (row?.waiting) return { release };
        await sleep(50);
      }
      if (!committed) break;
    }
    throw new Error('no commit waited for the standby: the notify lock could not be held');
  } catch (err) {
    await release();
    throw err;
  }
}
