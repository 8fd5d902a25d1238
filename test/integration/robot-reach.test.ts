// @module-tag browser
/**
 * A robot's browser loads only what its insurer's manifest declares: a job of an insurer with a
 * reach, run by the worker in real Chromium, opens a page of its declared origin that asks a second
 * local server (another port, so another origin) for an image, a script, a frame, a fetch and a
 * WebSocket, then navigates there. The second server never hears of it, the log names its origin
 * once, and the declared page loads. A redirect's next hop, which Playwright follows without routing
 * it, is logged, and what its page asks for next is blocked.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobSchema, TERMINAL_STATUSES, type Job } from '../../shared/automation.js';
import { testLoginResultSchema } from '../../shared/console-insurers.js';
import { RobotError, type Page } from '@courtier/adapter-kit';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { consoleClient } from '../helpers/console.js';
import { createUser } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_PDF, type Script } from '../helpers/test-insurer.js';

/** A local web server that counts what it was asked, requests and WebSocket handshakes alike. */
interface Site {
  origin: string;
  asked: string[];
  close(): Promise<void>;
}

/** The smallest WebSocket answer: the handshake, then one text frame "hello" (under 126 bytes, unmasked). */
function greetSocket(request: IncomingMessage, socket: Duplex): void {
  const accept = createHash('sha1')
    .update(`${String(request.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.write(Buffer.concat([Buffer.from([0x81, 5]), Buffer.from('hello')]));
}

async function startSite(
  answer: (path: string) => { status?: number; type?: string; body?: string | Buffer; location?: string },
): Promise<Site> {
  const asked: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    asked.push(path);
    const { status = 200, type = 'text/html; charset=utf-8', body = '', location } = answer(path);
    response.writeHead(status, { 'Content-Type': type, ...(location ? { Location: location } : {}) });
    response.end(body);
  });
  const sockets = new Set<Duplex>();
  server.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    asked.push(`upgrade ${request.url ?? '/'}`);
    sockets.add(socket);
    greetSocket(request, socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** The declared portal's page: its own image and socket, and five ways of reaching the other site. */
function portalPage(other: string, self: string): string {
  return `<!doctype html><title>Portail déclaré</title><h1>Portail déclaré</h1>
<script>
window.results = {};
window.settled = 0;
const done = (what, how) => { window.results[what] = how; window.settled += 1; };
</script>
<img src="/logo.png" onload="done('own image', 'loaded')" onerror="done('own image', 'failed')">
<img src="${other}/pixel.png?client=jeanne.martin" onload="done('image', 'loaded')" onerror="done('image', 'failed')">
<script src="${other}/tracker.js?client=jeanne.martin" onload="done('script', 'loaded')" onerror="done('script', 'failed')"></script>
<iframe src="${other}/frame?client=jeanne.martin" onload="done('frame', 'ended')"></iframe>
<script>
fetch('${other}/collect?email=jeanne.martin%40example.fr').then(() => done('fetch', 'loaded'), () => done('fetch', 'failed'));
const theirs = new WebSocket('${other.replace('http:', 'ws:')}/socket?client=jeanne.martin');
theirs.onmessage = () => done('socket', 'loaded');
theirs.onclose = () => { if (!('socket' in window.results)) done('socket', 'failed'); };
const ours = new WebSocket('${self.replace('http:', 'ws:')}/socket');
ours.onmessage = (event) => done('own socket', event.data);
ours.onclose = () => { if (!('own socket' in window.results)) done('own socket', 'failed'); };
</script>`;
}
const SETTLED = 7;

let server: TestServer;
let portal: Site;
let other: Site;
const reachco = createTestInsurer('reachco', 'Reach Assurances');
const openco = createTestInsurer('openco', 'Open Assurances');

beforeAll(async () => {
  other = await startSite((path) =>
    path.startsWith('/redirected') ? { body: '<title>Redirigé</title><img src="/tracker.png">' } : { body: '<title>Autre site</title>' },
  );
  portal = await startSite((path) => {
    if (path === '/logo.png') return { type: 'image/png', body: Buffer.from(PIXEL, 'base64') };
    if (path === '/page') return { body: portalPage(other.origin, portal.origin) };
    if (path === '/redirect') return { status: 302, location: `${other.origin}/redirected?client=jeanne.martin` };
    return { body: '<title>Accueil</title><h1>Accueil</h1>' };
  });
  reachco.reach = { origins: [portal.origin], prefixes: () => [] };
  server = await startTestServer({ insurers: [reachco, openco], config: { tarificationQuotaPerHour: 1000 } });
}, 30_000);
afterAll(async () => {
  await server?.close();
  await portal?.close();
  await other?.close();
});

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 100);
  for (const code of ['reachco', 'openco']) setInsurerCredentials(server.deps, id, code, { login: 'broker-42', password: 's3cret!' });
  return apiClient(server, server.createKey(id).key);
}

let n = 0;
/** Enqueues a job of that insurer and waits for its end (polling the API, as a client does). */
async function runJob(api: ReturnType<typeof apiClient>, compagnie: string): Promise<Job> {
  n += 1;
  const enqueued = await api.post('/automation/tarifications', {
    compagnie,
    produit: 'auto',
    dicData: { postcode: String(30000 + n), birth_date: '1984-03-09', formula: 'tiers' },
  });
  expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  const id = String(enqueued.body.job_id);
  for (let i = 0; i < 400; i++) {
    const job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
    if (TERMINAL_STATUSES.includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${id} did not end`);
}

