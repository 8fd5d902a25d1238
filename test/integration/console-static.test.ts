import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetFile, CONSOLE_CSP, consoleRoutes } from '../../server/console/static.js';
import { packageRoot } from '../../server/paths.js';
import { errorsPlugin } from '../../server/plugins/errors.js';
import { errorBodySchema } from '../../shared/errors.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const BUILT = join(packageRoot(), 'dist', 'renderer');
const EXPECTED_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'";

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Raw HTTP: the path goes out exactly as written (fetch would resolve `..` and `%2e%2e` first). */
function raw(origin: string, path: string, method = 'GET'): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method }, (res) => {
      // Decoded whole: a chunk may end inside a character of several bytes (é, ’).
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

function expectHtmlHeaders(res: RawResponse) {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP);
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('same-origin');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['cache-control']).toBe('no-store');
}

const TRAVERSALS = [
  '/console/assets/..%2f..%2fpackage.json',
  '/console/assets/..%2F..%2F..%2Fpackage.json',
  '/console/assets/%2e%2e/%2e%2e/package.json',
  '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json',
  '/console/assets/../../package.json',
  '/console/assets/..%5c..%5cpackage.json',
  '/console/assets/..\\..\\package.json',
  '/console/assets/%2fetc%2fpasswd',
  '/console/assets//etc/passwd',
  '/console/assets/%00../../package.json',
  '/console/assets/index.html%00.js',
  '/console/..%2fpackage.json',
  '/console/%2e%2e/package.json',
  '/console/../package.json',
  '/console/%2e%2e%2f%2e%2e%2fpackage.json',
];

/** Attempts at dist/server/cli.js, the build's neighbour (dist/renderer/assets/../../server). */
const NEXT_TO_BUILD = [
  '/console/assets/../../server/cli.js',
  '/console/assets/..%2f..%2fserver%2fcli.js',
  '/console/assets/%2e%2e/%2e%2e/server/cli.js',
  '/console/assets/.%2e/.%2e/server/cli.js',
  '/console/assets/..%252f..%252fserver%252fcli.js',
  '/console/assets/..%5c..%5cserver%5ccli.js',
  `/console/assets/${encodeURIComponent(join(packageRoot(), 'dist', 'server', 'cli.js'))}`,
  '/console/../server/cli.js',
  '/console/..%2fserver%2fcli.js',
  '/console/%2e%2e/server/cli.js',
];

