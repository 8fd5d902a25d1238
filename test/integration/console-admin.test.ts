import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSessionSchema } from '../../shared/oauth.js';
import {
  apiKeyListSchema,
  cabinetUserListSchema,
  cabinetUserSchema,
  connectedAppListSchema,
  consoleSettingsSchema,
  createdApiKeySchema,
  consoleWalletSchema as walletSchema,
  automationStatusSchema,
} from '../../shared/console-admin.js';
import { errorBodySchema } from '../../shared/errors.js';
import { setupResponseSchema } from '../../shared/console-session.js';
import { getCabinetSettings } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { listApiKeys } from '../../server/api-keys/service.js';
import { apiClient, expectErrorResponse } from '../helpers/api.js';
import { listAudit } from '../../server/audit/service.js';
import { consoleClient, consoleClientFromResponse, type ConsoleClient } from '../helpers/console.js';
import { authorizeOverHttp, tokenRequest, type TestUser } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

/**
 * The admin slice's console API over HTTP against the real app: first-run setup on an empty
 * install, users, API keys, settings, wallet and status with the cabinet's robot pause, connected apps; the
 * guard's rules (session, role, CSRF) on each, and cabinet isolation.
 */

const clock = testClock();
const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'Admin@Dupont.fr', password: PASSWORD };
const C = '/api/v1/console';

let server: TestServer;
let admin: ConsoleClient;
let adminUser: TestUser;
let broker: ConsoleClient;
let brokerId: string;

beforeAll(async () => {
  server = await startTestServer({ clock, config: { oauthRegistrationsPerHour: 1000 } });
});
afterAll(async () => {
  await server?.close();
});

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

