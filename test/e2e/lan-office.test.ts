// @module-tag browser
import { execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_ARGS } from '../../server/robots/browser.js';
import { packageRoot } from '../../server/paths.js';
import { createOfficeLan, namespacesUnavailable, sameSubnet, type OfficeLan } from '../helpers/netns.js';
import { tempDir } from '../helpers/server.js';
import { createAuthority, issueServerCertificate } from '../../server/lan/certificates.js';

/**
 * The office LAN for real: the office machine and two brokers' machines are network namespaces
 * with their own addresses on one bridge; the service runs as `courtier serve` in the office's;
 * brokers use Chromium (trusting the office CA through its NSS db) and Node clients (through
 * NODE_EXTRA_CA_CERTS), by the office's name from their /etc/hosts.
 */
const unavailable = namespacesUnavailable();
if (unavailable) console.warn(`office LAN tests skipped: ${unavailable}`);

const CLI = join(packageRoot(), 'dist', 'server', 'cli.js');
const REQUEST = join(packageRoot(), 'test', 'fixtures', 'lan-request.mjs');
const MCP_CLIENT = join(packageRoot(), 'test', 'fixtures', 'lan-mcp-client.ts');
const MDNS_BROWSE = join(packageRoot(), 'test', 'fixtures', 'mdns-browse.mjs');
const OFFICE_NAME = 'courtier.office.lan';
const LAN_PORT = 8443;
const ADMIN = { email: 'admin@cabinet-martin.fr', password: 'correct horse battery' };
const BROKER = { email: 'broker@cabinet-martin.fr', password: 'another horse battery' };

interface Answer {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string;
  error?: string;
  certificate?: { fingerprint: string; san: string } | null;
}

