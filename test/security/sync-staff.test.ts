// @module-tag postgres
import { describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pushChanges, type PulledChange } from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import { setDisabled } from '../../server/account/service.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import * as auditStore from '../../server/audit/store.js';
import { applyPage } from '../../server/sync/pull.js';
import { setSyncPaused } from '../../server/sync/service.js';
import * as conflictsStore from '../../server/sync/conflicts-store.js';
import * as syncStore from '../../server/sync/store.js';
import { addCabinetUser, listCabinetUsers } from '../../server/tenancy/users.js';
import { hashPassword } from '../../server/tenancy/passwords.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { PROTOCOL } from '../helpers/hub.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cabinetOfTwo, useSyncInstalls, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';

/**
 * A stolen laptop (a device credential of the cabinet) and a hub operator can change the staff list
 * as an install can, but never a password: they cannot make an account they can sign in to on
 * another install. What raises an account's powers there (a promotion, an enabling) waits for that
 * install's administrator, so a person disabled or a broker does not get more by way of the hub.
 */

const PASSWORD = 'correct horse battery';
const SIGNED_IN_ONLY = '/api/v1/console/wallet';
const fixture = useListeningHub();
const { nodes, servers } = useSyncInstalls();

/** The victim install B of a two-install cabinet, its console over HTTP, and a thief's device paired with the cabinet. */
async function victimAndThief(): Promise<{ a: SyncNode; b: SyncNode; server: TestServer; thief: PairResponse }> {
  const [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
  nodes.push(a, b);
  setSyncPaused(b.deps, b.cabinetId, true, CLI_ACTOR);
  const server = await startTestServer({ dataDir: b.dir, clock: b.clock });
  servers.push(server);
  const res = await fetch(fixture.hub.url + pathTo(pairDevice), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    body: JSON.stringify({ code: await fixture.hub.invite({ join: a.cabinetId }), device_name: 'Portable volé' }),
  });
  expect(res.status).toBe(201);
  return { a, b, server, thief: (await res.json()) as PairResponse };
}

let number = 0;
async function push(thief: PairResponse, changes: { record_id: string; fields: Record<string, unknown> }[]): Promise<Response> {
  const body = changes.map((change, i) => ({
    number: number + i + 1,
    kind: 'user',
    op: 'upsert',
    hlc: formatHlc({ time: Date.now() + 1000, counter: i, device: thief.device_id }),
    ...change,
  }));
  const res = await fetch(fixture.hub.url + pathTo(pushChanges), {
    method: 'POST',
    headers: { authorization: `Bearer ${thief.device_secret}`, ...PROTOCOL, 'content-type': 'application/json' },
    body: JSON.stringify({ changes: body }),
  });
  if (res.status === 200) number += changes.length;
  return res;
}

