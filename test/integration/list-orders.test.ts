import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../server/crm/clients.js';
import { createOpportunity } from '../../server/crm/service.js';
import { createDevis, recordDevisPriced } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { apiClient, expectError } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Lists in an order of their own. GET /clients?sort=name: A to Z in French order (accents and case
 * aside), a company by its name and a person by last then first name; an erased client is never
 * listed. GET /opportunities?sort=-expected_value_eur: the largest first. GET /devis?sort=tarif_eur: the
 * lowest premium first, quotes without one last. In each, pages follow each
 * other through the cursor, which belongs to its order, and filters apply.
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
  const fabre = person('Fabre');
  for (const premium of [980, null, 412.5, 650]) {
    const quote = createDevis(server.deps, cabinetId, { client_id: fabre.client_id, compagnie: 'testco', produit: 'auto', dicData: {} });
    if (premium !== null) recordDevisPriced(server.deps, cabinetId, quote.devis_id, { tarifEur: premium });
  }
  const lead = (title: string, expected_value_eur: number, stage: 'new' | 'won' = 'new') =>
    createOpportunity(
      server.deps,
      cabinetId,
      { title, product: 'auto', contact: { last_name: 'X' }, stage, expected_value_eur, tags: [] },
      'api',
    );
  lead('Petit', 300);
  lead('Flotte', 4200);
  lead('Moyen A', 850);
  lead('Moyen B', 850);
  lead('Gagné', 9000, 'won');
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

describe('opportunities by expected value', () => {
  const titles = (body: Record<string, unknown>) => (body.data as { title: string }[]).map((o) => o.title);

  it('lists the largest first, pages of two following each other, ties kept in one order', async () => {
    const all = titles((await api.get('/opportunities?sort=-expected_value_eur')).body);
    expect(all.slice(0, 2)).toEqual(['Gagné', 'Flotte']);
    expect(all.slice(2, 4).sort()).toEqual(['Moyen A', 'Moyen B']);
    expect(all[4]).toBe('Petit');
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await api.get(`/opportunities?sort=-expected_value_eur&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...titles(res.body));
      cursor = res.body.next_cursor as string | null;
      if (!cursor) break;
    }
    expect(seen).toEqual(all);
  });

  it('keeps its filters, and its cursor is its own', async () => {
    const open = titles((await api.get('/opportunities?sort=-expected_value_eur&stage=new')).body);
    expect([open[0], open.length, open.includes('Gagné')]).toEqual(['Flotte', 4, false]);
    const byValue = await api.get('/opportunities?sort=-expected_value_eur&limit=1');
    expectError(
      await api.get(`/opportunities?limit=1&cursor=${encodeURIComponent(String(byValue.body.next_cursor))}`),
      400,
      'invalid_cursor',
    );
    expectError(await api.get('/opportunities?sort=title'), 400, 'validation_error');
  });
});

describe('quotes by premium', () => {
  it('lists the lowest premium first and the quotes without one last, page after page', async () => {
    const res = await api.get('/devis?sort=tarif_eur&limit=100');
    expect(res.status).toBe(200);
    const premiums = (res.body.data as { tarif_eur: number | null }[]).map((q) => q.tarif_eur);
    expect(premiums).toEqual([412.5, 650, 980, null]);
    const seen: (number | null)[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const next = await api.get(`/devis?sort=tarif_eur&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...(next.body.data as { tarif_eur: number | null }[]).map((q) => q.tarif_eur));
      cursor = next.body.next_cursor as string | null;
      if (!cursor) break;
    }
    expect(seen).toEqual(premiums);
    expectError(await api.get('/devis?sort=premium'), 400, 'validation_error');
  });
});