interface OutsideReachLine {
  job_id: string;
  compagnie: string;
  origin: string;
  blocked: boolean;
}

/** The server's log lines about a job's origins outside its reach, as objects. */
function outsideLines(jobId: string): OutsideReachLine[] {
  return server.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes(jobId) && line.includes('does not declare'))
    .map((line) => JSON.parse(line) as OutsideReachLine);
}

/** Where a navigation went: 'loaded' with the page's title, or the error's first line. */
async function navigate(page: Page, url: string): Promise<string> {
  return page.goto(url).then(
    async () => `loaded ${await page.title()}`,
    (err: Error) => err.message.split('\n')[0] ?? '',
  );
}

const priced = { tarif_eur: 100, pdf: TEST_PDF, outcome: 'complete' } as const;

describe('a robot’s browser and its insurer’s reach (real Chromium)', () => {
  it('blocks and logs what the manifest does not declare, once per origin, and the declared page loads', async () => {
    const api = await cabinet();
    const seen: { results?: unknown; title?: string; away?: string } = {};
    const script: Script = async (ctx) => {
      const page = await ctx.openPage();
      await page.goto(`${portal.origin}/page`);
      await page.waitForFunction(`window.settled === ${SETTLED}`);
      seen.results = await page.evaluate('window.results');
      seen.title = await page.title();
      seen.away = await navigate(page, `${other.origin}/landing?client=jeanne.martin`);
      throw new RobotError('technical', 'insurer_unavailable', 'The portal could not be reached.');
    };
    reachco.queue(script);
    const job = await runJob(api, 'reachco');

    expect(seen.title).toBe('Portail déclaré');
    expect(seen.results).toEqual({
      'own image': 'loaded',
      'own socket': 'hello',
      image: 'failed',
      script: 'failed',
      fetch: 'failed',
      socket: 'failed',
      // A frame's load event comes for its error page too.
      frame: 'ended',
    });
    expect(seen.away).toContain('net::ERR_BLOCKED_BY_CLIENT');
    expect(other.asked).toEqual([]);
    expect(portal.asked).toEqual(expect.arrayContaining(['/page', '/logo.png', 'upgrade /socket']));

    expect(outsideLines(job.job_id)).toEqual([expect.objectContaining({ compagnie: 'reachco', origin: other.origin, blocked: true })]);
    expect(server.logs.join('').includes('jeanne')).toBe(false);

    expect(job).toMatchObject({ status: 'failed', error: { code: 'insurer_unavailable' } });
    // The image, the script, the frame, the fetch, the socket and the navigation.
    expect(job.error?.message).toBe(
      `The portal could not be reached. The insurer's pages asked for ${other.origin}, which its adapter does not declare (6 requests).`,
    );
  });

  it('a redirect’s next hop goes out but is logged, and what its page asks for next is blocked', async () => {
    const api = await cabinet();
    let landed = '';
    reachco.queue(async (ctx) => {
      const page = await ctx.openPage();
      await page.goto(`${portal.origin}/redirect`);
      landed = await page.title();
      throw new RobotError('technical', 'layout_changed', 'An unexpected page.');
    });
    const job = await runJob(api, 'reachco');
    expect(landed).toBe('Redirigé');
    expect(other.asked).toEqual(['/redirected?client=jeanne.martin']);
    expect(outsideLines(job.job_id)).toEqual([expect.objectContaining({ compagnie: 'reachco', origin: other.origin, blocked: false })]);
    expect(job.error?.message).toBe(
      `An unexpected page. The insurer's pages asked for ${other.origin}, which its adapter does not declare (2 requests).`,
    );
    other.asked.length = 0;
  });

  it('a parked context keeps its filter for the login’s next job, which is told of what it was refused', async () => {
    const api = await cabinet();
    let resumedAt = '';
    let fetched = '';
    reachco.queue(
      async (ctx) => {
        await (await ctx.openPage()).goto(`${portal.origin}/home`);
        return priced;
      },
      async (ctx) => {
        const page = await ctx.openPage();
        resumedAt = page.url();
        fetched = await page.evaluate(`fetch('${other.origin}/collect').then(() => 'loaded', () => 'failed')`);
        return priced;
      },
    );
    const first = await runJob(api, 'reachco');
    const second = await runJob(api, 'reachco');
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    expect(resumedAt).toBe(`${portal.origin}/home`);
    expect(fetched).toBe('failed');
    expect(other.asked).toEqual([]);
    expect(outsideLines(second.job_id)).toEqual([expect.objectContaining({ compagnie: 'reachco', origin: other.origin, blocked: true })]);
    expect(outsideLines(first.job_id)).toEqual([]);

    // An updated adapter (another version, maybe another reach) starts from a fresh context.
    let afterUpdate = '';
    reachco.queue(async (ctx) => {
      afterUpdate = (await ctx.openPage()).url();
      return priced;
    });
    reachco.version = '1.1.0';
    try {
      expect((await runJob(api, 'reachco')).status).toBe('completed');
    } finally {
      reachco.version = '1.0.0';
    }
    expect(afterUpdate).toBe('about:blank');
  });

  it('the console’s Test login runs under the same filter, and its answer says what was refused', async () => {
    const user = await createUser(server, 'Cabinet Test login');
    setInsurerCredentials(server.deps, user.cabinetId, 'reachco', { login: 'broker-42', password: 's3cret!' });
    reachco.verifyLogin = async (ctx) => {
      const page = await ctx.openPage();
      await page.goto(`${portal.origin}/home`);
      if ((await navigate(page, `${other.origin}/sso?login=broker-42`)).startsWith('loaded')) return { mfa: false };
      throw new RobotError('technical', 'insurer_unavailable', 'The sign-in page could not be reached.');
    };
    try {
      const admin = await consoleClient(server, user);
      const res = await admin.request('/api/v1/console/insurers/reachco/test-login', { method: 'POST' });
      expect(res.status).toBe(200);
      expect(testLoginResultSchema.parse(await res.json())).toEqual({
        ok: false,
        code: 'insurer_unavailable',
        message: `The sign-in page could not be reached. The insurer's pages asked for ${other.origin}, which its adapter does not declare (1 request).`,
      });
    } finally {
      delete reachco.verifyLogin;
    }
    expect(other.asked).toEqual([]);
    expect(outsideLines('login-check-')).toEqual([expect.objectContaining({ compagnie: 'reachco', origin: other.origin, blocked: true })]);
  });

  it('an insurer given in code without a reach is not restricted', async () => {
    const api = await cabinet();
    let away = '';
    openco.queue(async (ctx) => {
      away = await navigate(await ctx.openPage(), `${other.origin}/landing`);
      return priced;
    });
    const job = await runJob(api, 'openco');
    expect(job.status).toBe('completed');
    expect(away).toBe('loaded Autre site');
    expect(other.asked).toContain('/landing');
    expect(outsideLines(job.job_id)).toEqual([]);
  });
});
