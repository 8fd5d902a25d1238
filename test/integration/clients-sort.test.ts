import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../server/crm/clients.js';
import { eraseClient } from '../../server/erasure/service.js';
import { apiClient, expectError } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * GET /clients?sort=name: A to Z in French order (accents and case aside), a company by its name
 * and a person by last then first name; pages follow each other through the cursor, which belongs
 * to its order; filters apply; an erased client is never listed.
 */
let server: TestServer;
let api: ReturnType<typeof apiClient>;

const names = (body: Record<string, unknown>) =>
  (body.data as { type: string; last_name: string | null; first_name: string | null; company_name: string | null }[]).map((c) =>
    c.type === 'company' ? c.company_name : `${c.last_name} ${c.first_name ?? ''}`.trim(),
  );

beforeAll(async () => {
  server = await startTestServer();
  const cabinetId = await server.createCabinet();
  api = apiClient(server, server.createKey(cabinetId).key);
  const person = (last_name: string, first_name?: string) =>
    createClient(server.deps, cabinetId, { type: 'person', last_name, ...(first_name ? { first_name } : {}) });
  person('Zola', 'Émile');
  person('dupont', 'Jean');
  person('Éluard', 'Paul');
  person('Dupont', 'Anne');
  person('Fabre');
  createClient(server.deps, cabinetId, { type: 'company', last_name: 'Roux', company_name: 'Garage Martin' });
  eraseClient(server.deps, cabinetId, person('Abadie', 'Erased').client_id);
  // Another cabinet's client sorts first by name, and is never seen here.
  createClient(server.deps, await server.createCabinet(), { type: 'person', last_name: 'Aaron' });
});
afterAll(async () => {
  await server?.close();
});

describe('clients sorted by name', () => {
  const ORDER = ['Dupont Anne', 'dupont Jean', 'Éluard Paul', 'Fabre', 'Garage Martin', 'Zola Émile'];

  it('lists A to Z, accents and case aside, companies by their name', async () => {
    const res = await api.get('/clients?sort=name&limit=100');
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(ORDER);
    expect(res.body.has_more).toBe(false);
  });

  it('pages of two follow each other to the end', async () => {
    const seen: (string | null)[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await api.get(`/clients?sort=name&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...names(res.body));
      cursor = res.body.next_cursor as string | null;
      if (!cursor) break;
    }
    expect(seen).toEqual(ORDER);
  });

  it('a cursor is for its order: one made by name is refused for newest first, and the reverse', async () => {
    const byName = await api.get('/clients?sort=name&limit=2');
    const newest = await api.get('/clients?limit=2');
    expectError(await api.get(`/clients?limit=2&cursor=${encodeURIComponent(String(byName.body.next_cursor))}`), 400, 'invalid_cursor');
    expectError(
      await api.get(`/clients?sort=name&limit=2&cursor=${encodeURIComponent(String(newest.body.next_cursor))}`),
      400,
      'invalid_cursor',
    );
  });

  it('filters apply, and an unknown order is refused', async () => {
    expect(names((await api.get('/clients?sort=name&type=company')).body)).toEqual(['Garage Martin']);
    expect(names((await api.get('/clients?sort=name&q=dupont')).body)).toEqual(['Dupont Anne', 'dupont Jean']);
    expectError(await api.get('/clients?sort=last_name'), 400, 'validation_error');
  });
});
