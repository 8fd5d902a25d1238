import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer as createHttpsServer } from 'node:https';
import { request as httpsRequest } from 'node:https';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_ACTOR, listAudit } from '../../server/audit/service.js';
import { createAuthority, issueServerCertificate, SERVER_CERTIFICATE_LIFETIME_DAYS } from '../../server/lan/certificates.js';
import { caCertificate } from '../../server/lan/office-ca.js';
import { changeLan, lanStatus } from '../../server/lan/service.js';
import { blockLanAddress, checkLanAddress } from '../../server/lan/blocks.js';
import { throttleBucket } from '../../server/platform/http/client-address.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { databaseFile } from '../../server/platform/db/open.js';
import { freePort } from '../helpers/free-port.js';
import { fingerprintOfPem, lanRequest, testNetwork, type TestNetwork } from '../helpers/lan.js';
import { startTestServer, tempDir, testClock, type TestClock, type TestServer } from '../helpers/server.js';
import { consoleClient } from '../helpers/console.js';

const DAY = 86_400_000;
const ADMIN = { email: 'admin@cabinet.fr', password: 'correct horse battery' };

describe('office LAN mode: the HTTPS listener beside loopback', () => {
  let server: TestServer;
  let network: TestNetwork;
  let clock: TestClock;
  let port: number;
  let policyFile: string;
  let cabinetId: string;

  beforeEach(async () => {
    port = await freePort();
    policyFile = join(tempDir('courtier-policy-'), 'policy.json');
    network = testNetwork('office-pc', ['127.0.0.2']);
    clock = testClock(Date.now());
    server = await startTestServer({ network, clock, config: { policyFile, lanCheckIntervalMs: 600_000 } });
    ({ cabinet_id: cabinetId } = await initCabinet(server.deps, { cabinet: 'Cabinet Martin', ...ADMIN }));
  });
  afterEach(async () => server.close());

  async function enable(options: Parameters<typeof changeLan>[1] = { enabled: true }) {
    const status = await changeLan(server.deps, { port, ...options }, network, CLI_ACTOR);
    await server.app.lanListener.reconcile();
    return { status, ca: caCertificate(server.deps) ?? '' };
  }

  it('serves the office CA’s certificate for the host name, its .local name and the address; the CA is name-constrained and its key is never stored in clear', async () => {
    const { status, ca } = await enable({ enabled: true, names: ['courtier.cabinet.lan'] });
    expect(status).toMatchObject({
      enabled: true,
      port,
      addresses: ['127.0.0.2'],
      urls: [
        `https://office-pc:${port}`,
        `https://office-pc.local:${port}`,
        `https://courtier.cabinet.lan:${port}`,
        `https://127.0.0.2:${port}`,
      ],
      certificate: { source: 'generated', names: ['office-pc', 'office-pc.local', 'courtier.cabinet.lan'], addresses: ['127.0.0.2'] },
    });
    expect(status.ca_fingerprint_sha256).toBe(fingerprintOfPem(ca));
    const notAfter = Date.parse(status.certificate?.not_after ?? '');
    expect(notAfter - clock.now()).toBeLessThanOrEqual(SERVER_CERTIFICATE_LIFETIME_DAYS * DAY);

    for (const name of ['office-pc', 'office-pc.local', 'courtier.cabinet.lan', undefined]) {
      const response = await lanRequest({ address: '127.0.0.2', port, name, ca }, '/healthz');
      expect(response.status).toBe(200);
      expect(response.certificateFingerprint).toBe(status.certificate?.fingerprint_sha256);
    }
    // The CA download, open on the LAN listener: the same certificate the CLI prints.
    const download = await lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca }, '/ca.crt');
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/x-pem-file');
    expect(download.body).toBe(ca);

    // Name constraints: a certificate for a public site, even signed with the office CA's own key, is refused.
    const caKeyFile = readdirSync(join(server.dataDir, 'secrets', 'store'));
    expect(caKeyFile.length).toBeGreaterThan(0);
    for (const file of caKeyFile) expect(readFileSync(join(server.dataDir, 'secrets', 'store', file), 'utf8')).not.toContain('PRIVATE KEY');
    expect(readFileSync(databaseFile(server.dataDir)).toString('latin1')).not.toContain('PRIVATE KEY');
    const authority = await createAuthority({ constraints: { names: ['office-pc'], addresses: [] }, now: clock.now(), label: 'test' });
    const forged = await issueServerCertificate({ authority, names: ['www.bank.example'], addresses: [], now: clock.now() });
    const impostor = createHttpsServer({ key: forged.privateKeyPem, cert: forged.certificatePem }, (_q, r) => r.end('phished')).listen(
      0,
      '127.0.0.1',
    );
    await new Promise((resolve) => impostor.once('listening', resolve));
    const impostorPort = (impostor.address() as { port: number }).port;
    const error = await new Promise<Error>((resolve) => {
      httpsRequest(
        { host: '127.0.0.1', port: impostorPort, servername: 'www.bank.example', ca: authority.certificatePem, agent: false },
        () => resolve(new Error('accepted')),
      )
        .on('error', resolve)
        .end();
    });
    impostor.close();
    expect(error.message).toMatch(/permitted subtree violation/);
  });

  it('answers only to its own names (421), refuses foreign origins (403, /mcp included), and keeps docs, the sandbox and this machine’s actions off the LAN', async () => {
    const { ca } = await enable();
    const target = { address: '127.0.0.2', port, name: 'office-pc', ca };
    const wrongHost = await lanRequest(target, '/healthz', { headers: { host: `attacker.example:${port}` } });
    expect(wrongHost.status).toBe(421);
    expect(JSON.parse(wrongHost.body)).toMatchObject({ error: 'misdirected_request' });
    expect((await lanRequest(target, '/healthz', { headers: { host: 'office-pc:9999' } })).status).toBe(421);

    const origin = `https://office-pc:${port}`;
    const foreign = await lanRequest(target, '/mcp', {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: 'origin_not_allowed' });
    const signInForeign = await lanRequest(target, '/api/v1/console/session', {
      method: 'POST',
      headers: { origin: 'http://office-pc:8787', 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    expect(signInForeign.status).toBe(403);
    // Its own https origin is fine; /mcp still wants a token.
    expect(
      (await lanRequest(target, '/mcp', { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' })).status,
    ).toBe(401);

    for (const path of ['/api/v1/public/openapi.json', '/api/v1/public/docs', '/sandbox/insurer/']) {
      const response = await lanRequest(target, path);
      expect(response.status, path).toBe(403);
    }
    expect(JSON.parse((await lanRequest(target, '/api/v1/public/openapi.json')).body)).toMatchObject({ error: 'local_only' });
    // Every API route wants credentials there.
    expect((await lanRequest(target, '/api/v1/public/clients')).status).toBe(401);
    // First-run setup and the LAN switch: never from the LAN listener, even with a loopback peer as here.
    const setup = await lanRequest(target, '/api/v1/console/setup');
    expect(JSON.parse(setup.body)).toMatchObject({ allowed_here: false });
    // Loopback is untouched.
    expect((await server.request('/api/v1/public/openapi.json')).status).toBe(200);
  });

  it('a broker signs in over the LAN: __Host- Secure cookies, only honoured over HTTPS, and the audit log names the address and listener', async () => {
    const { ca } = await enable();
    const target = { address: '127.0.0.2', port, name: 'office-pc', ca };
    const origin = `https://office-pc:${port}`;
    const failed = await lanRequest(target, '/api/v1/console/session', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ADMIN, password: 'wrong password!' }),
    });
    expect(failed.status).toBe(401);
    const signIn = await lanRequest(target, '/api/v1/console/session', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    expect(signIn.status).toBe(200);
    const setCookies = [signIn.headers['set-cookie'] ?? []].flat();
    expect(setCookies).toHaveLength(2);
    for (const line of setCookies)
      expect(line).toMatch(/^__Host-courtier_(session|csrf)=[^;]+; Path=\/; (HttpOnly; )?SameSite=Lax; Max-Age=\d+; Secure$/);
    const cookie = setCookies.map((line) => line.split(';')[0]).join('; ');
    const csrf = /__Host-courtier_csrf=([^;]+)/.exec(cookie)?.[1] ?? '';

    expect(JSON.parse((await lanRequest(target, '/api/v1/console/session', { headers: { cookie } })).body)).toMatchObject({
      signed_in: true,
      user: { email: ADMIN.email },
    });
    // The same value without the prefix (a cookie planted over plain HTTP) opens nothing there.
    const unprefixed = cookie.replaceAll('__Host-', '');
    expect(JSON.parse((await lanRequest(target, '/api/v1/console/session', { headers: { cookie: unprefixed } })).body)).toMatchObject({
      signed_in: false,
    });

    // An admin signed in over the LAN still cannot switch LAN mode: that is for the machine itself.
    const change = await lanRequest(target, '/api/v1/console/lan', {
      method: 'PUT',
      headers: { cookie, origin, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    expect(change.status).toBe(403);
    expect(JSON.parse(change.body)).toMatchObject({ error: 'local_only' });

    const audit = listAudit(server.deps, cabinetId, { limit: 10 });
    expect(audit.find((e) => e.action === 'console.signed_in')).toMatchObject({
      actor: { kind: 'user', label: ADMIN.email },
      address: '127.0.0.1',
      listener: 'lan',
      result: 'success',
    });
    expect(audit.find((e) => e.action === 'console.sign_in_failed')).toMatchObject({
      actor: { kind: 'anonymous' },
      address: '127.0.0.1',
      listener: 'lan',
      result: 'failure',
      target: ADMIN.email,
    });
    expect(audit.find((e) => e.action === 'lan.enabled')).toMatchObject({ actor: { kind: 'cli' }, cabinet_scoped: false });
    expect(JSON.stringify(audit)).not.toContain(ADMIN.password);
  });

  it('an address that keeps failing to sign in is blocked on the LAN listener for an hour; the admin sees it and lifts it; loopback is never blocked', async () => {
    const { ca } = await enable();
    // Signed in first: here LAN and loopback clients share 127.0.0.1, and its sign-ins are about to be throttled.
    const admin = await consoleClient(server, ADMIN);
    const target = { address: '127.0.0.2', port, name: 'office-pc', ca };
    const origin = `https://office-pc:${port}`;
    const attempt = () =>
      lanRequest(target, '/api/v1/console/session', {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `guess-${Math.random()}@x.fr`, password: 'guessing!!' }),
      });
    for (let i = 0; i < 19; i++) expect((await attempt()).status).toBe(401);
    expect((await lanRequest(target, '/healthz')).status).toBe(200);
    expect((await attempt()).status).toBe(401);
    const blocked = await lanRequest(target, '/healthz');
    expect(blocked.status).toBe(403);
    expect(JSON.parse(blocked.body)).toMatchObject({ error: 'address_blocked' });
    expect(Number(blocked.headers['retry-after'])).toBe(3600);
    expect((await server.request('/healthz')).status).toBe(200);

    const list = (await (await admin.request('/api/v1/console/lan/blocks')).json()) as { data: { address: string; failures: number }[] };
    expect(list.data).toEqual([expect.objectContaining({ address: '127.0.0.1', failures: 20 })]);
    expect((await admin.request('/api/v1/console/lan/blocks/127.0.0.1', { method: 'DELETE' })).status).toBe(204);
    expect((await admin.request('/api/v1/console/lan/blocks/127.0.0.1', { method: 'DELETE' })).status).toBe(404);
    expect((await lanRequest(target, '/healthz')).status).toBe(200);
    const actions = listAudit(server.deps, cabinetId, { limit: 100 }).map((e) => e.action);
    expect(actions).toContain('lan.address_blocked');
    expect(actions).toContain('lan.address_unblocked');

    // A block runs out by itself.
    for (let i = 0; i < 21; i++) await attempt();
    expect((await lanRequest(target, '/healthz')).status).toBe(403);
    clock.advance(60 * 60_000 + 1);
    expect((await lanRequest(target, '/healthz')).status).toBe(200);
  });

  it('wrong passwords from the LAN lock the account there only: the person at the machine still signs in over loopback', async () => {
    const { ca } = await enable();
    const target = { address: '127.0.0.2', port, name: 'office-pc', ca };
    const origin = `https://office-pc:${port}`;
    const signIn = (password: string) =>
      lanRequest(target, '/api/v1/console/session', {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN.email, password }),
      });
    for (let i = 0; i < 5; i++) expect((await signIn('not the password')).status).toBe(401);
    const locked = await signIn(ADMIN.password);
    expect(locked.status).toBe(429);
    expect(JSON.parse(locked.body)).toMatchObject({ error: 'too_many_login_attempts' });
    // At the machine: the same account, the right password, signed in.
    const here = await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    expect(here.status).toBe(200);
  });

  it('an IPv6 address is blocked alone, and its whole /64 when the network kept failing', () => {
    blockLanAddress(server.deps, '2001:db8:1:2::10', 20);
    expect(() => checkLanAddress(server.deps, '2001:db8:1:2::10')).toThrow(/address_blocked|blocked/);
    expect(() => checkLanAddress(server.deps, '2001:db8:1:2::11')).not.toThrow();
    blockLanAddress(server.deps, throttleBucket('2001:db8:1:2::10'), 100);
    expect(() => checkLanAddress(server.deps, '2001:db8:1:2:ffff::7')).toThrow(/blocked/);
    expect(() => checkLanAddress(server.deps, '2001:db8:1:3::10')).not.toThrow();
  });

  it('ignores forwarding headers on the LAN listener, even with a trusted proxy configured: a client cannot choose its address there', async () => {
    const proxied = await startTestServer({
      network,
      clock,
      config: { policyFile, lanCheckIntervalMs: 600_000, trustProxy: ['127.0.0.1'] },
    });
    try {
      await initCabinet(proxied.deps, { cabinet: 'Cabinet Proxy', ...ADMIN });
      await changeLan(proxied.deps, { enabled: true, port }, network, CLI_ACTOR);
      await proxied.app.lanListener.reconcile();
      const ca = caCertificate(proxied.deps) ?? '';
      const target = { address: '127.0.0.2', port, name: 'office-pc', ca };
      const spoofed = await lanRequest(target, '/api/v1/console/session', {
        method: 'POST',
        headers: {
          origin: `https://office-pc:${port}`,
          'content-type': 'application/json',
          'x-forwarded-for': '203.0.113.9',
          'x-forwarded-proto': 'http',
        },
        body: JSON.stringify(ADMIN),
      });
      expect(spoofed.status).toBe(200);
      expect([spoofed.headers['set-cookie'] ?? []].flat().every((line) => line.endsWith('; Secure'))).toBe(true);
      const [signedIn] = listAudit(
        proxied.deps,
        ((await proxied.deps.db.sqlite.prepare('SELECT id FROM cabinets').get()) as { id: string }).id,
        { action: 'console.signed_in', limit: 1 },
      );
      expect(signedIn).toMatchObject({ address: '127.0.0.1', listener: 'lan' });
      // On loopback, the configured proxy is still believed.
      const viaProxy = await proxied.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
        body: JSON.stringify(ADMIN),
      });
      expect(viaProxy.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('OAuth metadata, issuer and resource follow the LAN URL the client used', async () => {
    const { ca } = await enable();
    for (const name of ['office-pc', '127.0.0.2']) {
      const base = `https://${name}:${port}`;
      const target = { address: '127.0.0.2', port, name: name === '127.0.0.2' ? undefined : name, ca };
      const resource = JSON.parse((await lanRequest(target, '/.well-known/oauth-protected-resource')).body) as {
        resource: string;
        authorization_servers: string[];
      };
      expect(resource).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
      const metadata = JSON.parse((await lanRequest(target, '/.well-known/oauth-authorization-server')).body) as Record<string, string>;
      expect(metadata).toMatchObject({ issuer: base, token_endpoint: `${base}/api/v1/mcp/oauth/token` });
    }
  });

  it('an address change re-issues the certificate without a restart; the CA stays, the old address is closed; 30 days before expiry it renews too', async () => {
    // Issued long ago, so that "now" is 29 days before its end (clients check validity on the wall clock).
    clock.set(Date.now() - (SERVER_CERTIFICATE_LIFETIME_DAYS - 29) * DAY);
    const { status, ca } = await enable();
    const first = status.certificate?.fingerprint_sha256;
    network.setAddresses(['127.0.0.3']);
    await server.app.lanListener.reconcile();
    const byName = await lanRequest({ address: '127.0.0.3', port, name: 'office-pc', ca }, '/healthz');
    expect(byName.status).toBe(200);
    expect(byName.certificateFingerprint).not.toBe(first);
    expect((await lanRequest({ address: '127.0.0.3', port, ca }, '/healthz')).status).toBe(200);
    await expect(lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca }, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    expect(caCertificate(server.deps)).toBe(ca);

    const second = byName.certificateFingerprint;
    await server.app.lanListener.reconcile();
    expect((await lanRequest({ address: '127.0.0.3', port, name: 'office-pc', ca }, '/healthz')).certificateFingerprint).toBe(second);
    clock.set(Date.now());
    await server.app.lanListener.reconcile();
    const renewed = await lanRequest({ address: '127.0.0.3', port, name: 'office-pc', ca }, '/healthz');
    expect(renewed.certificateFingerprint).not.toBe(second);

    const issued = listAudit(server.deps, cabinetId, { action: 'lan.certificate_issued', limit: 10 }).map((e) => e.details.reason);
    expect(issued).toEqual(['expiring', 'addresses_changed', 'none_yet']);
  });

  it('disabled: the LAN address refuses connections at once, loopback carries on', async () => {
    const { ca } = await enable();
    expect((await lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca }, '/healthz')).status).toBe(200);
    await changeLan(server.deps, { enabled: false }, network, CLI_ACTOR);
    await server.app.lanListener.reconcile();
    await expect(lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca }, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    expect((await server.request('/healthz')).status).toBe(200);
    expect(lanStatus(server.deps, network)).toMatchObject({ enabled: false });
  });

  it('an IT-provided certificate is served as it is, and never regenerated', async () => {
    const dir = tempDir('courtier-it-cert-');
    const authority = await createAuthority({ constraints: { names: ['cabinet.example'], addresses: [] }, now: clock.now(), label: 'IT' });
    const provided = await issueServerCertificate({
      authority,
      names: ['courtier.cabinet.example'],
      addresses: ['127.0.0.2'],
      now: clock.now(),
      lifetimeDays: 90,
    });
    writeFileSync(join(dir, 'cert.pem'), provided.certificatePem);
    writeFileSync(join(dir, 'key.pem'), provided.privateKeyPem);
    const { status } = await enable({ enabled: true, certificateFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') });
    expect(status.certificate).toMatchObject({ source: 'provided', names: ['courtier.cabinet.example'] });
    const target = { address: '127.0.0.2', port, name: 'courtier.cabinet.example', ca: authority.certificatePem };
    expect((await lanRequest(target, '/healthz')).certificateFingerprint).toBe(fingerprintOfPem(provided.certificatePem));
    clock.advance(80 * DAY);
    network.setAddresses(['127.0.0.2', '127.0.0.4']);
    await server.app.lanListener.reconcile();
    expect((await lanRequest(target, '/healthz')).certificateFingerprint).toBe(fingerprintOfPem(provided.certificatePem));

    await expect(
      changeLan(
        server.deps,
        { enabled: true, port, certificateFile: join(dir, 'cert.pem'), keyFile: join(dir, 'cert.pem') },
        network,
        CLI_ACTOR,
      ),
    ).rejects.toMatchObject({ code: 'validation_error' });

    // A wildcard certificate: any one-label name under it is answered, and no URL is made of the wildcard.
    const wildcard = await issueServerCertificate({ authority, names: ['*.cabinet.example'], addresses: [], now: Date.now() });
    writeFileSync(join(dir, 'wildcard.pem'), wildcard.certificatePem);
    writeFileSync(join(dir, 'wildcard-key.pem'), wildcard.privateKeyPem);
    const { status: wildStatus } = await enable({
      enabled: true,
      certificateFile: join(dir, 'wildcard.pem'),
      keyFile: join(dir, 'wildcard-key.pem'),
    });
    expect(wildStatus.urls).toEqual([`https://127.0.0.2:${port}`, `https://127.0.0.4:${port}`]);
    expect((await lanRequest({ ...target, name: 'courtier.cabinet.example' }, '/healthz')).status).toBe(200);
    expect(
      (await lanRequest({ ...target, name: 'courtier.cabinet.example' }, '/healthz', { headers: { host: `a.b.cabinet.example:${port}` } }))
        .status,
    ).toBe(421);
  });

  it('the IT policy: allowLanSharing false refuses and closes it; a preset opens it with no command and cannot be changed here', async () => {
    const { ca } = await enable();
    writeFileSync(policyFile, JSON.stringify({ allowLanSharing: false }));
    await server.app.lanListener.reconcile();
    await expect(lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca }, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    await expect(changeLan(server.deps, { enabled: true }, network, CLI_ACTOR)).rejects.toMatchObject({ code: 'lan_sharing_forbidden' });
    expect(lanStatus(server.deps, network)).toMatchObject({ enabled: false, allowed: false });

    const presetPort = await freePort();
    writeFileSync(policyFile, JSON.stringify({ lan: { enabled: true, port: presetPort, names: ['courtier.cabinet.lan'] } }));
    await server.app.lanListener.reconcile();
    const response = await lanRequest({ address: '127.0.0.2', port: presetPort, name: 'courtier.cabinet.lan', ca }, '/healthz');
    expect(response.status).toBe(200);
    await expect(changeLan(server.deps, { enabled: false }, network, CLI_ACTOR)).rejects.toMatchObject({
      code: 'lan_managed_by_policy',
      details: { preset: ['enabled'] },
    });
    expect(lanStatus(server.deps, network)).toMatchObject({ enabled: true, managed_by_policy: true, port: presetPort });

    // A preset of some fields leaves the others to the office: here only the port is IT's.
    writeFileSync(policyFile, JSON.stringify({ lan: { port: presetPort } }));
    await expect(changeLan(server.deps, { enabled: true, names: ['courtier.home.arpa'] }, network, CLI_ACTOR)).resolves.toMatchObject({
      enabled: true,
      port: presetPort,
      names: ['courtier.home.arpa'],
    });
    await expect(changeLan(server.deps, { enabled: true, port: presetPort + 1 }, network, CLI_ACTOR)).rejects.toMatchObject({
      code: 'lan_managed_by_policy',
      details: { preset: ['port'] },
    });

    // A policy file that cannot be used whole (a rewrite in progress, a typo) keeps LAN sharing off: it fails closed.
    writeFileSync(policyFile, '{"allowLanSharing": fal');
    await server.app.lanListener.reconcile();
    await expect(lanRequest({ address: '127.0.0.2', port: presetPort, name: 'courtier.home.arpa', ca }, '/healthz')).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(lanStatus(server.deps, network).problems.join(' ')).toMatch(
      /cannot be used as it is, so office LAN sharing stays off until it is fixed: .*not valid JSON/,
    );
    await expect(changeLan(server.deps, { enabled: true }, network, CLI_ACTOR)).rejects.toMatchObject({ code: 'lan_sharing_forbidden' });
    writeFileSync(
      policyFile,
      JSON.stringify({ lan: { enabled: true, port: presetPort, names: ['courtier.cabinet.lan'], colour: 'blue' } }),
    );
    expect(lanStatus(server.deps, network)).toMatchObject({ enabled: false, allowed: false });
  });

  it('refuses an address the machine does not have and a name outside the CA, saying what would do', async () => {
    await expect(changeLan(server.deps, { enabled: true, port, addresses: ['10.9.9.9'] }, network, CLI_ACTOR)).rejects.toMatchObject({
      code: 'lan_address_unavailable',
      details: { available: ['127.0.0.2'] },
    });
    await enable();
    await expect(
      changeLan(server.deps, { enabled: true, port, names: ['courtier.cabinet-martin.fr'] }, network, CLI_ACTOR),
    ).rejects.toMatchObject({ code: 'lan_name_outside_ca' });
    // A public address the office later gets is left out of the certificate, and the status says why.
    network.setAddresses(['127.0.0.2', '198.51.100.7']);
    expect(lanStatus(server.deps, network).problems.join(' ')).toMatch(/198\.51\.100\.7 is outside what the office CA may certify/);
    network.setAddresses(['127.0.0.2']);
    // A local suffix stays within the CA; a new CA takes any name (brokers trust it again).
    await expect(changeLan(server.deps, { enabled: true, port, names: ['courtier.home.arpa'] }, network, CLI_ACTOR)).resolves.toMatchObject(
      { enabled: true },
    );
    const before = caCertificate(server.deps);
    const renewed = await changeLan(
      server.deps,
      { enabled: true, port, names: ['courtier.cabinet-martin.fr'], newAuthority: true },
      network,
      CLI_ACTOR,
    );
    expect(caCertificate(server.deps)).not.toBe(before);
    expect(renewed.certificate?.names).toContain('courtier.cabinet-martin.fr');
  });

  it('the console: an admin at the machine reads and switches LAN mode over loopback, applied before the answer; bad input is a 400', async () => {
    const admin = await consoleClient(server, ADMIN);
    const off = await admin.request('/api/v1/console/lan');
    expect(off.status).toBe(200);
    expect(await off.json()).toMatchObject({ enabled: false, allowed: true, ca_fingerprint_sha256: null });
    const on = await admin.request('/api/v1/console/lan', { method: 'PUT', json: { enabled: true, port } });
    expect(on.status).toBe(200);
    const status = (await on.json()) as { enabled: boolean; ca_fingerprint_sha256: string };
    expect(status.enabled).toBe(true);
    // Applied at once: the listener is up when the answer arrives.
    expect(
      (await lanRequest({ address: '127.0.0.2', port, name: 'office-pc', ca: caCertificate(server.deps) ?? '' }, '/healthz')).status,
    ).toBe(200);
    const bad = await admin.request('/api/v1/console/lan', { method: 'PUT', json: { enabled: true, port: 70000, names: ['not a name'] } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'validation_error' });
    // Plain HTTP's port is no port for the office's HTTPS.
    const http = await admin.request('/api/v1/console/lan', { method: 'PUT', json: { enabled: true, port: 80, names: [] } });
    expect(http.status).toBe(400);
    expect(await http.json()).toMatchObject({ error: 'validation_error', details: [{ path: 'body.port' }] });
  });
});
