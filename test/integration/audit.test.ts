import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_ACTOR, listAudit, purgeExpiredAudit, recordAudit } from '../../server/audit/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { consoleClient } from '../helpers/console.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { startTestServer, testClock, type TestClock, type TestServer } from '../helpers/server.js';
import { runCli } from '../../server/cli/run.js';

const ADMIN = { email: 'admin@cabinet-durand.fr', password: 'correct horse battery' };
const INSURER_PASSWORD = 'insurer-secret-Pa55';

describe('the audit log', () => {
  let server: TestServer;
  let clock: TestClock;
  let cabinetId: string;

  beforeEach(async () => {
    clock = testClock();
    server = await startTestServer({ clock, insurers: [createTestInsurer()] });
    ({ cabinet_id: cabinetId } = await initCabinet(server.deps, { cabinet: 'Cabinet Durand', ...ADMIN }));
  });
  afterEach(async () => server.close());

  it('records who did what, from where, with what result — and never a secret', async () => {
    const admin = await consoleClient(server, ADMIN);
    const user = (await (
      await admin.request('/api/v1/console/users', {
        method: 'POST',
        json: { email: 'broker@cabinet-durand.fr', password: 'a fine long password', role: 'broker' },
      })
    ).json()) as { user_id: string };
    await admin.request(`/api/v1/console/users/${user.user_id}`, { method: 'PATCH', json: { role: 'admin' } });
    const key = (await (
      await admin.request('/api/v1/console/keys', { method: 'POST', json: { name: 'CRM sync', environment: 'prod', scopes: ['crm:read'] } })
    ).json()) as { key_id: string; key: string };
    await admin.request(`/api/v1/console/keys/${key.key_id}`, { method: 'DELETE' });
    expect(
      (
        await admin.request('/api/v1/console/insurers/testco/credentials', {
          method: 'PUT',
          json: { login: 'agent-42', password: INSURER_PASSWORD },
        })
      ).status,
    ).toBe(200);
    await admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true, reason: 'Portal maintenance' } });
    await admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
    const webhook = (await (
      await admin.request('/api/v1/console/webhooks', {
        method: 'POST',
        json: { url: 'https://hooks.example.com/in?token=abc', events: ['*'] },
      })
    ).json()) as { id: string; secret: string };
    await admin.request(`/api/v1/console/webhooks/${webhook.id}`, { method: 'DELETE' });
    const failed = await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...ADMIN, password: 'not the password' }),
    });
    expect(failed.status).toBe(401);

    const page = await admin.request('/api/v1/console/audit?limit=50');
    expect(page.status).toBe(200);
    const entries = (
      (await page.json()) as {
        data: {
          action: string;
          result: string;
          actor: { kind: string; label: string | null };
          address: string;
          listener: string;
          target: string | null;
          details: Record<string, unknown>;
        }[];
      }
    ).data;
    expect(entries.map((e) => e.action)).toEqual([
      'console.sign_in_failed',
      'webhook.deleted',
      'webhook.created',
      'robots.resumed',
      'robots.paused',
      'insurer_credentials.set',
      'api_key.revoked',
      'api_key.created',
      'user.role_changed',
      'user.created',
      'console.signed_in',
    ]);
    for (const entry of entries.slice(1))
      expect(entry).toMatchObject({
        result: 'success',
        actor: { kind: 'user', label: ADMIN.email },
        address: '127.0.0.1',
        listener: 'loopback',
      });
    expect(entries[0]).toMatchObject({ result: 'failure', actor: { kind: 'anonymous' }, target: ADMIN.email });
    expect(entries.find((e) => e.action === 'webhook.created')).toMatchObject({
      target: webhook.id,
      details: { host: 'hooks.example.com' },
    });
    const all = JSON.stringify(entries);
    for (const secret of [key.key, webhook.secret, INSURER_PASSWORD, ADMIN.password, 'token=abc', 'not the password'])
      expect(all).not.toContain(secret);

    // Filters: by action, by user, by date.
    const onlyKeys = (await (await admin.request('/api/v1/console/audit?action=api_key.created')).json()) as { data: unknown[] };
    expect(onlyKeys.data).toHaveLength(1);
    const byUser = (await (await admin.request(`/api/v1/console/audit?user_id=${user.user_id}`)).json()) as { data: unknown[] };
    expect(byUser.data).toHaveLength(0);
    const future = (await (await admin.request(`/api/v1/console/audit?since=${new Date(clock.now() + 1000).toISOString()}`)).json()) as {
      data: unknown[];
    };
    expect(future.data).toHaveLength(0);
    expect((await admin.request('/api/v1/console/audit?action=everything')).status).toBe(400);
  });

  it('a failed sign-in with an unknown email is install-wide and does not keep what was typed (it may be a password)', async () => {
    const typed = 'Secret-Typed-As-Email@example.fr';
    await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: typed, password: 'whatever it is' }),
    });
    const [entry] = listAudit(server.deps, cabinetId, { action: 'console.sign_in_failed', limit: 1 });
    expect(entry).toMatchObject({ cabinet_scoped: false, target: null, details: { account: 'unknown' } });
    expect(JSON.stringify(entry).toLowerCase()).not.toContain(typed.toLowerCase());
  });

  it('is for admins of the cabinet only, and one cabinet never sees another’s', async () => {
    const other = await initCabinet(server.deps, {
      cabinet: 'Cabinet Voisin',
      email: 'voisin@cabinet.fr',
      password: 'correct horse battery',
    });
    await consoleClient(server, { email: 'voisin@cabinet.fr', password: 'correct horse battery' });
    const admin = await consoleClient(server, ADMIN);
    await admin.request('/api/v1/console/users', {
      method: 'POST',
      json: { email: 'b@cabinet-durand.fr', password: 'a fine long password', role: 'broker' },
    });
    const broker = await consoleClient(server, { email: 'b@cabinet-durand.fr', password: 'a fine long password' });
    expect((await broker.request('/api/v1/console/audit')).status).toBe(403);
    const seen = listAudit(server.deps, cabinetId, { limit: 100 });
    expect(seen.some((e) => e.actor.label === 'voisin@cabinet.fr')).toBe(false);
    expect(listAudit(server.deps, other.cabinet_id, { limit: 100 }).map((e) => e.action)).toEqual(['console.signed_in']);
  });

  it('the CLI: `audit list` reads it, and what the CLI does is recorded as the CLI', async () => {
    const io = {
      stdout: (t: string) => void (out += t),
      stderr: () => undefined,
      readStdin: () => Promise.resolve(''),
      env: { COURTIER_DATA_DIR: server.dataDir },
    };
    let out = '';
    expect(await runCli(['robots', 'disable', '--reason', 'Insurer outage'], io)).toBe(0);
    out = '';
    expect(await runCli(['audit', 'list', '--cabinet', cabinetId, '--json'], io)).toBe(0);
    const listed = JSON.parse(out) as {
      data: { action: string; actor: { kind: string }; cabinet_scoped: boolean; details: Record<string, unknown> }[];
    };
    expect(listed.data[0]).toMatchObject({
      action: 'robots.paused',
      actor: { kind: 'cli' },
      cabinet_scoped: false,
      details: { reason: 'Insurer outage', install_wide: true },
    });
    out = '';
    expect(await runCli(['audit', 'list', '--cabinet', cabinetId, '--since', 'yesterday'], io)).toBe(2);
  });

  it('keeps one year of the log’s own time: the clock alone moving purges nothing, a year of use does', async () => {
    await consoleClient(server, ADMIN);
    clock.advance(367 * 86_400_000);
    expect(purgeExpiredAudit(server.deps)).toBe(0);
    for (let day = 0; day < 367; day += 5) {
      clock.advance(5 * 86_400_000);
      recordAudit(server.deps, { cabinetId, action: 'robots.paused', actor: CLI_ACTOR, details: { day } });
    }
    expect(purgeExpiredAudit(server.deps)).toBe(1);
    expect(listAudit(server.deps, cabinetId, { limit: 500 }).some((e) => e.action === 'console.signed_in')).toBe(false);
  });
});
