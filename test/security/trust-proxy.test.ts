import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type TrustProxy } from '../../server/config.js';
import { errorCodeOf } from '../helpers/api.js';
import { runCourtier } from '../helpers/cli.js';
import { createUser, PASSWORD } from '../helpers/oauth.js';
import { lanClient, lanPeerAddress } from '../helpers/peer.js';
import { startTestServer, tempDir, testClock, type StartOptions, type TestServer } from '../helpers/server.js';

/** A client on this machine, sending the X-Forwarded-* headers a reverse proxy would. */
const CLIENT = '203.0.113.7';

const started: TestServer[] = [];
afterAll(async () => {
  for (const server of started) await server.close();
});

async function start(options: StartOptions): Promise<TestServer> {
  const server = await startTestServer(options);
  started.push(server);
  return server;
}

function trustProxyFromEnv(value: string) {
  return loadConfig({ dataDir: '/tmp/unused' }, { COURTIER_TRUST_PROXY: value }).trustProxy;
}

function signInFrom(server: TestServer, email: string, headers: Record<string, string>): Promise<Response> {
  return server.request('/api/v1/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ email, password: 'not the password' }),
  });
}

describe('CWE-348 Use of less trusted source (X-Forwarded-For, X-Forwarded-Proto)', () => {
  describe('COURTIER_TRUST_PROXY', () => {
    it.each(['true', 'TRUE', 'yes', ' true '])('refuses %j at start, explaining why and giving both correct forms', (value) => {
      expect(() => trustProxyFromEnv(value)).toThrow(ConfigError);
      expect(() => trustProxyFromEnv(value)).toThrow(
        /COURTIER_TRUST_PROXY: .*every client.*number of proxies.*\(e\.g\. 1\).*addresses \(e\.g\. 127\.0\.0\.1/,
      );
      expect(() => loadConfig({ dataDir: '/tmp/unused', trustProxy: true }, {})).toThrow(/COURTIER_TRUST_PROXY/);
    });

    it('takes false, no or 0 (no proxy), a hop count, or addresses and CIDR blocks (IPv4 and IPv6)', () => {
      expect(loadConfig({ dataDir: '/tmp/unused' }, {}).trustProxy).toBe(false);
      for (const off of ['false', 'no', '0']) expect(trustProxyFromEnv(off), off).toBe(false);
      expect(trustProxyFromEnv('1')).toBe(1);
      expect(trustProxyFromEnv('2')).toBe(2);
      expect(trustProxyFromEnv('127.0.0.1')).toEqual(['127.0.0.1']);
      expect(trustProxyFromEnv(' 10.0.0.0/8, 192.168.1.20 ,::1, fd00::/8')).toEqual(['10.0.0.0/8', '192.168.1.20', '::1', 'fd00::/8']);
    });

    it.each(['-1', '1.5', '10.0.0.0/33', '300.1.1.1', 'proxy.lan', 'loopback', ',', '101', '0.0.0.0/0', '10.0.0.0/7', '::/0', 'fc00::/6'])(
      'refuses %j with a message naming the variable',
      (value) => {
        expect(() => trustProxyFromEnv(value)).toThrow(
          /COURTIER_TRUST_PROXY: .*(not an IP address|no proxy address|whole number|large part of the internet)/,
        );
      },
    );

    it('`courtier serve` with COURTIER_TRUST_PROXY=true does not start (exit 2, one clear line)', async () => {
      const dataDir = tempDir();
      try {
        const result = await runCourtier(['serve', '--port', '0', '--data-dir', dataDir], { env: { COURTIER_TRUST_PROXY: 'true' } });
        expect(result.code).toBe(2);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr).toMatch(/COURTIER_TRUST_PROXY: "true" would trust X-Forwarded-For from every client/);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('a client that is not a trusted proxy cannot choose its address', () => {
    // The proxies are elsewhere: requests from 127.0.0.1 are direct clients, whatever they send.
    const notUs = { trustProxy: ['192.0.2.10', '10.0.0.0/8'] };

    it('API-key IP allowlist: X-Forwarded-For naming an allowed address is ignored', async () => {
      const server = await start({ config: notUs });
      const cabinetId = await server.createCabinet();
      const elsewhere = server.createKey(cabinetId, { ip_allowlist: [CLIENT] });
      const spoofed = await server.request('/api/v1/public/me', { headers: { 'X-API-Key': elsewhere.key, 'X-Forwarded-For': CLIENT } });
      expect(spoofed.status).toBe(403);
      expect(await errorCodeOf(spoofed)).toBe('ip_not_allowed');
      const here = server.createKey(cabinetId, { ip_allowlist: ['127.0.0.1'] });
      const real = await server.request('/api/v1/public/me', { headers: { 'X-API-Key': here.key, 'X-Forwarded-For': CLIENT } });
      expect(real.status).toBe(200);
    });

    it('console sign-in throttle: counts the real address, not a new X-Forwarded-For on each try', async () => {
      const server = await start({ config: notUs, clock: testClock() });
      for (let i = 0; i < 20; i++) {
        const response = await signInFrom(server, `nobody-${i}@example.fr`, { 'X-Forwarded-For': `203.0.113.${i + 1}` });
        expect(response.status).toBe(401);
      }
      const blocked = await signInFrom(server, 'someone-else@example.fr', { 'X-Forwarded-For': '198.51.100.1' });
      expect(blocked.status).toBe(429);
      expect(await errorCodeOf(blocked)).toBe('too_many_login_attempts');
    });

    it('OAuth registration throttle: counts the real address', async () => {
      const server = await start({ config: { ...notUs, oauthRegistrationsPerHour: 3 }, clock: testClock() });
      const register = (forwardedFor: string) =>
        server.request('/api/v1/mcp/oauth/register', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': forwardedFor },
          body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/callback'] }),
        });
      for (let i = 0; i < 3; i++) expect((await register(`203.0.113.${i + 1}`)).status).toBe(201);
      const refused = await register('198.51.100.1');
      expect(refused.status).toBe(429);
    });

    it('the session cookie is not marked Secure on a direct client’s X-Forwarded-Proto: https', async () => {
      const server = await start({ config: notUs });
      const user = await createUser(server);
      const response = await server.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Proto': 'https' },
        body: JSON.stringify({ email: user.email, password: PASSWORD }),
      });
      expect(response.status).toBe(200);
      for (const line of response.headers.getSetCookie()) expect(line).not.toMatch(/Secure/);
    });
  });

  describe('behind a trusted proxy', () => {
    it('the client address is the one the proxy adds, not one the client wrote before it', async () => {
      const server = await start({ config: { trustProxy: ['127.0.0.1'] } });
      const cabinetId = await server.createCabinet();
      const key = server.createKey(cabinetId, { ip_allowlist: [CLIENT] });
      // The proxy appends the address it saw: what the client sent comes first and is not believed.
      const through = await server.request('/api/v1/public/me', {
        headers: { 'X-API-Key': key.key, 'X-Forwarded-For': `6.6.6.6, ${CLIENT}` },
      });
      expect(through.status).toBe(200);
      const spoofedFirst = await server.request('/api/v1/public/me', {
        headers: { 'X-API-Key': key.key, 'X-Forwarded-For': `${CLIENT}, 6.6.6.6` },
      });
      expect(spoofedFirst.status).toBe(403);
    });

    it('a hop count believes the last hop only', async () => {
      const server = await start({ config: { trustProxy: 1 } });
      const cabinetId = await server.createCabinet();
      const key = server.createKey(cabinetId, { ip_allowlist: [CLIENT] });
      expect(
        (await server.request('/api/v1/public/me', { headers: { 'X-API-Key': key.key, 'X-Forwarded-For': `6.6.6.6, ${CLIENT}` } })).status,
      ).toBe(200);
      expect(
        (await server.request('/api/v1/public/me', { headers: { 'X-API-Key': key.key, 'X-Forwarded-For': `${CLIENT}, 6.6.6.6` } })).status,
      ).toBe(403);
    });

    it('the session cookie is Secure when the TLS proxy says X-Forwarded-Proto: https', async () => {
      const server = await start({ config: { trustProxy: ['127.0.0.1'] } });
      const user = await createUser(server);
      const response = await server.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': CLIENT },
        body: JSON.stringify({ email: user.email, password: PASSWORD }),
      });
      expect(response.status).toBe(200);
      const cookies = response.headers.getSetCookie();
      expect(cookies).toHaveLength(2);
      for (const line of cookies) expect(line).toMatch(/; Secure$/);
    });
  });

  describe('the desktop sign-in never believes forwarded headers', () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

    const trustedLanProxy = (): TrustProxy => [lanPeerAddress()];
    const oneHop = (): TrustProxy => 1;
    it.each([
      ['a trusted LAN proxy', trustedLanProxy],
      ['a hop count', oneHop],
    ])('a LAN client is refused even when %s says X-Forwarded-For: 127.0.0.1', async (_name, trustProxy) => {
      const token = randomBytes(32).toString('base64url');
      const server = await start({
        listenHost: '0.0.0.0',
        config: { host: '0.0.0.0', trustProxy: trustProxy(), desktopLoginTokenSha256: sha256(token) },
      });
      await createUser(server, `Cabinet ${randomUUID()}`);
      const neighbour = lanClient(server);
      const refused = await neighbour.request(`/console/desktop-login?token=${token}`, { headers: { 'X-Forwarded-For': '127.0.0.1' } });
      expect(refused.status, neighbour.via).toBe(302);
      expect(refused.headers.get('location')).toBe('/console/login');
      expect(refused.headers.getSetCookie()).toEqual([]);
      // The desktop window itself, on this machine, still signs in with the same token.
      const local = await server.request(`/console/desktop-login?token=${token}`, { redirect: 'manual' });
      expect(local.headers.get('location')).toBe('/console/');
    });

    it('a request from this machine that a trusted local proxy forwards for a LAN client is not local either', async () => {
      const token = randomBytes(32).toString('base64url');
      const server = await start({ config: { trustProxy: ['127.0.0.1'], desktopLoginTokenSha256: sha256(token) } });
      await createUser(server);
      const proxied = await server.request(`/console/desktop-login?token=${token}`, {
        redirect: 'manual',
        headers: { 'X-Forwarded-For': '192.168.1.50' },
      });
      expect(proxied.headers.get('location')).toBe('/console/login');
      const local = await server.request(`/console/desktop-login?token=${token}`, { redirect: 'manual' });
      expect(local.headers.get('location')).toBe('/console/');
    });
  });
});