/** Retries an assertion until it holds (the service checks its settings and addresses every 200 ms here). */
async function retried(assertion: () => void, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      assertion();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe.skipIf(unavailable !== null)('office LAN across network namespaces', () => {
  let lan: OfficeLan;
  let server: ChildProcess;
  let serverOutput = '';
  let dataDir: string;
  let caFile: string;
  let cabinetId: string;
  let browser: Browser;
  let scratch: string;
  let env: NodeJS.ProcessEnv;

  const courtier = (args: string[], input?: string) => lan.run('office', process.execPath, [CLI, ...args], { env, input });
  const officeUrl = (path: string, host = OFFICE_NAME) => `https://${host}:${LAN_PORT}${path}`;
  const fromBroker = (
    request: { url: string; method?: string; headers?: Record<string, string>; body?: string },
    broker = 'broker1',
  ): Answer =>
    JSON.parse(lan.run(broker, process.execPath, [REQUEST, JSON.stringify(request)], { env: { NODE_EXTRA_CA_CERTS: caFile } })) as Answer;
  const fromOffice = (request: { url: string; method?: string; headers?: Record<string, string>; body?: string }): Answer =>
    JSON.parse(lan.run('office', process.execPath, [REQUEST, JSON.stringify(request)])) as Answer;

  beforeAll(async () => {
    lan = createOfficeLan({ office: 10, broker1: 21, broker2: 22 });
    lan.setNames({ [OFFICE_NAME]: lan.address('office') });
    scratch = tempDir('courtier-lan-e2e-');
    dataDir = join(scratch, 'data');
    caFile = join(scratch, 'office-ca.pem');
    env = {
      COURTIER_DATA_DIR: dataDir,
      COURTIER_POLICY_FILE: join(scratch, 'policy.json'),
      COURTIER_LAN_CHECK_INTERVAL_MS: '200',
      COURTIER_LOG_LEVEL: 'info',
    };
    cabinetId = (
      JSON.parse(
        courtier(['init', '--cabinet', 'Cabinet Martin', '--email', ADMIN.email, '--password-stdin', '--json'], ADMIN.password),
      ) as { cabinet_id: string }
    ).cabinet_id;
    server = lan.spawn('office', process.execPath, [CLI, 'serve', '--port', '8787'], env);
    server.stdout?.on('data', (c: Buffer) => (serverOutput += c.toString()));
    server.stderr?.on('data', (c: Buffer) => (serverOutput += c.toString()));
    await retried(() => expect(serverOutput).toContain('Courtier listening on http://127.0.0.1:8787'), 20_000);

    const status = JSON.parse(courtier(['lan', 'enable', '--name', OFFICE_NAME, '--port', String(LAN_PORT), '--json'])) as {
      urls: string[];
    };
    expect(status.urls).toContain(`https://${OFFICE_NAME}:${LAN_PORT}`);
    courtier(['lan', 'ca', '--out', caFile]);
    await retried(() => expect(fromBroker({ url: officeUrl('/healthz') }).status).toBe(200), 10_000);

    // A broker's Chromium, run in broker1's namespace, with the office CA in its NSS trust store.
    const home = join(scratch, 'broker1-home');
    mkdirSync(join(home, '.pki', 'nssdb'), { recursive: true });
    execFileSync('certutil', ['-d', `sql:${join(home, '.pki', 'nssdb')}`, '-N', '--empty-password']);
    execFileSync('certutil', ['-d', `sql:${join(home, '.pki', 'nssdb')}`, '-A', '-t', 'C,,', '-n', 'Courtier office CA', '-i', caFile]);
    const wrapper = join(scratch, 'chromium-in-broker1.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${lan.namespace('broker1')} /usr/bin/chromium "$@"\n`);
    chmodSync(wrapper, 0o755);
    browser = await chromium.launch({
      executablePath: wrapper,
      headless: true,
      args: BROWSER_ARGS,
      env: { ...process.env, HOME: home },
      timeout: 30_000,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    await new Promise((resolve) => (server?.exitCode !== null ? resolve(null) : server.once('exit', resolve)));
    lan?.destroy();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 30_000);

  it('a broker’s Chromium signs in over HTTPS with no certificate warning, in a secure context', async () => {
    const context = await browser.newContext({ locale: 'en-GB' });
    const page = await context.newPage();
    const response = await page.goto(officeUrl('/console/'));
    expect(response?.status()).toBe(200);
    await page.getByLabel('Email').waitFor();
    expect(
      await page.evaluate('({ secure: window.isSecureContext, subtle: typeof crypto.subtle?.digest, protocol: location.protocol })'),
    ).toEqual({ secure: true, subtle: 'function', protocol: 'https:' });
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/(?!login)/);
    const cookies = await context.cookies();
    expect(cookies.map((c) => c.name).sort()).toEqual(['__Host-courtier_csrf', '__Host-courtier_session']);
    expect(cookies.every((c) => c.secure)).toBe(true);
    // The console's own calls work there (CSRF and all): add a user from the broker's browser.
    const created = await page.evaluate(`(async () => {
      const csrf = document.cookie.split('; ').find((c) => c.startsWith('__Host-courtier_csrf='))?.split('=')[1] ?? '';
      const r = await fetch('/api/v1/console/users', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: ${JSON.stringify(JSON.stringify({ ...BROKER, role: 'broker' }))} });
      return r.status;
    })()`);
    expect(created).toBe(201);
    await context.close();

    // The audit log has the broker's sign-in, from broker1's address, on the LAN listener.
    const audit = JSON.parse(courtier(['audit', 'list', '--cabinet', cabinetId, '--action', 'console.signed_in', '--json'])) as {
      data: { address: string; listener: string; actor: { label: string } }[];
    };
    expect(audit.data[0]).toMatchObject({ address: lan.address('broker1'), listener: 'lan', actor: { label: ADMIN.email } });
  });

  it('the official MCP SDK client on a broker’s machine discovers, registers, gets consent through the browser and calls whoami over the LAN URL', async () => {
    const assistant = lan.spawn('broker1', process.execPath, ['--import', 'tsx', MCP_CLIENT, officeUrl('/mcp')], {
      NODE_EXTRA_CA_CERTS: caFile,
    });
    let errors = '';
    assistant.stderr?.on('data', (c: Buffer) => (errors += c.toString()));
    const lines = createInterface({ input: assistant.stdout as NodeJS.ReadableStream });
    let result = '';
    for await (const line of lines) {
      if (line.startsWith('AUTHORIZE ')) {
        const authorizationUrl = new URL(line.slice('AUTHORIZE '.length));
        expect(authorizationUrl.origin).toBe(`https://${OFFICE_NAME}:${LAN_PORT}`);
        expect(authorizationUrl.searchParams.get('resource')).toBe(officeUrl('/mcp'));
        const context = await browser.newContext({ locale: 'en-GB' });
        const page = await context.newPage();
        await page.goto(authorizationUrl.href);
        await page.getByLabel('Email').fill(BROKER.email);
        await page.getByLabel('Password').fill(BROKER.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        expect(await page.locator('.host').textContent()).toMatch(/^127\.0\.0\.1:\d+$/);
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.waitForURL(/127\.0\.0\.1:\d+\/callback/);
        await context.close();
      } else if (line.startsWith('RESULT ') || line.startsWith('ERROR ')) {
        result = line;
        break;
      }
    }
    expect(result, errors).toMatch(/^RESULT /);
    const whoami = JSON.parse(
      (JSON.parse(result.slice('RESULT '.length)) as { content: { text: string }[] }).content[0]?.text ?? '{}',
    ) as Record<string, unknown>;
    expect(whoami).toMatchObject({
      cabinet: { id: cabinetId, name: 'Cabinet Martin' },
      client: { client_name: 'Assistant on a broker PC' },
    });
  }, 60_000);

  it('refuses a wrong Host (421), a foreign Origin (403, /mcp too), first-run setup and the desktop sign-in from a broker’s machine', () => {
    const wrongHost = fromBroker({ url: officeUrl('/healthz'), headers: { host: `rebind.attacker.example:${LAN_PORT}` } });
    expect(wrongHost).toMatchObject({ status: 421 });
    expect(JSON.parse(wrongHost.body ?? '{}')).toMatchObject({ error: 'misdirected_request' });
    for (const path of ['/mcp', '/api/v1/console/session']) {
      const foreign = fromBroker({
        url: officeUrl(path),
        method: 'POST',
        headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(foreign, path).toMatchObject({ status: 403 });
      expect(JSON.parse(foreign.body ?? '{}')).toMatchObject({ error: 'origin_not_allowed' });
    }
    const setup = fromBroker({
      url: officeUrl('/api/v1/console/setup'),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cabinet: 'Squat', email: 'x@y.fr', password: 'a long password here' }),
    });
    expect(setup).toMatchObject({ status: 403 });
    expect(fromBroker({ url: officeUrl('/console/desktop-login?token=abc') })).toMatchObject({ status: 403 });
    // The loopback listener is not on the LAN at all.
    expect(fromBroker({ url: `http://${lan.address('office')}:8787/healthz` })).toMatchObject({ error: 'ECONNREFUSED' });
  });

  it('an mDNS browse from a broker’s machine finds the service, its port, console path and CA fingerprint', () => {
    const found = JSON.parse(lan.run('broker2', process.execPath, [MDNS_BROWSE, '8', 'first'])) as {
      name: string;
      port: number;
      addresses: string[];
      txt: Record<string, string>;
    }[];
    const status = JSON.parse(courtier(['lan', 'status', '--json'])) as { ca_fingerprint_sha256: string };
    expect(found[0]).toMatchObject({
      port: LAN_PORT,
      txt: { path: '/console/', ca_sha256: status.ca_fingerprint_sha256.replaceAll(':', '').toLowerCase() },
    });
    expect(found[0]?.name).toMatch(/^Courtier \(/);
    expect(found[0]?.addresses).toContain(lan.address('office'));
  });

  it('the office’s address changes: a new certificate is served without a restart, and clients that trust the CA carry on by name', async () => {
    const before = fromBroker({ url: officeUrl('/healthz') });
    const oldAddress = lan.address('office');
    const newAddress = sameSubnet(oldAddress, 11);
    lan.readdress('office', newAddress);
    lan.setNames({ [OFFICE_NAME]: newAddress });
    await retried(() => {
      const after = fromBroker({ url: officeUrl('/healthz') }, 'broker2');
      expect(after.status).toBe(200);
      expect(after.certificate?.san).toContain(`IP Address:${newAddress}`);
    }, 15_000);
    const after = fromBroker({ url: officeUrl('/healthz') });
    expect(after.certificate?.fingerprint).not.toBe(before.certificate?.fingerprint);
    expect(fromBroker({ url: `https://${newAddress}:${LAN_PORT}/healthz` })).toMatchObject({ status: 200 });
    await retried(() => expect(serverOutput).toContain(`office LAN listener on https://${newAddress}:${LAN_PORT}`), 5_000);
    expect(server.exitCode).toBeNull();
  });

  it('an IT-provided certificate is served as it is', async () => {
    const itAuthority = await createAuthority({
      constraints: { names: ['office.lan'], addresses: [] },
      now: Date.now(),
      label: 'Cabinet Martin IT',
    });
    const leaf = await issueServerCertificate({
      authority: itAuthority,
      names: [OFFICE_NAME],
      addresses: [],
      now: Date.now(),
      lifetimeDays: 90,
    });
    const files = { cert: join(scratch, 'it-cert.pem'), key: join(scratch, 'it-key.pem'), ca: join(scratch, 'it-ca.pem') };
    writeFileSync(files.cert, leaf.certificatePem);
    writeFileSync(files.key, leaf.privateKeyPem, { mode: 0o600 });
    writeFileSync(files.ca, itAuthority.certificatePem);
    const status = JSON.parse(
      courtier(['lan', 'enable', '--cert', files.cert, '--key', files.key, '--port', String(LAN_PORT), '--json']),
    ) as { certificate: { source: string; fingerprint_sha256: string } };
    expect(status.certificate.source).toBe('provided');
    await retried(() => {
      const answer = JSON.parse(
        lan.run('broker1', process.execPath, [REQUEST, JSON.stringify({ url: officeUrl('/healthz') })], {
          env: { NODE_EXTRA_CA_CERTS: files.ca },
        }),
      ) as Answer;
      expect(answer.status).toBe(200);
      expect(answer.certificate?.fingerprint).toBe(status.certificate.fingerprint_sha256);
    }, 10_000);
  });

  it('LAN mode disabled: brokers cannot connect, the machine itself still can', async () => {
    courtier(['lan', 'disable']);
    await retried(() => expect(fromBroker({ url: officeUrl('/healthz') })).toMatchObject({ error: 'ECONNREFUSED' }), 10_000);
    expect(fromOffice({ url: 'http://127.0.0.1:8787/healthz' })).toMatchObject({ status: 200 });
  });
});
