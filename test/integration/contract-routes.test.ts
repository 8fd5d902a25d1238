import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_API_PREFIX, PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { SANDBOX_PORTALS } from '../../server/sandbox-portals/index.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface Operation {
  operationId: string;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation | { url: string }[]> & { servers?: { url: string }[] }>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** METHOD path → operationId, paths written as Fastify registers them (:param, a trailing * for the rest). */
function operationsOf(document: Document): Map<string, string> {
  const operations = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const base = item.servers?.[0]?.url ?? document.servers[0]?.url ?? '';
    const full = (base === '/' ? '' : base) + path;
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      // A parameter that takes the rest of the URL is documented as one path parameter.
      const rest = (operation as Operation & { parameters?: { in: string; description?: string; name: string }[] }).parameters?.find(
        (p) => p.in === 'path' && p.description === 'The rest of the path, slashes included.',
      );
      const fastifyPath = (rest ? full.replace(`{${rest.name}}`, '*') : full).replace(/\{([^}]+)\}/g, ':$1');
      operations.set(`${method.toUpperCase()} ${fastifyPath}`, operation.operationId);
    }
  }
  return operations;
}

describe('one contract for every route', () => {
  it('registers exactly the routes its OpenAPI documents list, each from its contract line', async () => {
    const documents = await Promise.all(
      [`${PUBLIC_API_PREFIX}/openapi.json`, `${CONSOLE_API_PREFIX}/openapi.json`].map(
        async (url) => (await server.request(url)).json() as Promise<Document>,
      ),
    );
    const documented = new Map<string, string>();
    for (const document of documents) for (const [route, id] of operationsOf(document)) documented.set(route, id);

    const registered = new Map<string, string | undefined>();
    for (const route of server.app.listRoutes()) {
      // HEAD twins of GET routes are Fastify's; the demo insurers' portals stand in for
      // outside websites (insurers' extranets), which are not Courtier's API.
      if (route.method === 'HEAD' || SANDBOX_PORTALS.some((portal) => route.url.startsWith(portal.prefix))) continue;
      registered.set(`${route.method} ${route.url}`, route.operationId);
    }

    const withoutLine = [...registered].filter(([, id]) => id === undefined).map(([route]) => route);
    expect(withoutLine, 'routes registered without a contract line').toEqual([]);
    expect([...registered.keys()].sort()).toEqual([...documented.keys()].sort());
    for (const [route, id] of registered) expect(documented.get(route), route).toBe(id);
  });
});