function postSetup(body: unknown): Promise<Response> {
  return server.request(`${C}/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: server.url },
    body: JSON.stringify(body),
  });
}

/** A mutation with the session cookie but a missing or wrong X-CSRF-Token. */
function withoutCsrf(client: ConsoleClient, path: string, method: string, body?: unknown, token?: string): Promise<Response> {
  return server.request(path, {
    method,
    headers: {
      cookie: client.cookie,
      Origin: server.url,
      ...(token === undefined ? {} : { 'X-CSRF-Token': token }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('first-run setup', () => {
  it('is needed on an empty install; a bad body is a validation_error naming the field', async () => {
    expect(await json(await server.request(`${C}/setup`))).toEqual({ needed: true, allowed_here: true });
    const short = await postSetup({ cabinet: 'Cabinet Dupont', email: 'a@b.fr', password: 'short' });
    expect(short.status).toBe(400);
    const body = await json(short);
    expect(body.error).toBe('validation_error');
    expect(body.details).toEqual([expect.objectContaining({ path: 'body.password' })]);
    expect((await postSetup({ cabinet: '', email: 'not an email', password: PASSWORD })).status).toBe(400);
    expect(await json(await server.request(`${C}/setup`))).toEqual({ needed: true, allowed_here: true });
  });

  it('two setups at once: exactly one wins, signs its admin in and the other gets 409 setup_already_done', async () => {
    const [a, b] = await Promise.all([
      postSetup({ cabinet: 'Cabinet Dupont', ...ADMIN }),
      postSetup({ cabinet: 'Cabinet Rival', email: 'rival@example.fr', password: PASSWORD }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([201, 409]);
    const [winner, loser] = a.status === 201 ? [a, b] : [b, a];
    expect((await json(loser)).error).toBe('setup_already_done');
    expect(loser.headers.getSetCookie()).toEqual([]);
    const setup = setupResponseSchema.parse(await winner.json());
    expect(setup.redirect_to).toBe('/console/');
    expect(setup.session.user.role).toBe('admin');
    expect(winner.headers.get('cache-control')).toBe('no-store');
    const cookies = winner.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith('courtier_session=') && c.includes('HttpOnly'))).toBe(true);
    expect(cookies.some((c) => c.startsWith('courtier_csrf='))).toBe(true);

    // Whichever won, continue as its admin (the loser's cabinet and account never existed).
    admin = consoleClientFromResponse(server, winner);
    const session = consoleSessionSchema.parse(await (await admin.request(`${C}/session`)).json());
    expect(session.user.email).toBe(setup.session.user.email);
    expect(['admin@dupont.fr', 'rival@example.fr']).toContain(session.user.email);
    adminUser = { email: session.user.email, password: PASSWORD, cabinetId: session.cabinet.id, userId: session.user.id };
    expect(server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM users').get()).toEqual({ n: 1 });

    expect(await json(await server.request(`${C}/setup`))).toEqual({ needed: false, allowed_here: true });
    const again = await postSetup({ cabinet: 'Another', email: 'other@example.fr', password: PASSWORD });
    expect(again.status).toBe(409);
    expect((await json(again)).error).toBe('setup_already_done');
    expect(server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM cabinets').get()).toEqual({ n: 1 });
  });
});

describe('users', () => {
  it('an admin lists and creates accounts; emails are unique; brokers are refused admin routes', async () => {
    const list = cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json());
    expect(list.map((u) => [u.email, u.role])).toEqual([[adminUser.email, 'admin']]);

    const created = await admin.request(`${C}/users`, {
      method: 'POST',
      json: { email: 'Broker@Dupont.fr', password: PASSWORD, role: 'broker' },
    });
    expect(created.status).toBe(201);
    const user = cabinetUserSchema.parse(await created.json());
    expect(user).toMatchObject({ email: 'broker@dupont.fr', role: 'broker' });
    brokerId = user.user_id;

    const duplicate = await admin.request(`${C}/users`, {
      method: 'POST',
      json: { email: 'BROKER@dupont.fr', password: PASSWORD, role: 'admin' },
    });
    expect(duplicate.status).toBe(409);
    expect((await json(duplicate)).error).toBe('email_taken');
    const badRole = await admin.request(`${C}/users`, {
      method: 'POST',
      json: { email: 'x@dupont.fr', password: PASSWORD, role: 'owner' },
    });
    expect(badRole.status).toBe(400);
    expect((await json(badRole)).details).toEqual([expect.objectContaining({ path: 'body.role' })]);

    broker = await consoleClient(server, { email: 'broker@dupont.fr', password: PASSWORD });
    for (const [method, path, body] of [
      ['GET', `${C}/users`],
      ['POST', `${C}/users`, { email: 'y@dupont.fr', password: PASSWORD, role: 'admin' }],
      ['PATCH', `${C}/users/${brokerId}`, { role: 'admin' }],
      ['GET', `${C}/keys`],
      ['POST', `${C}/keys`, { name: 'k', environment: 'prod', scopes: ['crm:read'] }],
      ['DELETE', `${C}/keys/00000000-0000-4000-8000-000000000000`],
      ['PATCH', `${C}/settings`, { llm_data_sharing: true }],
      ['PUT', `${C}/robots/pause`, { paused: true }],
    ] as const) {
      const response = await broker.request(path, { method, ...(body ? { json: body } : {}) });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).error).toBe('admin_only');
    }
    expect(cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json())).toHaveLength(2);
  });

  it('roles change, but the last admin cannot be demoted; another cabinet’s user is not found', async () => {
    const selfDemote = await admin.request(`${C}/users/${adminUser.userId}`, { method: 'PATCH', json: { role: 'broker' } });
    expect(selfDemote.status).toBe(409);
    expect((await json(selfDemote)).error).toBe('last_admin');

    const created = cabinetUserSchema.parse(
      await (
        await admin.request(`${C}/users`, { method: 'POST', json: { email: 'second@dupont.fr', password: PASSWORD, role: 'broker' } })
      ).json(),
    );
    const promoted = await admin.request(`${C}/users/${created.user_id}`, { method: 'PATCH', json: { role: 'admin' } });
    expect(promoted.status).toBe(200);
    expect(cabinetUserSchema.parse(await promoted.json()).role).toBe('admin');
    const second = await consoleClient(server, { email: 'second@dupont.fr', password: PASSWORD });
    expect((await second.request(`${C}/users`)).status).toBe(200);
    // Back to broker: takes effect on the user's next request, without signing out.
    expect((await admin.request(`${C}/users/${created.user_id}`, { method: 'PATCH', json: { role: 'broker' } })).status).toBe(200);
    expect((await second.request(`${C}/users`)).status).toBe(403);

    await server.createCabinet('Cabinet Autre');
    const other = server.deps.db.sqlite.prepare('SELECT id FROM users WHERE cabinet_id != ? LIMIT 1').get(adminUser.cabinetId) as {
      id: string;
    };
    const foreign = await admin.request(`${C}/users/${other.id}`, { method: 'PATCH', json: { role: 'broker' } });
    expect(foreign.status).toBe(404);
    expect(
      (
        await server.request(`${C}/users/not-a-uuid`, {
          method: 'PATCH',
          headers: { cookie: admin.cookie, 'X-CSRF-Token': admin.csrfToken, 'Content-Type': 'application/json' },
          body: '{"role":"admin"}',
        })
      ).status,
    ).toBe(400);
  });
});

describe('the guard on every route', () => {
  it('without a session: 401 not_signed_in, and an API key is not a session', async () => {
    const key = server.createKey(adminUser.cabinetId).key;
    for (const path of ['users', 'keys', 'settings', 'wallet', 'status', 'connected-apps']) {
      const attempts: Record<string, string>[] = [{}, { 'X-API-Key': key }, { Authorization: `Bearer ${key}` }];
      for (const headers of attempts) {
        const response = await server.request(`${C}/${path}`, { headers });
        expect(response.status, path).toBe(401);
        expect((await json(response)).error).toBe('not_signed_in');
      }
    }
  });

  it('a mutation with a missing or wrong X-CSRF-Token is 403 invalid_csrf_token and writes nothing', async () => {
    const keysBefore = listApiKeys(server.deps, adminUser.cabinetId).length;
    const usersBefore = cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json()).length;
    const mutations: [string, string, unknown?][] = [
      ['POST', `${C}/keys`, { name: 'csrf', environment: 'prod', scopes: ['crm:read'] }],
      ['POST', `${C}/users`, { email: 'csrf@dupont.fr', password: PASSWORD, role: 'broker' }],
      ['PATCH', `${C}/users/${brokerId}`, { role: 'admin' }],
      ['PATCH', `${C}/settings`, { llm_data_sharing: true }],
      ['PUT', `${C}/robots/pause`, { paused: true, reason: 'csrf' }],
      ['DELETE', `${C}/keys/${listApiKeys(server.deps, adminUser.cabinetId)[0]?.key_id}`],
      ['DELETE', `${C}/connected-apps/00000000-0000-4000-8000-000000000000`],
    ];
    for (const [method, path, body] of mutations) {
      for (const token of [undefined, '', 'wrong', broker.csrfToken]) {
        const response = await withoutCsrf(admin, path, method, body, token);
        expect(response.status, `${method} ${path} with ${String(token)}`).toBe(403);
        expect((await json(response)).error).toBe('invalid_csrf_token');
      }
    }
    expect(listApiKeys(server.deps, adminUser.cabinetId)).toHaveLength(keysBefore);
    expect(listApiKeys(server.deps, adminUser.cabinetId).every((k) => k.revoked_at === null)).toBe(true);
    expect(cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json())).toHaveLength(usersBefore);
    expect(cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json()).find((u) => u.user_id === brokerId)?.role).toBe(
      'broker',
    );
    expect(getCabinetSettings(server.deps, adminUser.cabinetId).llm_data_sharing).toBe(false);
    expect(automationStatusSchema.parse(await (await admin.request(`${C}/status`)).json()).robots_enabled).toBe(true);
  });
});

describe('API keys', () => {
  it('create (the value once), use it with /me, list with last use, revoke → 401', async () => {
    const response = await admin.request(`${C}/keys`, {
      method: 'POST',
      json: {
        name: 'Zapier',
        environment: 'prod',
        scopes: ['crm:read', 'devis:read'],
        ip_allowlist: ['127.0.0.1', '10.0.0.0/8'],
        expires_at: '2027-01-01T00:00:00Z',
      },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const created = createdApiKeySchema.parse(await response.json());
    expect(created.key).toMatch(/^svc_prod_/);
    expect(created.ip_allowlist).toEqual(['127.0.0.1', '10.0.0.0/8']);
    expect(created.cabinet_id).toBe(adminUser.cabinetId);

    const me = await apiClient(server, created.key).get('/me');
    expect(me.status).toBe(200);
    expect(me.body.scopes).toEqual(['crm:read', 'devis:read']);

    const listText = await (await admin.request(`${C}/keys`)).text();
    expect(listText).not.toContain(created.key);
    const listed = apiKeyListSchema.parse(JSON.parse(listText)).find((k) => k.key_id === created.key_id);
    expect(listed?.last_used_at).toBe(new Date(clock.now()).toISOString());
    expect(listed?.key_prefix).toBe(created.key.slice(0, 13));

    const revoked = await admin.request(`${C}/keys/${created.key_id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect((await json(revoked)).revoked_at).toBe(new Date(clock.now()).toISOString());
    const after = await apiClient(server, created.key).get('/me');
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('api_key_revoked');
  });

  it('validation: name, scopes, IP rules and a past expiry', async () => {
    const cases: [unknown, string][] = [
      [{ name: '', environment: 'prod', scopes: ['crm:read'] }, 'body.name'],
      [{ name: 'k', environment: 'staging', scopes: ['crm:read'] }, 'body.environment'],
      [{ name: 'k', environment: 'prod', scopes: [] }, 'body.scopes'],
      [{ name: 'k', environment: 'prod', scopes: ['crm:admin'] }, 'body.scopes.0'],
      [{ name: 'k', environment: 'prod', scopes: ['crm:read'], ip_allowlist: ['not-an-ip'] }, 'body.ip_allowlist.0'],
    ];
    for (const [body, path] of cases) {
      const response = await admin.request(`${C}/keys`, { method: 'POST', json: body });
      expect(response.status).toBe(400);
      expect(((await json(response)).details as { path: string }[]).map((d) => d.path)).toContain(path);
    }
    const past = await admin.request(`${C}/keys`, {
      method: 'POST',
      json: { name: 'k', environment: 'prod', scopes: ['crm:read'], expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
  });

  it('another cabinet’s key is not found and stays valid', async () => {
    const otherCabinet = await server.createCabinet('Cabinet Isolé');
    const foreign = server.createKey(otherCabinet);
    const response = await admin.request(`${C}/keys/${foreign.key_id}`, { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect((await json(response)).error).toBe('not_found');
    expect((await apiClient(server, foreign.key).get('/me')).status).toBe(200);
    const listed = apiKeyListSchema.parse(await (await admin.request(`${C}/keys`)).json());
    expect(listed.some((k) => k.key_id === foreign.key_id)).toBe(false);
  });
});

describe('settings', () => {
  it('reads the cabinet’s masking, the effective base URL and the data dir; an admin toggles masking', async () => {
    const settings = consoleSettingsSchema.parse(await (await broker.request(`${C}/settings`)).json());
    expect(settings).toEqual({
      llm_data_sharing: false,
      unattended_human_steps: 'wait',
      orias: null,
      address: null,
      public_base_url: server.url,
      public_base_url_source: 'default',
      data_dir: server.dataDir,
    });
    const patched = await admin.request(`${C}/settings`, { method: 'PATCH', json: { llm_data_sharing: true } });
    expect(patched.status).toBe(200);
    expect(consoleSettingsSchema.parse(await patched.json()).llm_data_sharing).toBe(true);
    expect(getCabinetSettings(server.deps, adminUser.cabinetId).llm_data_sharing).toBe(true);
    const bad = await admin.request(`${C}/settings`, { method: 'PATCH', json: { llm_data_sharing: 'yes' } });
    expect(bad.status).toBe(400);
    expect((await admin.request(`${C}/settings`, { method: 'PATCH', json: { llm_data_sharing: false } })).status).toBe(200);
    expect(getCabinetSettings(server.deps, adminUser.cabinetId).llm_data_sharing).toBe(false);
    // What an integration's job does with nobody there: each setting alone, anything else refused, the change audited.
    const stop = await admin.request(`${C}/settings`, { method: 'PATCH', json: { unattended_human_steps: 'stop' } });
    expect(consoleSettingsSchema.parse(await stop.json())).toMatchObject({ unattended_human_steps: 'stop', llm_data_sharing: false });
    expect((await admin.request(`${C}/settings`, { method: 'PATCH', json: { unattended_human_steps: 'never' } })).status).toBe(400);
    expect((await admin.request(`${C}/settings`, { method: 'PATCH', json: {} })).status).toBe(400);
    expect((await broker.request(`${C}/settings`, { method: 'PATCH', json: { unattended_human_steps: 'wait' } })).status).toBe(403);
    const audited = server.deps.db.sqlite
      .prepare("SELECT count(*) AS n FROM audit_events WHERE cabinet_id = ? AND action = 'settings.unattended_human_steps_changed'")
      .get(adminUser.cabinetId) as { n: number };
    expect(audited.n).toBe(1);
  });

  it('an admin sets the ORIAS number and address its advice documents print: checked, clearable, audited', async () => {
    const set = await admin.request(`${C}/settings`, {
      method: 'PATCH',
      json: { orias: ' 07012345 ', address: '3 rue de la Paix, 75002 Paris' },
    });
    expect(set.status).toBe(200);
    expect(consoleSettingsSchema.parse(await set.json())).toMatchObject({ orias: '07012345', address: '3 rue de la Paix, 75002 Paris' });
    for (const json of [{ orias: '1234' }, { orias: 'ORIAS123' }, { address: 'x' }]) {
      const refused = await admin.request(`${C}/settings`, { method: 'PATCH', json });
      expect(refused.status).toBe(400);
      expect(errorBodySchema.parse(await refused.json()).error).toBe('validation_error');
    }
    expect(getCabinetSettings(server.deps, adminUser.cabinetId)).toMatchObject({ orias: '07012345' });
    expect((await broker.request(`${C}/settings`, { method: 'PATCH', json: { orias: '11111111' } })).status).toBe(403);
    const cleared = await admin.request(`${C}/settings`, { method: 'PATCH', json: { orias: null } });
    expect(consoleSettingsSchema.parse(await cleared.json())).toMatchObject({ orias: null, address: '3 rue de la Paix, 75002 Paris' });
    const audited = server.deps.db.sqlite
      .prepare("SELECT count(*) AS n FROM audit_events WHERE cabinet_id = ? AND action = 'settings.identity_changed'")
      .get(adminUser.cabinetId) as { n: number };
    expect(audited.n).toBe(2);
  });

  it('says when the public base URL is configured', async () => {
    const configured = await startTestServer({ config: { publicBaseUrl: 'https://courtier.cabinet.lan' } });
    try {
      const cabinetId = await configured.createCabinet();
      const email = (configured.deps.db.sqlite.prepare('SELECT email FROM users WHERE cabinet_id = ?').get(cabinetId) as { email: string })
        .email;
      const client = await consoleClient(configured, { email, password: PASSWORD });
      const settings = consoleSettingsSchema.parse(await (await client.request(`${C}/settings`)).json());
      expect(settings.public_base_url).toBe('https://courtier.cabinet.lan');
      expect(settings.public_base_url_source).toBe('configured');
    } finally {
      await configured.close();
    }
  });
});

describe('wallet and status', () => {
  it('any user reads the balance and the ledger', async () => {
    grantCredits(server.deps, adminUser.cabinetId, 250, 'welcome credits');
    const wallet = walletSchema.parse(await (await broker.request(`${C}/wallet`)).json());
    expect(wallet.balance).toBe(250);
    expect(wallet.ledger[0]).toMatchObject({ kind: 'grant', amount: 250, note: 'welcome credits' });
  });

  it('an admin adds credits (audited, with the reason); a broker, a bad amount or no reason adds nothing', async () => {
    const before = walletSchema.parse(await (await broker.request(`${C}/wallet`)).json()).balance;
    const grant = (as: typeof admin, json: unknown) => as.request(`${C}/wallet/grants`, { method: 'POST', json });
    await expectErrorResponse(await grant(broker, { amount: 10, note: 'x' }), 403, 'admin_only');
    for (const bad of [
      { amount: 0, note: 'x' },
      { amount: 2.5, note: 'x' },
      { amount: 10 },
      { amount: 10, note: '  ' },
      { amount: 10, note: 'x', extra: 1 },
    ])
      await expectErrorResponse(await grant(admin, bad), 400, 'validation_error');
    expect(walletSchema.parse(await (await broker.request(`${C}/wallet`)).json()).balance).toBe(before);
    const res = await grant(admin, { amount: 40, note: 'Facture 2026-118' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ granted: 40, balance: before + 40 });
    const wallet = walletSchema.parse(await (await broker.request(`${C}/wallet`)).json());
    expect(wallet.ledger[0]).toMatchObject({ kind: 'grant', amount: 40, note: 'Facture 2026-118' });
    expect(listAudit(server.deps, adminUser.cabinetId, { action: 'credits.granted', limit: 5 })[0]).toMatchObject({
      actor: { kind: 'user', label: adminUser.email },
      details: { amount: 40, balance: before + 40, note: 'Facture 2026-118' },
    });
  });

  it('the status has the quota, breakers and both switches; an admin pauses the cabinet’s robots', async () => {
    const status = automationStatusSchema.parse(await (await broker.request(`${C}/status`)).json());
    expect(status).toMatchObject({
      robots_enabled: true,
      kill_switch: null,
      cabinet_pause: null,
      breakers: [],
      quota: { limit: 60, remaining: 60 },
    });

    const off = await admin.request(`${C}/robots/pause`, { method: 'PUT', json: { paused: true, reason: 'Portal maintenance' } });
    expect(off.status).toBe(200);
    expect(automationStatusSchema.parse(await off.json())).toMatchObject({
      kill_switch: null,
      cabinet_pause: { reason: 'Portal maintenance', since: new Date(clock.now()).toISOString() },
    });
    const seenByBroker = automationStatusSchema.parse(await (await broker.request(`${C}/status`)).json());
    expect(seenByBroker.robots_enabled).toBe(false);
    // The public API sees the same pause.
    const publicStatus = await apiClient(server, server.createKey(adminUser.cabinetId).key).get('/automation/status');
    expect(publicStatus.body.robots_enabled).toBe(false);

    const defaultReason = automationStatusSchema.parse(
      await (await admin.request(`${C}/robots/pause`, { method: 'PUT', json: { paused: true } })).json(),
    );
    expect(defaultReason.cabinet_pause?.reason).toContain(adminUser.email);
    const on = automationStatusSchema.parse(
      await (await admin.request(`${C}/robots/pause`, { method: 'PUT', json: { paused: false } })).json(),
    );
    expect(on).toMatchObject({ robots_enabled: true, kill_switch: null, cabinet_pause: null });
    expect((await admin.request(`${C}/robots/pause`, { method: 'PUT', json: { paused: 'no' } })).status).toBe(400);
  });
});

describe('connected apps', () => {
  const mcp = (token: string) =>
    server.request('/mcp', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('lists the user’s own grants with scopes and last use (written at most once a minute)', async () => {
    const { client, tokens } = await authorizeOverHttp(server, adminUser, 'crm:read devis:read');
    let apps = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    expect(apps).toHaveLength(1);
    expect(apps[0]).toMatchObject({
      client_id: client.client_id,
      client_name: 'Test assistant',
      scopes: ['crm:read', 'devis:read'],
      last_used_at: null,
    });
    // Another user of the cabinet does not see it.
    expect(connectedAppListSchema.parse(await (await broker.request(`${C}/connected-apps`)).json())).toEqual([]);

    expect((await mcp(tokens.access_token)).status).toBe(200);
    const firstUse = new Date(clock.now()).toISOString();
    apps = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    expect(apps[0]?.last_used_at).toBe(firstUse);
    clock.advance(30_000);
    expect((await mcp(tokens.access_token)).status).toBe(200);
    apps = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    expect(apps[0]?.last_used_at).toBe(firstUse);
    clock.advance(31_000);
    expect((await mcp(tokens.access_token)).status).toBe(200);
    apps = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    expect(apps[0]?.last_used_at).toBe(new Date(clock.now()).toISOString());
  });

  it('revoking one revokes its tokens; another user’s grant is not found', async () => {
    const { client, tokens } = await authorizeOverHttp(server, adminUser, 'crm:read');
    const apps = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    const app = apps.find((a) => a.client_id === client.client_id);
    expect(app).toBeDefined();

    const byBroker = await broker.request(`${C}/connected-apps/${app?.grant_id}`, { method: 'DELETE' });
    expect(byBroker.status).toBe(404);
    expect((await mcp(tokens.access_token)).status).toBe(200);

    const revoked = await admin.request(`${C}/connected-apps/${app?.grant_id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(204);
    expect((await mcp(tokens.access_token)).status).toBe(401);
    const refresh = await tokenRequest(server, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    const after = connectedAppListSchema.parse(await (await admin.request(`${C}/connected-apps`)).json());
    expect(after.some((a) => a.grant_id === app?.grant_id)).toBe(false);
    expect((await admin.request(`${C}/connected-apps/${app?.grant_id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await admin.request(`${C}/connected-apps/not-a-uuid`, { method: 'DELETE' })).status).toBe(400);
  });
});
