import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { addCabinetUser } from '../../server/tenancy/users.js';
import { DESKTOP_LOGIN_TTL_MS } from '../../server/console/desktop-login.js';
import { createUser } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(token: string | null, clock = testClock()) {
  server = await startTestServer({ clock, config: token ? { desktopLoginTokenSha256: sha256(token) } : {} });
  return { server, clock };
}

async function visit(s: TestServer, query: string) {
  const response = await s.request(`/console/desktop-login${query}`, { redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), cookies: response.headers.getSetCookie(), response };
}

function cookieHeader(setCookies: string[]): string {
  return setCookies.map((c) => c.split(';')[0]).join('; ');
}

describe('GET /console/desktop-login (the desktop shell’s one-time sign-in)', () => {
  it('signs in the first cabinet’s first admin and lands on the console', async () => {
    const token = newToken();
    const { server: s } = await start(token);
    const first = await createUser(s, 'Cabinet Premier');
    await addCabinetUser(s.deps, first.cabinetId, { email: 'second-admin@example.fr', password: 'another long password', role: 'admin' });
    await createUser(s, 'Cabinet Second');
    const result = await visit(s, `?token=${token}`);
    expect(result.status).toBe(302);
    expect(result.location).toBe('/console/');
    expect(result.response.headers.get('cache-control')).toBe('no-store');
    expect(result.response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(result.cookies.some((c) => c.startsWith('courtier_session=') && c.includes('HttpOnly'))).toBe(true);
    const session = await s.request('/api/v1/console/session', { headers: { Cookie: cookieHeader(result.cookies) } });
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({
      user: { email: first.email, role: 'admin' },
      cabinet: { id: first.cabinetId, name: 'Cabinet Premier' },
    });
  });

  it('is single use', async () => {
    const token = newToken();
    const { server: s } = await start(token);
    await createUser(s);
    expect((await visit(s, `?token=${token}`)).location).toBe('/console/');
    const again = await visit(s, `?token=${token}`);
    expect(again).toMatchObject({ status: 302, location: '/console/login' });
    expect(again.cookies).toEqual([]);
  });

  it('expires after two minutes', async () => {
    const token = newToken();
    const { server: s, clock } = await start(token);
    await createUser(s);
    clock.advance(DESKTOP_LOGIN_TTL_MS);
    expect(await visit(s, `?token=${token}`)).toMatchObject({ status: 302, location: '/console/login', cookies: [] });
  });

  it('any other failure goes to the sign-in page: no token, a wrong one, garbage, no token configured', async () => {
    const token = newToken();
    const { server: s } = await start(token);
    await createUser(s);
    for (const query of [
      '',
      '?token=',
      `?token=${newToken()}`,
      `?token=${token.slice(0, -1)}`,
      '?token=%ZZ',
      `?token=${'a'.repeat(300)}`,
      `?token[]=${token}`,
    ]) {
      expect(await visit(s, query), query).toMatchObject({ status: 302, location: '/console/login', cookies: [] });
    }
    // The right token still works afterwards: failures do not consume it.
    expect((await visit(s, `?token=${token}`)).location).toBe('/console/');
    await s.close();
    const { server: none } = await start(null);
    await createUser(none);
    expect(await visit(none, `?token=${token}`)).toMatchObject({ status: 302, location: '/console/login' });
  });

  it('on a fresh install (no cabinet) it goes to first-run setup', async () => {
    const token = newToken();
    const { server: s } = await start(token);
    expect(await visit(s, `?token=${token}`)).toMatchObject({ status: 302, location: '/console/setup', cookies: [] });
  });

  it('later tokens come from the main process through app.desktopLogin.allow()', async () => {
    const { server: s } = await start(null);
    await createUser(s);
    const token = newToken();
    s.app.desktopLogin.allow(sha256(token));
    expect(() => s.app.desktopLogin.allow('not a hash')).toThrow();
    expect((await visit(s, `?token=${token}`)).location).toBe('/console/');
  });

  it('return_to lands on a console page (a notification opens a job), never elsewhere', async () => {
    const { server: s } = await start(null);
    await createUser(s);
    const landing = async (returnTo: string) => {
      const token = newToken();
      s.app.desktopLogin.allow(sha256(token));
      return (await visit(s, `?token=${token}&return_to=${encodeURIComponent(returnTo)}`)).location;
    };
    expect(await landing('/console/jobs?job=123')).toBe('/console/jobs?job=123');
    expect(await landing('https://evil.example/console/')).toBe('/console/');
    expect(await landing('//evil.example/console/')).toBe('/console/');
    expect(await landing('/api/v1/public/me')).toBe('/console/');
    expect(await landing('/console/\\evil')).toBe('/console/');
  });

  it('the token never appears in the logs', async () => {
    const token = newToken();
    const { server: s } = await start(token);
    await createUser(s);
    await visit(s, `?token=${token}`);
    expect(s.logs.join('')).not.toContain(token);
    expect(s.logs.join('')).toContain('desktop sign-in');
  });
});
