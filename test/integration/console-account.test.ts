import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordResetSchema } from '../../shared/console-account.js';
import { cabinetUserListSchema, cabinetUserSchema } from '../../shared/console-admin.js';
import { setupResponseSchema } from '../../shared/console-session.js';
import { consoleSessionSchema } from '../../shared/oauth.js';
import { setDisabled, remove } from '../../server/account/service.js';
import { CLI_ACTOR, listAudit } from '../../server/audit/service.js';
import { ApiError } from '../../server/errors.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { errorCodeOf } from '../helpers/api.js';
import { runCourtier } from '../helpers/cli.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { postMcp } from '../helpers/mcp.js';
import { authorizeOverHttp, openConsent, pkcePair, postConsent, registerClient, tokenRequest, type TestUser } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

/**
 * Account basics over HTTP against the real app: one's own password, an administrator's reset
 * (temporary password, must change it), disable/enable and removal — each ending the user's console
 * sessions and MCP tokens at once — the guard's rules on each, the audit log, and
 * `courtier users reset-password` as a child process on the same data dir.
 */

const clock = testClock();
const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'admin@cabinet-leroy.fr', password: PASSWORD };
const C = '/api/v1/console';
const TEMPORARY = /^[A-HJKMNP-Z2-9]{4}(-[A-HJKMNP-Z2-9]{4}){3}$/;

let server: TestServer;
let cabinetId: string;
let adminId: string;
let admin: ConsoleClient;
let counter = 0;

beforeAll(async () => {
  server = await startTestServer({ clock, config: { oauthRegistrationsPerHour: 1000 } });
  ({ cabinet_id: cabinetId, user_id: adminId } = await initCabinet(server.deps, { cabinet: 'Cabinet Leroy', ...ADMIN }));
  admin = await consoleClient(server, ADMIN);
});
afterAll(async () => {
  await server?.close();
});

/** A new account of the cabinet, added by the admin through the console. */
async function addUser(role: 'broker' | 'admin' = 'broker'): Promise<TestUser> {
  counter += 1;
  const email = `user${counter}@cabinet-leroy.fr`;
  const response = await admin.request(`${C}/users`, { method: 'POST', json: { email, password: PASSWORD, role } });
  expect(response.status).toBe(201);
  const user = cabinetUserSchema.parse(await response.json());
  return { email, password: PASSWORD, cabinetId, userId: user.user_id };
}

