// @module-tag postgres
import { describe, expect, it } from 'vitest';
import type { CabinetUser } from '../../shared/console-admin.js';
import { remove as removeAccount, setDisabled } from '../../server/account/service.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import * as auditStore from '../../server/audit/store.js';
import { setSyncPaused } from '../../server/sync/service.js';
import * as conflictsStore from '../../server/sync/conflicts-store.js';
import * as syncStore from '../../server/sync/store.js';
import { shareJoinedAdmin } from '../../server/sync/transfer.js';
import { addCabinetUser, changeUserRole, listCabinetUsers } from '../../server/tenancy/users.js';
import { consoleClient, consoleClientFromResponse, type ConsoleClient } from '../helpers/console.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cabinetOfTwo, useSyncInstalls, joinNode, pullNode, pushNode, type SyncNode } from '../helpers/sync-node.js';

/**
 * The staff list is the cabinet's: an account added, disabled, removed or given another role on one
 * install is so on the others once they pull (the service's long poll wakes on the push), while each
 * install keeps its own passwords. Driven step by step through a real hub on PostgreSQL; each
 * install's console is its real HTTP app on its SQLite file.
 */

const PASSWORD = 'correct horse battery';
/** A console route for any signed-in user of the cabinet. */
const SIGNED_IN_ONLY = '/api/v1/console/wallet';
const fixture = useListeningHub();
const { nodes, servers } = useSyncInstalls();

/** Two installs: A connected, B joined (its administrator b@c.fr shared with the cabinet), both caught up. */
async function twoInstalls(): Promise<[SyncNode, SyncNode]> {
  const [a, b] = await cabinetOfTwo(fixture.hub, Date.now());
  nodes.push(a, b);
  expect(shareJoinedAdmin(b.deps, b.cabinetId, userOf(b, 'b@c.fr').user_id)).toBe(true);
  await sync(b, a);
  return [a, b];
}

/** `from` pushes, then each of `to` pulls. */
async function sync(from: SyncNode, ...to: SyncNode[]): Promise<void> {
  await pushNode(from);
  for (const node of to) await pullNode(node);
}

/** The install's console over HTTP on its own connection to its database; its background sync paused (the test pushes and pulls). */
async function consoleOf(node: SyncNode): Promise<TestServer> {
  setSyncPaused(node.deps, node.cabinetId, true, CLI_ACTOR);
  const server = await startTestServer({ dataDir: node.dir, clock: node.clock });
  servers.push(server);
  return server;
}

function userOf(node: SyncNode, email: string): CabinetUser {
  const user = listCabinetUsers(node.deps, node.cabinetId).find((u) => u.email === email);
  if (!user) throw new Error(`no ${email} on this install`);
  return user;
}

