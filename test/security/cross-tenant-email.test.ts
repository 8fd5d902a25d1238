import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetUserSchema } from '../../shared/console-admin.js';
import { errorBodySchema } from '../../shared/errors.js';
import { consoleSessionSchema } from '../../shared/oauth.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { addCabinetUser } from '../../server/tenancy/users.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const C = '/api/v1/console';
const SHARED_EMAIL = 'claire.martin@example.fr';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ clock: testClock() });
});
afterAll(async () => {
  await server?.close();
});

/** A cabinet and a console session of its admin. */
async function cabinetWithAdmin(name: string): Promise<{ cabinetId: string; admin: ConsoleClient }> {
  const email = `admin@${name.toLowerCase().replace(/\W+/g, '-')}.fr`;
  const password = 'the admin password';
  const { cabinet_id } = await initCabinet(server.deps, { cabinet: name, email, password });
  return { cabinetId: cabinet_id, admin: await consoleClient(server, { email, password }) };
}

function signIn(body: Record<string, string>): Promise<Response> {
  return server.request(`${C}/session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

function usersWithEmail(email: string): number {
  return (server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM users WHERE email = ?').get(email) as { n: number }).n;
}

describe('CWE-307 Improper restriction of excessive authentication attempts (across cabinets)', () => {
  it('signing in to one’s own account with an email shared with another cabinet does not reset the count of failures against the other', async () => {
    const email = 'shared-target@example.fr';
    const victim = await cabinetWithAdmin('Cabinet Victime');
    const attacker = await cabinetWithAdmin('Cabinet Attaquant');
    expect(
      (await victim.admin.request(`${C}/users`, { method: 'POST', json: { email, password: 'the victim’s secret', role: 'admin' } }))
        .status,
    ).toBe(201);
    expect(
      (await attacker.admin.request(`${C}/users`, { method: 'POST', json: { email, password: 'the attacker’s own', role: 'admin' } }))
        .status,
    ).toBe(201);
    const guess = (n: number) => signIn({ email, password: `guess number ${n}` });
    for (let i = 0; i < 4; i++) expect((await guess(i)).status).toBe(401);
    // The attacker signs in to the account they made, then guesses on.
    expect((await signIn({ email, password: 'the attacker’s own' })).status).toBe(200);
    expect((await guess(4)).status).toBe(401);
    const blocked = await guess(5);
    expect(blocked.status).toBe(429);
    expect(errorBodySchema.parse(await blocked.json()).error).toBe('too_many_login_attempts');
  });
});

describe('CWE-204 Observable response discrepancy (an email that has an account in another cabinet)', () => {
  describe('adding a user', () => {
    it('an email with an account in another cabinet is added like any new address: no signal that it exists elsewhere', async () => {
      const dupont = await cabinetWithAdmin('Dupont Courtage');
      const martin = await cabinetWithAdmin('Martin Assurances');
      const first = await dupont.admin.request(`${C}/users`, {
        method: 'POST',
        json: { email: SHARED_EMAIL, password: 'password of Dupont', role: 'broker' },
      });
      expect(first.status).toBe(201);
      const fresh = await martin.admin.request(`${C}/users`, {
        method: 'POST',
        json: { email: 'nobody-else@example.fr', password: 'password of Martin', role: 'broker' },
      });
      const elsewhere = await martin.admin.request(`${C}/users`, {
        method: 'POST',
        json: { email: SHARED_EMAIL.toUpperCase(), password: 'password of Martin', role: 'broker' },
      });
      expect(elsewhere.status).toBe(fresh.status);
      expect(Object.keys(cabinetUserSchema.strict().parse(await elsewhere.json())).sort()).toEqual(
        Object.keys(cabinetUserSchema.strict().parse(await fresh.json())).sort(),
      );
      expect(usersWithEmail(SHARED_EMAIL)).toBe(2);
    });

    it('a duplicate within the same cabinet is 409 email_taken, saying "in this cabinet", and writes nothing', async () => {
      const { admin } = await cabinetWithAdmin('Bernard et Fils');
      expect(
        (
          await admin.request(`${C}/users`, {
            method: 'POST',
            json: { email: 'paul@bernard.fr', password: 'a long password', role: 'broker' },
          })
        ).status,
      ).toBe(201);
      const again = await admin.request(`${C}/users`, {
        method: 'POST',
        json: { email: 'Paul@Bernard.fr', password: 'another password', role: 'admin' },
      });
      expect(again.status).toBe(409);
      const body = errorBodySchema.parse(await again.json());
      expect(body.error).toBe('email_taken');
      expect(body.message).toMatch(/in this cabinet/);
      expect(usersWithEmail('paul@bernard.fr')).toBe(1);
    });

    it('the database refuses a duplicate within a cabinet, whatever the code path', async () => {
      const { cabinetId } = await cabinetWithAdmin('Garnier');
      await addCabinetUser(server.deps, cabinetId, { email: 'lea@garnier.fr', password: 'a long password', role: 'broker' });
      expect(() =>
        server.deps.db.sqlite
          .prepare(
            "INSERT INTO users (id, cabinet_id, email, password_hash, role, created_at) VALUES ('x', ?, 'lea@garnier.fr', 'h', 'broker', 0)",
          )
          .run(cabinetId),
      ).toThrow(/UNIQUE/);
    });
  });

  describe('signing in with an email that has accounts in several cabinets', () => {
    let cabinets: { a: string; b: string; c: string };
    const email = 'multi@example.fr';

    beforeAll(async () => {
      const a = await cabinetWithAdmin('Cabinet Alpha');
      const b = await cabinetWithAdmin('Cabinet Bêta');
      const c = await cabinetWithAdmin('Cabinet Gamma');
      cabinets = { a: a.cabinetId, b: b.cabinetId, c: c.cabinetId };
      await addCabinetUser(server.deps, a.cabinetId, { email, password: 'the same password', role: 'broker' });
      await addCabinetUser(server.deps, b.cabinetId, { email, password: 'the same password', role: 'admin' });
      await addCabinetUser(server.deps, c.cabinetId, { email, password: 'only for gamma', role: 'broker' });
    });

    it('the password that opens one account signs in to that account', async () => {
      const response = await signIn({ email, password: 'only for gamma' });
      expect(response.status).toBe(200);
      const { session } = (await response.json()) as { session: unknown };
      expect(consoleSessionSchema.parse(session).cabinet).toEqual({ id: cabinets.c, name: 'Cabinet Gamma' });
    });

    it('a password that opens several: 409 cabinet_choice_required listing only those cabinets, and no session', async () => {
      const response = await signIn({ email, password: 'the same password' });
      expect(response.status).toBe(409);
      expect(response.headers.getSetCookie()).toEqual([]);
      const body = errorBodySchema.parse(await response.json());
      expect(body.error).toBe('cabinet_choice_required');
      // Gamma has an account with this email too, but this password does not open it: not listed.
      expect(body.details).toEqual([
        { cabinet_id: cabinets.a, name: 'Cabinet Alpha' },
        { cabinet_id: cabinets.b, name: 'Cabinet Bêta' },
      ]);
    });

    it('with cabinet_id, signs in to the chosen cabinet; a cabinet the password does not open is invalid_credentials', async () => {
      const chosen = await signIn({ email, password: 'the same password', cabinet_id: cabinets.b });
      expect(chosen.status).toBe(200);
      const { session } = (await chosen.json()) as { session: unknown };
      expect(consoleSessionSchema.parse(session)).toMatchObject({ cabinet: { id: cabinets.b }, user: { email, role: 'admin' } });
      const notOpened = await signIn({ email, password: 'the same password', cabinet_id: cabinets.c });
      expect(notOpened.status).toBe(401);
      expect(errorBodySchema.parse(await notOpened.json()).error).toBe('invalid_credentials');
      const malformed = await signIn({ email, password: 'the same password', cabinet_id: 'alpha' });
      expect(malformed.status).toBe(400);
    });

    it('a wrong password says the same as for an unknown email', async () => {
      const wrong = errorBodySchema.parse(await (await signIn({ email, password: 'not any of them' })).json());
      const unknown = errorBodySchema.parse(await (await signIn({ email: 'no-account@example.fr', password: 'not any of them' })).json());
      expect({ ...wrong, request_id: '' }).toEqual({ ...unknown, request_id: '' });
    });

    describe('the console login page', { tags: ['browser'] }, () => {
      let browser: Browser;
      beforeAll(async () => {
        browser = await launchChromium();
      });
      afterAll(async () => {
        await browser?.close();
      });

      it.each([
        ['en-GB', { email: 'Email', password: 'Password', signIn: 'Sign in', cabinet: 'Cabinet', hint: /several cabinets/ }],
        ['fr-FR', { email: 'Courriel', password: 'Mot de passe', signIn: 'Se connecter', cabinet: 'Cabinet', hint: /plusieurs cabinets/ }],
      ])('in %s, offers the cabinets to choose from, then signs in to the chosen one', async (locale, words) => {
        const context = await browser.newContext({ locale });
        try {
          const page = await context.newPage();
          page.setDefaultTimeout(15_000);
          await page.goto(`${server.url}/console/login`);
          await page.getByLabel(words.email).fill(email);
          await page.getByLabel(words.password).fill('the same password');
          await page.getByRole('button', { name: words.signIn }).click();
          const group = page.getByRole('group', { name: words.cabinet });
          await group.waitFor();
          expect(await group.innerText()).toMatch(words.hint);
          expect(await group.getByRole('radio').count()).toBe(2);
          await group.getByRole('radio', { name: 'Cabinet Bêta' }).check();
          await page.getByRole('button', { name: words.signIn }).click();
          await page.waitForURL(`${server.url}/console/`);
          const session = consoleSessionSchema.parse(await page.evaluate(async () => (await fetch('/api/v1/console/session')).json()));
          expect(session.cabinet).toEqual({ id: cabinets.b, name: 'Cabinet Bêta' });
        } finally {
          await context.close();
        }
      });
    });
  });
});
