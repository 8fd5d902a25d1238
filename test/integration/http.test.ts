import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEndpoint } from '../../shared/endpoint.js';
import { errorBodySchema } from '../../shared/errors.js';
import { healthSchema } from '../../shared/meta.js';
import { registerEndpoint } from '../../server/platform/http/endpoint.js';
import { packageVersion } from '../../server/paths.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;

/** A throwaway POST route with a body and a query, to exercise the body pipeline before domain routes exist. */
const echo = defineEndpoint({
  method: 'POST',
  path: '/test-echo/{id}',
  operationId: 'testEcho',
  summary: 'echo',
  tag: 'test',
  auth: 'api_key',
  params: z.object({ id: z.uuid() }),
  query: z.object({ limit: z.coerce.number().int().min(1).max(100).optional() }),
  body: z.strictObject({ title: z.string().min(1), contact: z.object({ last_name: z.string().min(1) }) }),
  responses: {
    200: {
      description: 'The request as read.',
      schema: z.object({ id: z.uuid(), limit: z.int().nullable(), body: z.record(z.string(), z.unknown()) }),
    },
  },
  errors: [],
});
const ID = '6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f';

beforeAll(async () => {
  server = await startTestServer({
    config: { corsOrigins: ['https://crm.example.fr'] },
    beforeListen: (app) =>
      registerEndpoint(app, echo, (request) => ({ id: request.params.id, limit: request.query.limit ?? null, body: request.body })),
  });
  key = server.createKey(await server.createCabinet()).key;
});
afterAll(() => server.close());

/** Raw HTTP, for Host headers fetch would not let us set. */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, setHost: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function errorOf(res: Response) {
  return errorBodySchema.parse(await res.json());
}

function post(path: string, body: string, contentType = 'application/json') {
  return server.request(path, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': contentType }, body });
}

describe('errors and bad input', () => {
  it('GET /healthz answers status and version without auth', async () => {
    const res = await server.request('/healthz');
    expect(res.status).toBe(200);
    expect(healthSchema.parse(await res.json())).toEqual({ status: 'ok', version: packageVersion() });
  });

  it('404 not_found for an unknown route, with the request id in body and header', async () => {
    const res = await server.request('/api/v1/public/nothing-here');
    expect(res.status).toBe(404);
    const body = await errorOf(res);
    expect(body.error).toBe('not_found');
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('405 method_not_allowed with Allow on a known path', async () => {
    const res = await server.request('/api/v1/public/me', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect((await errorOf(res)).error).toBe('method_not_allowed');
  });

  it('400 validation_error lists every problem with its path', async () => {
    const res = await post(`/api/v1/public/test-echo/not-a-uuid?limit=500`, JSON.stringify({ contact: {}, extra: 1 }));
    expect(res.status).toBe(400);
    const body = await errorOf(res);
    expect(body.error).toBe('validation_error');
    // Fastify validates params first and stops at the first failing part.
    expect(body.details).toEqual([expect.objectContaining({ path: 'path.id', message: expect.any(String), code: expect.any(String) })]);
    const res2 = await post(`/api/v1/public/test-echo/${ID}`, JSON.stringify({ contact: {}, extra: 1 }));
    const paths = z
      .array(z.object({ path: z.string() }))
      .parse((await errorOf(res2)).details)
      .map((d) => d.path)
      .sort();
    expect(paths).toEqual(['body', 'body.contact.last_name', 'body.title']);
    const res3 = await post(`/api/v1/public/test-echo/${ID}?limit=500`, JSON.stringify({ title: 't', contact: { last_name: 'D' } }));
    expect((await errorOf(res3)).details).toEqual([
      expect.objectContaining({ path: 'query.limit', message: expect.any(String), code: 'too_big' }),
    ]);
  });

  it('passes valid input through, coerced', async () => {
    const res = await post(`/api/v1/public/test-echo/${ID}?limit=7`, JSON.stringify({ title: 't', contact: { last_name: 'D' } }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: ID, limit: 7, body: { title: 't', contact: { last_name: 'D' } } });
  });

  it('400 invalid_json for malformed JSON and prototype poisoning', async () => {
    const cases = [
      ['{"title": ', 'The body is not valid JSON.'],
      ['{"__proto__": {"admin": true}}', expect.stringContaining('"__proto__" key')],
      ['{"constructor": {"prototype": {"admin": true}}}', expect.stringContaining('"constructor" key holding "prototype"')],
    ] as const;
    for (const [body, message] of cases) {
      const res = await post(`/api/v1/public/test-echo/${ID}`, body);
      expect(res.status, body).toBe(400);
      expect(await errorOf(res), body).toMatchObject({ error: 'invalid_json', message });
    }
  });

  it('an empty JSON body is no body: 400 validation_error where the route needs one', async () => {
    const res = await post(`/api/v1/public/test-echo/${ID}`, '');
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details).toEqual([
      { path: 'body', message: expect.any(String), code: 'invalid_type', expected: 'object', received: 'undefined' },
    ]);
  });

  it('415 unsupported_media_type for a body that is not JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await post(`/api/v1/public/test-echo/${ID}`, 'title=x', type);
      expect(res.status, type).toBe(415);
      expect((await errorOf(res)).error).toBe('unsupported_media_type');
    }
  });

  it('413 payload_too_large over 1 MiB', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(1024 * 1024), contact: { last_name: 'D' } });
    const res = await post(`/api/v1/public/test-echo/${ID}`, big);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).error).toBe('payload_too_large');
  });
});

describe('local-server safety', () => {
  it('421 misdirected_request for a Host that is not a loopback name (DNS rebinding)', async () => {
    const { port } = new URL(server.url);
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost:${Number(port) + 1}`]) {
      const res = await rawGet('/healthz', { Host: host });
      expect(res.status, host).toBe(421);
      expect(errorBodySchema.parse(JSON.parse(res.body)).error).toBe('misdirected_request');
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost']) {
      expect((await rawGet('/healthz', { Host: host })).status, host).toBe(200);
    }
  });

  it('refuses cross-origin browser requests unless the origin is configured', async () => {
    const refused = await server.request('/api/v1/public/me', { headers: { 'X-API-Key': key, Origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).error).toBe('origin_not_allowed');
    const subresource = await server.request('/api/v1/public/me', {
      headers: { 'X-API-Key': key, 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' },
    });
    expect(subresource.status).toBe(403);

    const allowed = await server.request('/api/v1/public/me', { headers: { 'X-API-Key': key, Origin: 'https://crm.example.fr' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://crm.example.fr');

    const preflight = await server.request('/api/v1/public/me', {
      method: 'OPTIONS',
      headers: { Origin: 'https://crm.example.fr', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-API-Key/);

    const sameOrigin = await server.request('/api/v1/public/me', { headers: { 'X-API-Key': key, Origin: server.url } });
    expect(sameOrigin.status).toBe(200);
  });
});

describe('logs', () => {
  it('writes one line per request with its id, and never the key, even when sent in the query', async () => {
    const before = server.logs.length;
    const res = await server.request(`/api/v1/public/me?api_key=${key}`, {
      headers: { Authorization: `Bearer ${key}`, Cookie: 'session=secret-cookie' },
    });
    await res.text();
    await new Promise((r) => setTimeout(r, 20));
    const lines = server.logs.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({ reqId: res.headers.get('x-request-id'), status: 200, method: 'GET' });
    const all = server.logs.join('\n');
    expect(all).not.toContain(key);
    expect(all).not.toContain(key.slice(9));
    expect(all).not.toContain('secret-cookie');
  });
});