function signIn(server: TestServer, email: string, password: string): Promise<Response> {
  return server.request('/api/v1/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

function userOf(node: SyncNode, email: string) {
  const user = listCabinetUsers(node.deps, node.cabinetId).find((u) => u.email === email);
  if (!user) throw new Error(`no ${email}`);
  return user;
}

const newAdmin = (email: string, extra: Record<string, unknown> = {}) => ({
  record_id: email,
  fields: { email, role: 'admin', created_at: Date.now(), disabled_at: null, removed_at: null, ...extra },
});

describe('a hostile device and the staff list', () => {
  it('cannot send a password: the hub refuses the batch, and an install sets such a change aside, writing nothing', async () => {
    number = 0;
    const { a, b, server, thief } = await victimAndThief();
    const hash = await hashPassword('the thief’s password', Buffer.alloc(16, 7));
    for (const extra of [{ password_hash: hash }, { must_change_password: false }, { held_role: null }]) {
      const refused = await push(thief, [newAdmin('evil@c.fr', extra)]);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'validation_error' });
    }
    // An id that is not the email, or another email's: refused too.
    expect((await push(thief, [{ ...newAdmin('evil@c.fr'), record_id: 'a@c.fr' }])).status).toBe(400);
    expect((await push(thief, [{ ...newAdmin('evil@c.fr'), record_id: 'Evil@c.fr' }])).status).toBe(400);

    // What a hub operator could serve instead: set aside, nothing written.
    const connection = syncStore.findConnection(b.deps.db.orm, b.cabinetId);
    const forged: PulledChange = {
      seq: 999_999,
      device_id: thief.device_id,
      kind: 'user',
      record_id: 'evil@c.fr',
      op: 'upsert',
      hlc: formatHlc({ time: Date.now(), counter: 0, device: thief.device_id }),
      fields: newAdmin('evil@c.fr', { password_hash: hash }).fields,
    };
    applyPage({ deps: b.deps, records: b.records }, b.cabinetId, {
      after: connection?.pullCursor ?? 0,
      lastSeq: 999_999,
      changes: [forged],
    });
    expect(listCabinetUsers(b.deps, b.cabinetId).map((u) => u.email)).not.toContain('evil@c.fr');
    expect(conflictsStore.listConflicts(b.deps.db.orm, b.cabinetId, 10)[0]).toMatchObject({
      recordId: 'evil@c.fr',
      reason: 'operation_refused',
    });
    expect((await signIn(server, 'evil@c.fr', 'the thief’s password')).status).toBe(401);
    expect(listCabinetUsers(a.deps, a.cabinetId).map((u) => u.email)).not.toContain('evil@c.fr');
  });

  it('an administrator it adds has no password anywhere: nobody signs in with it', async () => {
    number = 0;
    const { b, server, thief } = await victimAndThief();
    expect((await push(thief, [newAdmin('evil@c.fr')])).status).toBe(200);
    await pullNode(b);
    expect(userOf(b, 'evil@c.fr')).toMatchObject({ role: 'admin', has_password: false });
    for (const password of ['', PASSWORD, 'the thief’s password'])
      expect((await signIn(server, 'evil@c.fr', password)).status).toBeGreaterThanOrEqual(400);
    const [entry] = auditStore
      .listAuditEvents(b.deps.db.orm, { cabinetId: b.cabinetId, action: 'sync.user_changed', limit: 10 })
      .filter((e) => e.target === 'evil@c.fr');
    expect(JSON.parse(entry?.details ?? '{}')).toMatchObject({ created: true, role: 'admin', device_id: thief.device_id });
  });

  it('re-enabling a disabled account or promoting a broker waits for an administrator of the install; disabling applies at once', async () => {
    number = 0;
    const { a, b, server, thief } = await victimAndThief();
    // A broker with a password on B, and a former employee disabled there.
    for (const email of ['broker@c.fr', 'former@c.fr']) {
      await addCabinetUser(b.deps, b.cabinetId, { email, password: `${email} password`, role: 'broker' });
    }
    setDisabled(b.deps, b.cabinetId, userOf(b, 'former@c.fr').user_id, true, { actor: CLI_ACTOR });
    await pushNode(b);
    await pullNode(a);

    expect(
      (
        await push(thief, [
          { record_id: 'former@c.fr', fields: { disabled_at: null } },
          { record_id: 'broker@c.fr', fields: { role: 'admin' } },
        ])
      ).status,
    ).toBe(200);
    await pullNode(b);
    expect(userOf(b, 'former@c.fr')).toMatchObject({ disabled_at: expect.any(String), awaiting_confirmation: ['enabling'] });
    expect(await (await signIn(server, 'former@c.fr', 'former@c.fr password')).json()).toMatchObject({ error: 'account_disabled' });
    expect(userOf(b, 'broker@c.fr')).toMatchObject({ role: 'broker', awaiting_confirmation: ['admin_role'] });
    const broker = await signIn(server, 'broker@c.fr', 'broker@c.fr password');
    const cookie = broker.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    expect((await server.request('/api/v1/console/users', { headers: { cookie } })).status).toBe(403);

    // Disabling applies at once (the broker's session ends), up to the cabinet's last administrator, set aside.
    const disable = (email: string) => ({ record_id: email, fields: { disabled_at: Date.now() } });
    expect((await push(thief, [disable('broker@c.fr'), disable('b@c.fr'), disable('a@c.fr')])).status).toBe(200);
    await pullNode(b);
    expect((await server.request(SIGNED_IN_ONLY, { headers: { cookie } })).status).toBe(401);
    expect(userOf(b, 'b@c.fr').disabled_at).not.toBeNull();
    expect(userOf(b, 'a@c.fr').disabled_at).toBeNull();
    expect(conflictsStore.listConflicts(b.deps.db.orm, b.cabinetId, 10)[0]).toMatchObject({
      recordId: 'a@c.fr',
      reason: 'operation_refused',
    });
  });
});