function signIn(server: TestServer, email: string, password: string): Promise<Response> {
  return server.request('/api/v1/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

/** An account added on `a`, given a password on `b` by its administrator, and signed in there with a password they chose. */
async function brokerSignedInOnB(a: SyncNode, b: SyncNode, server: TestServer): Promise<{ admin: ConsoleClient; broker: ConsoleClient }> {
  await addCabinetUser(a.deps, a.cabinetId, { email: 'x@c.fr', password: 'password on A 1', role: 'broker' });
  await sync(a, b);
  const admin = await consoleClient(server, { email: 'b@c.fr', password: PASSWORD });
  const reset = await admin.request(`/api/v1/console/users/${userOf(b, 'x@c.fr').user_id}/password-reset`, { method: 'POST' });
  expect(reset.status).toBe(200);
  const temporary = ((await reset.json()) as { temporary_password: string }).temporary_password;
  const first = consoleClientFromResponse(server, await signIn(server, 'x@c.fr', temporary));
  expect(
    (
      await first.request('/api/v1/console/account/password', {
        method: 'PUT',
        json: { current_password: temporary, new_password: 'password on B 1' },
      })
    ).status,
  ).toBe(200);
  return { admin, broker: await consoleClient(server, { email: 'x@c.fr', password: 'password on B 1' }) };
}

function syncAudit(node: SyncNode): { target: string | null; details: string }[] {
  return auditStore.listAuditEvents(node.deps.db.orm, { cabinetId: node.cabinetId, action: 'sync.user_changed', limit: 100 });
}

describe('the staff list across the installs of a cabinet', () => {
  it('one list: each administrator is on the other install, without a password there, and a stranger’s refusal is what they get', async () => {
    const [a, b] = await twoInstalls();
    for (const node of [a, b])
      expect(
        listCabinetUsers(node.deps, node.cabinetId)
          .map((u) => u.email)
          .sort(),
      ).toEqual(['a@c.fr', 'b@c.fr']);
    expect(userOf(a, 'b@c.fr')).toMatchObject({ role: 'admin', has_password: false, disabled_at: null });
    expect(userOf(b, 'a@c.fr')).toMatchObject({ role: 'admin', has_password: false });
    expect(userOf(a, 'a@c.fr').user_id).toBe(userOf(b, 'a@c.fr').user_id);

    const server = await consoleOf(b);
    const noPassword = await signIn(server, 'a@c.fr', PASSWORD);
    const stranger = await signIn(server, 'nobody@c.fr', PASSWORD);
    expect(noPassword.status).toBe(401);
    expect(await noPassword.json()).toMatchObject({
      error: 'invalid_credentials',
      message: ((await stranger.json()) as { message: string }).message,
    });
  });

  it('an account added on A signs in on B once B’s administrator gives it a password; disabled on A, its session on B ends and B refuses its sign-in', async () => {
    const [a, b] = await twoInstalls();
    const server = await consoleOf(b);
    expect((await signIn(server, 'x@c.fr', 'password on A 1')).status).toBe(401);
    const { broker } = await brokerSignedInOnB(a, b, server);
    expect((await broker.request(SIGNED_IN_ONLY)).status).toBe(200);
    // Each install keeps its own password: A's is not B's.
    expect((await signIn(server, 'x@c.fr', 'password on A 1')).status).toBe(401);

    setDisabled(a.deps, a.cabinetId, userOf(a, 'x@c.fr').user_id, true, { actor: CLI_ACTOR });
    await sync(a, b);
    expect((await broker.request(SIGNED_IN_ONLY)).status).toBe(401);
    const refused = await signIn(server, 'x@c.fr', 'password on B 1');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'account_disabled' });
    expect(userOf(b, 'x@c.fr').disabled_at).not.toBeNull();
    const [entry] = syncAudit(b).filter((e) => e.target === 'x@c.fr');
    expect(JSON.parse(entry?.details ?? '{}')).toMatchObject({
      disabled: true,
      sessions_ended: 2,
      device_id: syncStore.findConnection(a.deps.db.orm, a.cabinetId)?.deviceId,
    });
  });

  it('a demotion on A applies on B at once; a promotion waits for an administrator of B, who confirms it by making them one', async () => {
    const [a, b] = await twoInstalls();
    const server = await consoleOf(b);
    const { admin, broker } = await brokerSignedInOnB(a, b, server);
    expect((await broker.request('/api/v1/console/users')).status).toBe(403);

    changeUserRole(a.deps, a.cabinetId, userOf(a, 'x@c.fr').user_id, 'admin');
    await sync(a, b);
    expect(userOf(b, 'x@c.fr')).toMatchObject({ role: 'broker', awaiting_confirmation: ['admin_role'] });
    expect((await broker.request('/api/v1/console/users')).status).toBe(403);
    expect(JSON.parse(syncAudit(b).find((e) => e.target === 'x@c.fr')?.details ?? '{}')).toMatchObject({
      role: 'admin',
      awaiting_confirmation: ['admin_role'],
    });

    const confirmed = await admin.request(`/api/v1/console/users/${userOf(b, 'x@c.fr').user_id}`, {
      method: 'PATCH',
      json: { role: 'admin' },
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.json()).toMatchObject({ role: 'admin', awaiting_confirmation: [] });
    expect((await broker.request('/api/v1/console/users')).status).toBe(200);

    // Later than the confirmation on B (per-field last writer wins).
    a.clock.advance(60_000);
    changeUserRole(a.deps, a.cabinetId, userOf(a, 'x@c.fr').user_id, 'broker');
    await sync(a, b);
    expect((await broker.request('/api/v1/console/users')).status).toBe(403);
    expect(userOf(b, 'x@c.fr')).toMatchObject({ role: 'broker', awaiting_confirmation: [] });
  });

  it('removed on A, the account leaves B’s list with its sessions and password; added again on B, it is back on A, without a password there', async () => {
    const [a, b] = await twoInstalls();
    const server = await consoleOf(b);
    const { broker } = await brokerSignedInOnB(a, b, server);
    removeAccount(a.deps, a.cabinetId, userOf(a, 'x@c.fr').user_id, { actor: CLI_ACTOR });
    await sync(a, b);
    expect(listCabinetUsers(b.deps, b.cabinetId).map((u) => u.email)).not.toContain('x@c.fr');
    expect((await broker.request(SIGNED_IN_ONLY)).status).toBe(401);
    expect(await (await signIn(server, 'x@c.fr', 'password on B 1')).json()).toMatchObject({ error: 'invalid_credentials' });

    await addCabinetUser(b.deps, b.cabinetId, { email: 'x@c.fr', password: 'password on B 2', role: 'broker' });
    await sync(b, a);
    expect(userOf(a, 'x@c.fr')).toMatchObject({ role: 'broker', has_password: false, disabled_at: null });
    expect(listCabinetUsers(a.deps, a.cabinetId).filter((u) => u.email === 'x@c.fr')).toHaveLength(1);
    expect((await signIn(server, 'x@c.fr', 'password on B 2')).status).toBe(200);
  });

  it('two installs that add the same email offline make one account, the later role on both, each with its own password', async () => {
    const [a, b] = await twoInstalls();
    await addCabinetUser(a.deps, a.cabinetId, { email: 'x@c.fr', password: 'password on A 1', role: 'broker' });
    b.clock.advance(1000);
    await addCabinetUser(b.deps, b.cabinetId, { email: 'x@c.fr', password: 'password on B 1', role: 'admin' });
    await pushNode(a);
    await pushNode(b);
    await pullNode(a);
    await pullNode(b);
    for (const node of [a, b]) expect(listCabinetUsers(node.deps, node.cabinetId).filter((u) => u.email === 'x@c.fr')).toHaveLength(1);
    expect(userOf(b, 'x@c.fr')).toMatchObject({ role: 'admin', has_password: true, awaiting_confirmation: [] });
    // B's later role is the account's on A too, held back there: A's password opens the account.
    expect(userOf(a, 'x@c.fr')).toMatchObject({ role: 'broker', has_password: true, awaiting_confirmation: ['admin_role'] });
    expect(conflictsStore.countConflicts(a.deps.db.orm, a.cabinetId) + conflictsStore.countConflicts(b.deps.db.orm, b.cabinetId)).toBe(0);
    const serverA = await consoleOf(a);
    const serverB = await consoleOf(b);
    expect((await signIn(serverA, 'x@c.fr', 'password on A 1')).status).toBe(200);
    expect((await signIn(serverB, 'x@c.fr', 'password on B 1')).status).toBe(200);
    expect((await signIn(serverB, 'x@c.fr', 'password on A 1')).status).toBe(401);
  });

  it('a pulled change that would leave an install without an administrator is set aside there', async () => {
    const [a, b] = await twoInstalls();
    // Offline from each other, each disables the other's administrator: each keeps its own.
    setDisabled(a.deps, a.cabinetId, userOf(a, 'b@c.fr').user_id, true, { actor: CLI_ACTOR });
    setDisabled(b.deps, b.cabinetId, userOf(b, 'a@c.fr').user_id, true, { actor: CLI_ACTOR });
    await pushNode(a);
    await pushNode(b);
    await pullNode(a);
    await pullNode(b);
    expect(userOf(a, 'a@c.fr').disabled_at).toBeNull();
    expect(userOf(b, 'b@c.fr').disabled_at).toBeNull();
    for (const node of [a, b]) {
      const [conflict] = conflictsStore.listConflicts(node.deps.db.orm, node.cabinetId, 10);
      expect(conflict).toMatchObject({ kind: 'user', reason: 'operation_refused' });
      expect(conflict?.message).toContain('without an administrator');
    }
  });

  it('joining with an email the cabinet has: the joiner’s administrator takes the cabinet’s account, one account with its own password', async () => {
    const [a] = await twoInstalls();
    await addCabinetUser(a.deps, a.cabinetId, { email: 'c@c.fr', password: 'password on A 1', role: 'broker' });
    await pushNode(a);
    // joinNode makes the administrator c@c.fr here, with its own password.
    const c = await joinNode(fixture.hub, a.cabinetId, Date.now(), 'C');
    nodes.push(c);
    expect(shareJoinedAdmin(c.deps, c.cabinetId, userOf(c, 'c@c.fr').user_id)).toBe(false);
    expect(
      listCabinetUsers(c.deps, c.cabinetId)
        .map((u) => u.email)
        .sort(),
    ).toEqual(['a@c.fr', 'b@c.fr', 'c@c.fr']);
    // The cabinet's role wins: c@c.fr is a broker here too (roles are given by the cabinet's administrators).
    expect(userOf(c, 'c@c.fr')).toMatchObject({ role: 'broker', has_password: true, user_id: userOf(a, 'c@c.fr').user_id });
    expect(syncStore.countOutbox(c.deps.db.orm, c.cabinetId)).toBe(0);
    const server = await consoleOf(c);
    expect((await signIn(server, 'c@c.fr', PASSWORD)).status).toBe(200);
  });
});