describe('the console on the real app', () => {
  let server: TestServer;
  let index: string;

  beforeAll(async () => {
    if (!existsSync(join(BUILT, 'index.html'))) throw new Error(`${BUILT}/index.html is missing: run npm run build first`);
    index = readFileSync(join(BUILT, 'index.html'), 'utf8');
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('/ and /console lead to /console/', async () => {
    const root = await raw(server.url, '/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    const bare = await raw(server.url, '/console');
    expect(bare.status).toBe(308);
    expect(bare.headers.location).toBe('/console/');
    const withQuery = await raw(server.url, '/console?request_id=abc');
    expect(withQuery.headers.location).toBe('/console/?request_id=abc');
  });

  it('every console path is index.html, with the security headers', async () => {
    for (const path of [
      '/console/',
      '/console/login?return_to=%2Fconsole%2F',
      '/console/consent?request_id=abc',
      '/console/keys/deep/path',
      '/console/index.html',
    ]) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(200);
      expectHtmlHeaders(res);
      expect(res.body).toBe(index);
    }
  });

  it('HEAD answers like GET, without a body', async () => {
    const res = await raw(server.url, '/console/login', 'HEAD');
    expect(res.status).toBe(200);
    expectHtmlHeaders(res);
    expect(res.body).toBe('');
  });

  it("serves Vite's hashed assets with their type, cached for a year", async () => {
    const assets = [...index.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const res = await raw(server.url, asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers['content-type']).toBe(asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.body).toBe(readFileSync(join(BUILT, asset.slice('/console/'.length)), 'utf8'));
      const head = await raw(server.url, asset, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
    }
  });

  it('a missing asset is a 404 in the error shape, never index.html', async () => {
    for (const path of ['/console/assets/nope-123.js', '/console/assets/', '/console/assets/nope/deeper.css']) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(errorBodySchema.parse(JSON.parse(res.body)).error).toBe('not_found');
    }
  });

  it('path traversal never reaches a file outside dist/renderer', async () => {
    const pkg = readFileSync(join(packageRoot(), 'package.json'), 'utf8');
    for (const path of TRAVERSALS) {
      const res = await raw(server.url, path);
      expect(res.body, path).not.toContain('"name": "courtier"');
      expect(res.body, path).not.toContain('root:');
      expect(res.body, path).not.toBe(pkg);
      // Either a refusal, or the console page itself (whose path is never read from disk).
      if (res.status === 200) expect(res.body, path).toBe(index);
      else expect([400, 404, 421], path).toContain(res.status);
    }
  });

  it('nor a file next to the build (dist/server)', async () => {
    const neighbour = readFileSync(join(packageRoot(), 'dist', 'server', 'cli.js'), 'utf8');
    for (const path of NEXT_TO_BUILD) {
      const res = await raw(server.url, path);
      expect(res.body, path).not.toBe(neighbour);
      expect(res.body, path).not.toContain(neighbour.slice(0, 200));
      if (res.status === 200) expect(res.body, path).toBe(index);
      else expect([400, 404, 421], path).toContain(res.status);
    }
  });

  it('other methods on console paths are 405 with Allow', async () => {
    const res = await raw(server.url, '/console/login', 'POST');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
  });

  it('leaves the API, OAuth metadata, MCP, the sandbox, the docs and health alone', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/api/v1/public/openapi.json',
      '/api/v1/public/me',
      '/api/v1/console/session',
      '/api/v1/nope',
      '/mcp',
      '/healthz',
      '/docs',
      '/openapi.json',
    ]) {
      const res = await raw(server.url, path);
      expect(res.headers['content-type'] ?? '', path).not.toContain('text/html');
      expect(res.body, path).not.toBe(index);
    }
    const docs = await raw(server.url, '/api/v1/public/docs');
    expect(docs.body).not.toBe(index);
    const sandbox = await raw(server.url, '/sandbox/insurer/login');
    expect(sandbox.body).not.toBe(index);
  });
});

describe('assetFile, the rule that maps an assets path to a file', () => {
  const assetsDir = join(packageRoot(), 'dist', 'renderer', 'assets');

  it('names Vite-like files under assets/ only', () => {
    expect(assetFile(assetsDir, '/console/assets/index-abc123.js')).toBe(join(assetsDir, 'index-abc123.js'));
    expect(assetFile(assetsDir, '/console/assets/sub/logo-x.svg')).toBe(join(assetsDir, 'sub', 'logo-x.svg'));
    for (const path of [
      ...TRAVERSALS,
      ...NEXT_TO_BUILD,
      '/console/index.html',
      '/console/assets/',
      '/console/assets/.hidden',
      '/console/assets/sub/',
      '/console/assets/a//b.js',
      '/console/assets/a/./b.js',
    ]) {
      expect(assetFile(assetsDir, path), path).toBeNull();
    }
  });
});

describe('the console plugin alone, started before the console is built', () => {
  let dir: string;
  let app: FastifyInstance;
  let origin: string;

  beforeAll(async () => {
    dir = tempDir('courtier-console-empty-');
    app = Fastify();
    await app.register(errorsPlugin);
    await app.register(consoleRoutes, { rootDir: dir });
    origin = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with instructions; once built, the reload it asks for serves the build, and a rebuild', async () => {
    for (const path of ['/console/', '/console/login']) {
      const res = await raw(origin, path);
      expect(res.status, path).toBe(503);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toContain('npm run build');
    }
    expect((await raw(origin, '/console/assets/app-abc123.js')).status).toBe(404);
    expect((await raw(origin, '/')).status).toBe(302);

    // npm run build while the service runs.
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>v1</title>');
    writeFileSync(join(dir, 'assets', 'app-abc123.js'), 'console.log(1)');
    const built = await raw(origin, '/console/login');
    expect(built.status).toBe(200);
    expectHtmlHeaders(built);
    expect(built.body).toContain('v1');
    const asset = await raw(origin, '/console/assets/app-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.body).toBe('console.log(1)');

    // A rebuild is picked up: index.html is read on every request.
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>v2</title>');
    expect((await raw(origin, '/console/')).body).toContain('v2');
  });
});
