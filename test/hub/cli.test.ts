// @module-tag postgres
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { getHubHealth, pullChanges, pushChanges, type PullResponse } from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { runCourtier, startHubServeProcess } from '../helpers/cli.js';
import { changes, pairTestDevice, PROTOCOL, stampedBy, startHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/** The hub's commands through the built binary (`npm run build` first), as an operator runs them. */
let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(() => pg.stop());

async function hubJson<T>(args: string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const result = await runCourtier(['hub', ...args, '--json'], { env });
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}

describe('courtier hub', () => {
  it('says what is wrong: no database URL, a database it cannot reach, an unknown cabinet', async () => {
    const noUrl = await runCourtier(['hub', 'invite', '--new-cabinet', 'cab-x', '--json'], { env: { COURTIER_HUB_DATABASE_URL: '' } });
    expect(noUrl.code).toBe(2);
    expect(JSON.parse(noUrl.stdout)).toMatchObject({
      error: 'usage',
      message: expect.stringContaining('--database-url (COURTIER_HUB_DATABASE_URL)'),
    });

    const unreachable = await runCourtier([
      'hub',
      'cabinets',
      'list',
      '--json',
      '--database-url',
      'postgres://courtier:s3cret-pw@127.0.0.1:1/hub',
    ]);
    expect(unreachable.code).toBe(1);
    expect(JSON.parse(unreachable.stdout).message).toMatch(
      /^Cannot use the hub's PostgreSQL at postgres:\/\/courtier:\*\*\*@127\.0\.0\.1:1\/hub: /,
    );
    expect(unreachable.stdout + unreachable.stderr).not.toContain('s3cret-pw');

    const url = await pg.createDatabase();
    const unknown = await runCourtier(['hub', 'invite', '--cabinet', 'cab-nowhere', '--json', '--database-url', url]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'not_found' });
    expect((await runCourtier(['hub', 'devices', 'revoke', '--json', '--database-url', url])).code).toBe(2);
    // A code is always for a named cabinet: neither or both of --new-cabinet and --cabinet is a usage error.
    for (const args of [[], ['--new-cabinet', 'cab-a', '--cabinet', 'cab-b']]) {
      const unnamed = await runCourtier(['hub', 'invite', ...args, '--database-url', url]);
      expect(unnamed.code).toBe(2);
      expect(unnamed.stderr).toContain('say which cabinet the code is for');
    }
    expect((await runCourtier(['hub', 'frobnicate', '--database-url', url])).code).toBe(2);
  });

  it('runs two hub processes on one database, started together, with requests alternating between them', async () => {
    const url = await pg.createDatabase();
    const env = { COURTIER_HUB_DATABASE_URL: url };
    // Both migrate the fresh database at once: one does, the other waits and finds nothing to do.
    const [a, b] = await Promise.all([startHubServeProcess([], env), startHubServeProcess(['--database-url', url])]);
    try {
      const call = (base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
        fetch(base + path, {
          method: init.method ?? 'GET',
          headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
          ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        });
      expect(await (await call(a.url, pathTo(getHubHealth))).json()).toMatchObject({ status: 'ok' });

      const register = await hubJson<{ code: string; purpose: string; cabinet_id: string; expires_at: string }>(
        ['invite', '--new-cabinet', 'cab-cli'],
        env,
      );
      expect(register).toMatchObject({ purpose: 'register', cabinet_id: 'cab-cli' });
      const first = (await (
        await call(a.url, pathTo(pairDevice), {
          method: 'POST',
          headers: PROTOCOL,
          body: { code: register.code, device_name: 'Accueil', cabinet: { id: 'cab-cli', name: 'Cabinet CLI' } },
        })
      ).json()) as PairResponse;
      const join = await hubJson<{ code: string; purpose: string; cabinet_id: string }>([
        'invite',
        '--cabinet',
        'cab-cli',
        '--database-url',
        url,
      ]);
      expect(join).toMatchObject({ purpose: 'join', cabinet_id: 'cab-cli' });
      const second = (await (
        await call(b.url, pathTo(pairDevice), { method: 'POST', headers: PROTOCOL, body: { code: join.code, device_name: 'Direction' } })
      ).json()) as PairResponse;
      const auth = (p: PairResponse) => ({ authorization: `Bearer ${p.device_secret}`, ...PROTOCOL });

      // A long poll on process A is answered by a push through process B.
      const waiting = call(a.url, pathTo(pullChanges, {}, { after: 0, wait: 20 }), { headers: auth(first) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const pushed = await call(b.url, pathTo(pushChanges), {
        method: 'POST',
        headers: auth(second),
        body: { changes: stampedBy(second, changes(1, 4, Date.now())) },
      });
      expect(await pushed.json()).toMatchObject({ acknowledged_number: 4 });
      expect(((await (await waiting).json()) as PullResponse).changes.map((c) => c.seq)).toEqual([1, 2, 3, 4]);
      for (const [i, base] of [a.url, b.url, a.url, b.url].entries()) {
        const page = (await (
          await call(base, pathTo(pullChanges, {}, { after: i, limit: 1 }), { headers: auth(first) })
        ).json()) as PullResponse;
        expect(page.changes.map((c) => c.seq)).toEqual([i + 1]);
        expect(page.more).toBe(i < 3);
      }

      const { cabinets } = await hubJson<{
        cabinets: { cabinet_id: string; name: string; devices: number; records: number; last_sync_at: string | null }[];
      }>(['cabinets', 'list'], env);
      expect(cabinets).toEqual([{ cabinet_id: 'cab-cli', name: 'Cabinet CLI', devices: 2, records: 4, last_sync_at: expect.any(String) }]);
      const listed = await hubJson<{ devices: { device_id: string; name: string; revoked: boolean; last_seen_at: string | null }[] }>(
        ['devices', 'list', '--cabinet', 'cab-cli'],
        env,
      );
      expect(listed.devices.map((d) => [d.device_id, d.name, d.revoked])).toEqual([
        [first.device_id, 'Accueil', false],
        [second.device_id, 'Direction', false],
      ]);

      const revoked = await hubJson<{ device_id: string; revoked: boolean; revoked_at: string }>(
        ['devices', 'revoke', '--device', second.device_id],
        env,
      );
      expect(revoked).toMatchObject({ device_id: second.device_id, revoked: true });
      for (const base of [a.url, b.url]) {
        const refused = await call(base, pathTo(pullChanges), { headers: auth(second) });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: string }).error).toBe('device_revoked');
      }
      const human = await runCourtier(['hub', 'devices', 'list', '--cabinet', 'cab-cli'], { env });
      expect(human.stdout).toContain(`${second.device_id}  Direction`);
      expect(human.stdout).toMatch(/Direction .*revoked/);
    } finally {
      const codes = await Promise.all([stop(a.child), stop(b.child)]);
      expect(codes).toEqual([0, 0]);
    }
    expect(a.output()).toContain('"msg":"stopped"');
  });

  it('compacts through `courtier hub compact`: the changes past the retention go, the state stays, the run is in the audit log', async () => {
    const hub = await startHub(pg);
    try {
      const device = await pairTestDevice(hub, { id: 'cab-compact' });
      const edits = changes(1, 12, hub.clock.now() - 60_000).map((change, i) => ({
        ...change,
        record_id: `client-${i % 3}`,
        hlc: change.hlc.replace(/-000000-/, `-${String(i).padStart(6, '0')}-`),
      }));
      const pushed = await hub.request({
        method: 'POST',
        url: pathTo(pushChanges),
        headers: device.headers,
        body: { changes: stampedBy(device, edits) },
      });
      expect(pushed.statusCode, pushed.body).toBe(200);
      const env = { COURTIER_HUB_DATABASE_URL: hub.databaseUrl, COURTIER_HUB_RETAIN_DAYS: '0', COURTIER_HUB_RETAIN_CHANGES: '4' };
      const unknown = await runCourtier(['hub', 'compact', '--cabinet', 'cab-nowhere', '--json'], { env });
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'not_found' });

      const compacted = await hubJson<{ cabinets: { cabinet_id: string; changes_deleted: number; retained_from_seq: number }[] }>(
        ['compact', '--cabinet', 'cab-compact'],
        env,
      );
      expect(compacted.cabinets).toEqual([
        expect.objectContaining({ cabinet_id: 'cab-compact', changes_deleted: 8, retained_from_seq: 9, blobs_deleted: 0 }),
      ]);
      const human = await runCourtier(['hub', 'compact'], { env });
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain('cab-compact  0 change(s) deleted');
      const [records] = await hub.deps.sql<{ count: string }[]>`SELECT count(*) AS count FROM hub_records WHERE cabinet_id = 'cab-compact'`;
      expect(Number(records!.count)).toBe(3);
      const audit = await hubJson<{ data: { action: string; actor: { kind: string }; details: Record<string, unknown> }[] }>(
        ['audit', 'list', '--cabinet', 'cab-compact'],
        env,
      );
      expect(audit.data.filter((entry) => entry.action === 'hub.compacted')).toEqual([
        expect.objectContaining({
          actor: expect.objectContaining({ kind: 'operator' }),
          details: expect.objectContaining({ changes_deleted: 0 }),
        }),
        expect.objectContaining({
          actor: expect.objectContaining({ kind: 'operator' }),
          details: expect.objectContaining({ changes_deleted: 8, retain_changes: 4 }),
        }),
      ]);
    } finally {
      await hub.close();
    }
  });
});
