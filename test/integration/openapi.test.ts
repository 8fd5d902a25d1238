import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { PUBLIC_ENDPOINTS } from '../../shared/catalogue.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown>; 'x-required-scope'?: string }>>;
  components: { schemas: Record<string, unknown> };
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, served without auth, and lists every registered public route', async () => {
    const res = await server.request('/api/v1/public/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Document;
    expect(doc.openapi).toBe('3.1.0');

    // Every route the running app registered under the public prefix (HEAD twins aside) is documented.
    const registered = server.app.listRoutes().filter((r) => r.url.startsWith(PUBLIC_API_PREFIX) && r.method !== 'HEAD');
    for (const endpoint of PUBLIC_ENDPOINTS) {
      expect(doc.paths[endpoint.path]?.[endpoint.method.toLowerCase()]?.operationId, `${endpoint.method} ${endpoint.path}`).toBe(
        endpoint.operationId,
      );
    }
    for (const route of registered) {
      const path = route.url.slice(PUBLIC_API_PREFIX.length).replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path} is registered but not documented`).toBeDefined();
    }
    expect(registered.length).toBe(PUBLIC_ENDPOINTS.length);
  });

  it('documents the error codes of each route with the Error schema', async () => {
    const doc = (await (await server.request('/api/v1/public/openapi.json')).json()) as Document;
    const me = doc.paths['/me']?.get;
    expect(Object.keys(me?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '429']));
    expect(doc.components.schemas.Error).toBeDefined();
    expect(doc.components.schemas.ApiKeyIntrospection).toBeDefined();
  });

  it('documents the MCP endpoint and every OAuth route clients call, at the service root', async () => {
    const doc = (await (await server.request('/api/v1/public/openapi.json')).json()) as Document & {
      paths: Record<string, { servers?: { url: string }[] }>;
    };
    const rootRoutes = server.app
      .listRoutes()
      .filter(
        (r) => (r.url.startsWith('/api/v1/mcp/oauth/') || r.url.startsWith('/.well-known/') || r.url === '/mcp') && r.method !== 'HEAD',
      )
      // The consent routes serve the console's own page, not clients.
      .filter((r) => !r.url.startsWith('/api/v1/mcp/oauth/consent'));
    expect(rootRoutes.length).toBeGreaterThanOrEqual(8);
    for (const route of rootRoutes) {
      if (route.url === '/.well-known/oauth-protected-resource/mcp') continue; // the path form of the same document
      const item = doc.paths[route.url];
      expect(item?.[route.method.toLowerCase()], `${route.method} ${route.url} is registered but not documented`).toBeDefined();
      expect(item?.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    }
  });

  it('documents the adapter a job ran with, null until a robot took it', async () => {
    const doc = (await (await server.request('/api/v1/public/openapi.json')).json()) as Document;
    const job = doc.components.schemas.Job as {
      required: string[];
      properties: Record<string, { description?: string; anyOf?: unknown[] }>;
    };
    expect(job.required).toContain('adapter');
    expect(job.properties.adapter?.description).toMatch(/adapter.*null until a robot has taken the job/s);
    expect(job.properties.adapter?.anyOf).toEqual([expect.objectContaining({ required: ['code', 'version'] }), { type: 'null' }]);
  });

  it('has a human docs page', async () => {
    const res = await server.request('/api/v1/public/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('/me');
    expect(html).toContain('insufficient_scope');
    expect(html).toContain('openapi.json');
  });
});