function signIn(email: string, password: string): Promise<Response> {
  return server.request(`${C}/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

/** A user signed in to the console and connected to an assistant through OAuth, both proven to work. */
async function withAccess(user: TestUser): Promise<{ session: ConsoleClient; accessToken: string; refresh: () => Promise<Response> }> {
  const session = await consoleClient(server, user);
  expect((await session.request(`${C}/settings`)).status).toBe(200);
  const { tokens, client } = await authorizeOverHttp(server, user);
  expect((await postMcp(server, tokens.access_token)).status).toBe(200);
  const refresh = () =>
    tokenRequest(server, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
  return { session, accessToken: tokens.access_token, refresh };
}

/** Proves that everything that let the user in has ended. */
async function expectAccessEnded(access: Awaited<ReturnType<typeof withAccess>>): Promise<void> {
  const console = await access.session.request(`${C}/settings`);
  expect(console.status).toBe(401);
  expect(await errorCodeOf(console)).toBe('not_signed_in');
  const mcp = await postMcp(server, access.accessToken);
  expect(mcp.status).toBe(401);
  expect(mcp.headers.get('www-authenticate')).toContain('invalid_token');
  expect((await access.refresh()).status).toBe(400);
}

async function listUsers() {
  return cabinetUserListSchema.parse(await (await admin.request(`${C}/users`)).json());
}

function auditOf(action: Parameters<typeof listAudit>[2]['action']) {
  return listAudit(server.deps, cabinetId, { action, limit: 50 });
}

describe('changing one’s own password', () => {
  it('needs the current password; ends the other sessions and keeps this one', async () => {
    const user = await addUser();
    const here = await consoleClient(server, user);
    const elsewhere = await consoleClient(server, user);
    const newPassword = 'a brand new passphrase';

    const wrong = await here.request(`${C}/account/password`, {
      method: 'PUT',
      json: { current_password: 'not my password', new_password: newPassword },
    });
    expect(wrong.status).toBe(403);
    expect(await errorCodeOf(wrong)).toBe('wrong_current_password');
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);

    const changed = await here.request(`${C}/account/password`, {
      method: 'PUT',
      json: { current_password: PASSWORD, new_password: newPassword },
    });
    expect(changed.status).toBe(200);
    expect(consoleSessionSchema.parse(await changed.json()).user).toMatchObject({ email: user.email, must_change_password: false });
    expect((await here.request(`${C}/settings`)).status).toBe(200);
    expect((await elsewhere.request(`${C}/settings`)).status).toBe(401);
    expect((await signIn(user.email, PASSWORD)).status).toBe(401);
    expect((await signIn(user.email, newPassword)).status).toBe(200);

    const entries = auditOf('user.password_changed');
    expect(entries.map((e) => e.result)).toEqual(['success', 'failure']);
    expect(entries[0]).toMatchObject({
      actor: { kind: 'user', id: user.userId },
      target: user.email,
      details: { other_sessions_ended: 2 },
    }); // elsewhere, and the sign-in that proved the old password still worked
    const all = JSON.stringify(listAudit(server.deps, cabinetId, { limit: 500 }));
    for (const secret of [newPassword, 'not my password', PASSWORD]) expect(all).not.toContain(secret);
  });

  it('refuses bad input with a 400 and changes nothing', async () => {
    const user = await addUser();
    const client = await consoleClient(server, user);
    const cases: [unknown, string][] = [
      [{ current_password: PASSWORD, new_password: 'short' }, 'body.new_password'],
      [{ current_password: PASSWORD, new_password: PASSWORD }, 'body.new_password'],
      [{ current_password: '', new_password: 'a long enough one' }, 'body.current_password'],
      [{ new_password: 'a long enough one' }, 'body.current_password'],
    ];
    for (const [body, path] of cases) {
      const response = await client.request(`${C}/account/password`, { method: 'PUT', json: body });
      expect(response.status).toBe(400);
      const error = (await response.json()) as { error: string; details: { path: string }[] };
      expect(error.error).toBe('validation_error');
      expect(error.details.map((d) => d.path)).toContain(path);
    }
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  });

  it('needs a session and the CSRF token', async () => {
    const anonymous = await server.request(`${C}/account/password`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Origin: server.url },
      body: JSON.stringify({ current_password: PASSWORD, new_password: 'a brand new passphrase' }),
    });
    expect(anonymous.status).toBe(401);
    const user = await addUser();
    const client = await consoleClient(server, user);
    const forged = await server.request(`${C}/account/password`, {
      method: 'PUT',
      headers: { cookie: client.cookie, 'Content-Type': 'application/json', Origin: server.url },
      body: JSON.stringify({ current_password: PASSWORD, new_password: 'a brand new passphrase' }),
    });
    expect(forged.status).toBe(403);
    expect(await errorCodeOf(forged)).toBe('invalid_csrf_token');
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  });

  it('counts a wrong current password as a failed sign-in: past the limit, both are throttled', async () => {
    const user = await addUser();
    const client = await consoleClient(server, user);
    for (let i = 0; i < 5; i++) {
      const wrong = await client.request(`${C}/account/password`, {
        method: 'PUT',
        json: { current_password: `guess ${i}`, new_password: 'a brand new passphrase' },
      });
      expect(wrong.status).toBe(403);
    }
    const throttled = await client.request(`${C}/account/password`, {
      method: 'PUT',
      json: { current_password: PASSWORD, new_password: 'a brand new passphrase' },
    });
    expect(throttled.status).toBe(429);
    expect(await errorCodeOf(throttled)).toBe('too_many_login_attempts');
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await signIn(user.email, PASSWORD)).status).toBe(429);
    clock.advance(15 * 60_000);
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
  });
});

describe('an administrator resets a password', () => {
  it('gives a temporary password once, ends sessions and MCP tokens, and the user must change it before anything else', async () => {
    const user = await addUser();
    const access = await withAccess(user);

    const response = await admin.request(`${C}/users/${user.userId}/password-reset`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const reset = passwordResetSchema.parse(await response.json());
    expect(reset.temporary_password).toMatch(TEMPORARY);
    expect(reset.user).toMatchObject({ user_id: user.userId, must_change_password: true, disabled_at: null });
    await expectAccessEnded(access);

    expect((await signIn(user.email, PASSWORD)).status).toBe(401);
    const signedIn = await signIn(user.email, reset.temporary_password);
    expect(signedIn.status).toBe(200);
    const answer = setupResponseSchema.parse(await signedIn.json());
    expect(answer.session.user.must_change_password).toBe(true);
    expect(answer.redirect_to).toBe('/console/account');
    const session = await consoleClient(server, { email: user.email, password: reset.temporary_password });
    const probe = (await (await session.request(`${C}/session`)).json()) as { user: { must_change_password: boolean } };
    expect(probe.user.must_change_password).toBe(true);
    for (const path of ['/settings', '/connected-apps', '/wallet']) {
      const refused = await session.request(`${C}${path}`);
      expect(refused.status).toBe(403);
      expect(await errorCodeOf(refused)).toBe('password_change_required');
    }
    // Nor can the temporary password let an assistant in: the consent is refused, read or posted.
    const client = await registerClient(server);
    const requestId = await openConsent(server, session.cookie, { clientId: client.client_id, challenge: pkcePair().challenge });
    const consent = await server.request(`/api/v1/mcp/oauth/consent/${requestId}`, { headers: { cookie: session.cookie } });
    expect(consent.status).toBe(403);
    expect(await errorCodeOf(consent)).toBe('password_change_required');
    const posted = await postConsent(server, session.cookie, { request_id: requestId, csrf_token: 'x'.repeat(43), decision: 'allow' });
    expect(posted.status).toBe(403);
    expect(posted.headers.get('location')).toBeNull();

    const chosen = await session.request(`${C}/account/password`, {
      method: 'PUT',
      json: { current_password: reset.temporary_password, new_password: 'my own passphrase now' },
    });
    expect(chosen.status).toBe(200);
    expect(consoleSessionSchema.parse(await chosen.json()).user.must_change_password).toBe(false);
    expect((await session.request(`${C}/settings`)).status).toBe(200);
    expect((await listUsers()).find((u) => u.user_id === user.userId)?.must_change_password).toBe(false);

    const [entry] = auditOf('user.password_reset');
    expect(entry).toMatchObject({
      actor: { kind: 'user', id: adminId },
      target: user.email,
      details: { user_id: user.userId, sessions_ended: 2, grants_revoked: 1 },
    });
    expect(JSON.stringify(listAudit(server.deps, cabinetId, { limit: 500 }))).not.toContain(reset.temporary_password);
  });

  it('is for administrators, never on oneself, and answers 400/404 for a bad or unknown id', async () => {
    const broker = await addUser();
    const brokerClient = await consoleClient(server, broker);
    const asBroker = await brokerClient.request(`${C}/users/${adminId}/password-reset`, { method: 'POST' });
    expect(asBroker.status).toBe(403);
    expect(await errorCodeOf(asBroker)).toBe('admin_only');
    const self = await admin.request(`${C}/users/${adminId}/password-reset`, { method: 'POST' });
    expect(self.status).toBe(409);
    expect(await errorCodeOf(self)).toBe('own_account');
    expect((await admin.request(`${C}/users/not-a-uuid/password-reset`, { method: 'POST' })).status).toBe(400);
    expect((await admin.request(`${C}/users/00000000-0000-4000-8000-000000000000/password-reset`, { method: 'POST' })).status).toBe(404);
    // Nothing was written: both still sign in with their own passwords, nobody must change one.
    expect((await signIn(ADMIN.email, PASSWORD)).status).toBe(200);
    expect((await signIn(broker.email, PASSWORD)).status).toBe(200);
    expect((await listUsers()).some((u) => u.must_change_password)).toBe(false);
  });

  it('another cabinet’s user is not found', async () => {
    const other = await initCabinet(server.deps, { cabinet: 'Cabinet Voisin', email: 'voisin@cabinet.fr', password: PASSWORD });
    const response = await admin.request(`${C}/users/${other.user_id}/password-reset`, { method: 'POST' });
    expect(response.status).toBe(404);
    expect((await signIn('voisin@cabinet.fr', PASSWORD)).status).toBe(200);
  });
});

describe('an administrator disables and enables a user', () => {
  it('a disabled user’s sessions and MCP tokens end at once, sign-in says the account is disabled; enabled, they sign in again', async () => {
    const user = await addUser();
    const access = await withAccess(user);

    const response = await admin.request(`${C}/users/${user.userId}/disabled`, { method: 'PUT', json: { disabled: true } });
    expect(response.status).toBe(200);
    const disabled = cabinetUserSchema.parse(await response.json());
    expect(disabled.disabled_at).toBe(new Date(clock.now()).toISOString());
    await expectAccessEnded(access);

    const refused = await signIn(user.email, PASSWORD);
    expect(refused.status).toBe(403);
    expect((await refused.json()) as { error: string; message: string }).toMatchObject({
      error: 'account_disabled',
      message: expect.stringContaining('administrator'),
    });
    // Without the right password, nothing tells that the account exists or is disabled.
    const guessed = await signIn(user.email, 'a wrong password');
    expect(guessed.status).toBe(401);
    expect(await errorCodeOf(guessed)).toBe('invalid_credentials');

    const enabled = await admin.request(`${C}/users/${user.userId}/disabled`, { method: 'PUT', json: { disabled: false } });
    expect(enabled.status).toBe(200);
    expect(cabinetUserSchema.parse(await enabled.json()).disabled_at).toBeNull();
    expect((await signIn(user.email, PASSWORD)).status).toBe(200);
    expect(auditOf('user.disabled')[0]).toMatchObject({ target: user.email, details: { sessions_ended: 2, grants_revoked: 1 } });
    expect(auditOf('user.enabled')[0]).toMatchObject({ target: user.email });
  });

  it('refuses oneself, a broker, bad input and an unknown user, changing nothing', async () => {
    const broker = await addUser();
    const brokerClient = await consoleClient(server, broker);
    const self = await admin.request(`${C}/users/${adminId}/disabled`, { method: 'PUT', json: { disabled: true } });
    expect(self.status).toBe(409);
    expect(await errorCodeOf(self)).toBe('own_account');
    const asBroker = await brokerClient.request(`${C}/users/${adminId}/disabled`, { method: 'PUT', json: { disabled: true } });
    expect(asBroker.status).toBe(403);
    for (const body of [{ disabled: 'yes' }, {}, null]) {
      const bad = await admin.request(`${C}/users/${broker.userId}/disabled`, { method: 'PUT', json: body });
      expect(bad.status).toBe(400);
    }
    expect(
      (await admin.request(`${C}/users/00000000-0000-4000-8000-000000000000/disabled`, { method: 'PUT', json: { disabled: true } })).status,
    ).toBe(404);
    expect((await listUsers()).every((u) => u.disabled_at === null)).toBe(true);
    expect((await brokerClient.request(`${C}/settings`)).status).toBe(200);
  });

  it('the cabinet keeps an active administrator: the last one can be neither disabled, removed nor demoted', async () => {
    const second = await addUser('admin');
    const secondClient = await consoleClient(server, second);
    expect((await secondClient.request(`${C}/users/${adminId}/disabled`, { method: 'PUT', json: { disabled: true } })).status).toBe(200);
    // The second admin is now the only active one: demoting themselves would leave none.
    const demoted = await secondClient.request(`${C}/users/${second.userId}`, { method: 'PATCH', json: { role: 'broker' } });
    expect(demoted.status).toBe(409);
    expect(await errorCodeOf(demoted)).toBe('last_admin');
    // The routes never let an admin act on their own account; the rule holds below them too.
    const codeOf = (act: () => unknown) => {
      try {
        act();
        return 'done';
      } catch (err) {
        return err instanceof ApiError ? err.code : String(err);
      }
    };
    expect(codeOf(() => setDisabled(server.deps, cabinetId, second.userId, true, { actor: CLI_ACTOR }))).toBe('last_admin');
    expect(codeOf(() => remove(server.deps, cabinetId, second.userId, { actor: CLI_ACTOR }))).toBe('last_admin');
    expect((await secondClient.request(`${C}/users/${adminId}/disabled`, { method: 'PUT', json: { disabled: false } })).status).toBe(200);
    admin = await consoleClient(server, ADMIN);
    expect((await admin.request(`${C}/users/${second.userId}`, { method: 'DELETE' })).status).toBe(204);
  });
});

describe('an administrator removes a user', () => {
  it('the user is gone from the list, their sessions and MCP tokens end, and the email can be used again', async () => {
    const user = await addUser();
    const access = await withAccess(user);

    const response = await admin.request(`${C}/users/${user.userId}`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect((await listUsers()).map((u) => u.user_id)).not.toContain(user.userId);
    await expectAccessEnded(access);
    const gone = await signIn(user.email, PASSWORD);
    expect(gone.status).toBe(401);
    expect(await errorCodeOf(gone)).toBe('invalid_credentials');
    expect((await admin.request(`${C}/users/${user.userId}`, { method: 'DELETE' })).status).toBe(404);
    expect(
      (await admin.request(`${C}/users`, { method: 'POST', json: { email: user.email, password: PASSWORD, role: 'broker' } })).status,
    ).toBe(201);
    expect(auditOf('user.removed')[0]).toMatchObject({
      actor: { kind: 'user', id: adminId },
      target: user.email,
      details: { user_id: user.userId, role: 'broker' },
    });
  });

  it('refuses oneself, a broker and a bad id, removing nothing', async () => {
    const broker = await addUser();
    const brokerClient = await consoleClient(server, broker);
    const before = (await listUsers()).length;
    const self = await admin.request(`${C}/users/${adminId}`, { method: 'DELETE' });
    expect(self.status).toBe(409);
    expect(await errorCodeOf(self)).toBe('own_account');
    expect((await brokerClient.request(`${C}/users/${adminId}`, { method: 'DELETE' })).status).toBe(403);
    expect((await admin.request(`${C}/users/not-a-uuid`, { method: 'DELETE' })).status).toBe(400);
    expect((await listUsers()).length).toBe(before);
  });
});

describe('courtier users reset-password', () => {
  it('resets a locked-out admin’s password from the data dir: printed once, sessions and tokens ended, to be changed at sign-in', async () => {
    const second = await addUser('admin');
    const access = await withAccess(second);

    const result = await runCourtier([
      'users',
      'reset-password',
      '--data-dir',
      server.dataDir,
      '--email',
      second.email.toUpperCase(),
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const printed = JSON.parse(result.stdout) as { email: string; temporary_password: string };
    expect(printed).toMatchObject({ email: second.email, temporary_password: expect.stringMatching(TEMPORARY) });
    await expectAccessEnded(access);
    const signedIn = await signIn(second.email, printed.temporary_password);
    expect(signedIn.status).toBe(200);
    expect(setupResponseSchema.parse(await signedIn.json()).session.user.must_change_password).toBe(true);
    expect(auditOf('user.password_reset')[0]).toMatchObject({ actor: { kind: 'cli' }, target: second.email });

    const human = await runCourtier(['users', 'reset-password', '--data-dir', server.dataDir, '--email', second.email]);
    expect(human.code, human.stderr).toBe(0);
    const [temporary] = /[A-Z2-9]{4}(-[A-Z2-9]{4}){3}/.exec(human.stdout) ?? [];
    expect(human.stdout.split(temporary ?? '?')).toHaveLength(2);
    expect((await signIn(second.email, temporary ?? '')).status).toBe(200);
  });

  it('says so for an unknown email, and asks for --cabinet when the email has accounts in several', async () => {
    const unknown = await runCourtier(['users', 'reset-password', '--data-dir', server.dataDir, '--email', 'nobody@nowhere.fr', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'not_found' });
    expect(unknown.stderr).toContain('nobody@nowhere.fr');

    const elsewhere = await initCabinet(server.deps, { cabinet: 'Cabinet Bis', email: ADMIN.email, password: 'another long password' });
    const ambiguous = await runCourtier(['users', 'reset-password', '--data-dir', server.dataDir, '--email', ADMIN.email]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('--cabinet');
    expect(ambiguous.stderr).toContain(elsewhere.cabinet_id);
    expect(ambiguous.stderr).toContain('Cabinet Bis');
    expect((await signIn(ADMIN.email, PASSWORD)).status).toBe(200);

    const chosen = await runCourtier([
      'users',
      'reset-password',
      '--data-dir',
      server.dataDir,
      '--email',
      ADMIN.email,
      '--cabinet',
      elsewhere.cabinet_id,
      '--json',
    ]);
    expect(chosen.code, chosen.stderr).toBe(0);
    // The other cabinet's account kept its password.
    expect((await signIn(ADMIN.email, PASSWORD)).status).toBe(200);
    const usage = await runCourtier(['users', 'reset-password', '--data-dir', server.dataDir]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--email');
  });
});
