// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointPath, HUB_API_PREFIX, pathTo } from '../../shared/endpoint.js';
import {
  getBlob,
  getHubHealth,
  getHubOpenApiDocument,
  HUB_TIME_HEADER,
  MAX_BLOB_BYTES,
  MAX_PUSH_BYTES,
  pushChanges,
  putBlob,
} from '../../shared/sync-protocol.js';
import { HUB_ENDPOINTS } from '../../server/hub/routes.js';
import { pairTestDevice, sha256, startHub, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

let pg: TestPostgres;
let hub: TestHub;
let device: TestDevice;
beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg);
  device = await pairTestDevice(hub, { id: 'cab-blobs' });
});
afterAll(async () => {
  await hub.close();
  await pg.stop();
});

const OCTETS = { 'content-type': 'application/octet-stream' };

function put(name: string, payload: Buffer, headers: Record<string, string> = OCTETS) {
  return hub.request({ method: 'PUT', url: pathTo(putBlob, { sha256: name }), headers: { ...device.headers, ...headers }, payload });
}

describe('blobs', () => {
  it('stores a PDF under its SHA-256 once, and serves it back as application/pdf', async () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256))]);
    const first = await put(sha256(pdf), pdf);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ sha256: sha256(pdf), size: pdf.length });
    expect((await put(sha256(pdf), pdf)).statusCode).toBe(200);
    const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_blobs WHERE sha256 = ${sha256(pdf)}`;
    expect(row!.n).toBe(1);
    const back = await hub.request({ method: 'GET', url: pathTo(getBlob, { sha256: sha256(pdf) }), headers: device.headers });
    expect(back.statusCode).toBe(200);
    expect(back.headers['content-type']).toBe('application/pdf');
    expect(back.rawPayload.equals(pdf)).toBe(true);
  });

  it('refuses bytes that do not have the SHA-256 of the path, storing nothing', async () => {
    const pdf = Buffer.from('%PDF-1.7 real');
    const wrongName = sha256(Buffer.from('something else'));
    const res = await put(wrongName, pdf);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'blob_hash_mismatch', details: { sha256: sha256(pdf) } });
    expect((await hub.request({ method: 'GET', url: pathTo(getBlob, { sha256: wrongName }), headers: device.headers })).statusCode).toBe(
      404,
    );
  });

  it('refuses a body over 20 MiB with 413, another content type with 415, a malformed name with 400', async () => {
    const big = Buffer.alloc(MAX_BLOB_BYTES + 1, 7);
    const tooLarge = await put(sha256(big), big);
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: 'payload_too_large', message: 'The body is larger than 20 MiB.' });
    const atLimit = Buffer.alloc(MAX_BLOB_BYTES, 7);
    expect((await put(sha256(atLimit), atLimit)).statusCode).toBe(200);

    const pdf = Buffer.from('%PDF-1.7 x');
    for (const type of ['application/json', 'text/plain', 'application/pdf']) {
      const res = await put(sha256(pdf), type === 'application/json' ? Buffer.from('{"a":1}') : pdf, { 'content-type': type });
      expect(res.statusCode, type).toBe(415);
      expect(res.json()).toMatchObject({ error: 'unsupported_media_type', message: 'Send the body as application/octet-stream.' });
    }
    const badName = await put('ABC', pdf);
    expect(badName.statusCode).toBe(400);
    expect(badName.json().details[0].path).toBe('path.sha256');
  });

  it('takes raw bytes on the blob route only, and a push up to its own limit', async () => {
    const res = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: { ...device.headers, ...OCTETS },
      payload: Buffer.from('{}'),
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().message).toBe('Send the body as application/json.');
    const huge = Buffer.from(JSON.stringify({ changes: [{ padding: 'x'.repeat(MAX_PUSH_BYTES) }] }));
    const tooLarge = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: { ...device.headers, 'content-type': 'application/json' },
      payload: huge,
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().message).toBe('The body is larger than 8 MiB.');
  });
});

describe('health and the OpenAPI document', () => {
  it('answers /healthz with the version, and the hub’s time on every answer', async () => {
    const res = await hub.request({ method: 'GET', url: pathTo(getHubHealth) });
    expect(res.json()).toEqual({ status: 'ok', version: '0.0.0-test' });
    expect(res.headers[HUB_TIME_HEADER]).toBe(String(hub.clock.now()));
    const unknown = await hub.request({ method: 'GET', url: '/api/v1/public/clients' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers[HUB_TIME_HEADER]).toBe(String(hub.clock.now()));
  });

  it('documents exactly the hub’s lines, which are exactly the routes it registers', async () => {
    interface Operation {
      operationId: string;
      requestBody?: { content: Record<string, unknown> };
      security: Record<string, string[]>[];
    }
    const document = (await hub.request({ method: 'GET', url: pathTo(getHubOpenApiDocument) })).json<{
      servers: { url: string }[];
      paths: Record<string, Record<string, Operation> & { servers?: { url: string }[] }>;
      components: { securitySchemes: Record<string, unknown> };
      security: unknown;
    }>();
    expect(document.servers[0]!.url).toBe(HUB_API_PREFIX);
    const documented = new Map<string, Operation>();
    for (const [path, item] of Object.entries(document.paths)) {
      const base = item.servers?.[0]?.url === '/' ? '' : HUB_API_PREFIX;
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const operation = item[method];
        if (operation) documented.set(`${method.toUpperCase()} ${base}${path}`, operation);
      }
    }
    const lines = HUB_ENDPOINTS.map((e) => `${e.method} ${endpointPath(e)}`);
    expect([...documented.keys()].sort()).toEqual([...lines].sort());
    expect([...documented.values()].map((o) => o.operationId).sort()).toEqual(HUB_ENDPOINTS.map((e) => e.operationId).sort());

    const registered = hub.app
      .listRoutes()
      .filter((r) => r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    expect(registered.sort()).toEqual([...lines].sort());
    expect(hub.app.listRoutes().every((r) => r.operationId !== undefined)).toBe(true);

    expect(Object.keys(document.paths['/blobs/{sha256}']!.put!.requestBody!.content)).toEqual(['application/octet-stream']);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['SyncDevice']);
    expect(document.security).toEqual([{ SyncDevice: [] }]);
    expect(document.paths['/changes']!.post!.security).toEqual([{ SyncDevice: [] }]);
  });
});
