import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchResultsSchema } from '../../shared/console-search.js';
import { createClient } from '../../server/crm/clients.js';
import { createOpportunity } from '../../server/crm/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { createDevis } from '../../server/devis/service.js';
import { eraseClient } from '../../server/erasure/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient, expectErrorResponse } from '../helpers/api.js';
import { signInNewUser, type ConsoleClient } from '../helpers/console.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * The header's search over HTTP with a console session: each kind found by its own words, an
 * erased client never, another cabinet's records never, and a text too short refused.
 */
let server: TestServer;
let cabinetId = '';
let broker: ConsoleClient;
let other: ConsoleClient;
let jobId = '';

const search = async (c: ConsoleClient, q: string) => {
  const res = await c.request(`/api/v1/console/search?q=${encodeURIComponent(q)}`);
  expect(res.status).toBe(200);
  return searchResultsSchema.parse(await res.json());
};

beforeAll(async () => {
  server = await startTestServer({ insurers: [createTestInsurer()], config: { tarificationQuotaPerHour: 1000 } });
  cabinetId = await server.createCabinet();
  broker = (await signInNewUser(server, cabinetId, 'broker')).client;
  other = (await signInNewUser(server, await server.createCabinet(), 'broker')).client;
  const garnier = createClient(server.deps, cabinetId, {
    type: 'person',
    last_name: 'Garnier',
    first_name: 'Alice',
    email: 'a.garnier@example.fr',
  });
  createClient(server.deps, cabinetId, { type: 'company', last_name: 'Roux', company_name: 'Garnier & Fils SARL' });
  const erased = createClient(server.deps, cabinetId, { type: 'person', last_name: 'Garnier-Effacé' });
  eraseClient(server.deps, cabinetId, erased.client_id);
  createDevis(server.deps, cabinetId, { client_id: garnier.client_id, compagnie: 'testco', produit: 'auto', dicData: {} });
  createOpportunity(
    server.deps,
    cabinetId,
    { title: 'Flotte 12 véhicules', product: 'auto', contact: { last_name: 'Garnier' }, stage: 'new', expected_value_eur: 0, tags: [] },
    'console',
  );
  createOpportunity(
    server.deps,
    cabinetId,
    { title: 'Taux 100% garanti', product: 'mrh', contact: { last_name: 'Blanc' }, stage: 'new', expected_value_eur: 0, tags: [] },
    'console',
  );
  grantCredits(server.deps, cabinetId, 100);
  setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  const api = apiClient(server, server.createKey(cabinetId).key);
  const enqueued = await api.post('/automation/tarifications', {
    compagnie: 'testco',
    produit: 'auto',
    dicData: { postcode: '69003', birth_date: '1984-03-09', insured_name: 'Bertrand Lemoine' },
  });
  expect(enqueued.status).toBe(202);
  jobId = String(enqueued.body.job_id);
});
afterAll(async () => {
  await server?.close();
});

describe('the console’s search', () => {
  it('finds clients by name and company, their quotes, and opportunities by contact; never an erased client', async () => {
    const found = await search(broker, 'garn');
    expect(found.clients.data.map((c) => c.last_name).sort()).toEqual(['Garnier', 'Roux']);
    expect(found.devis.data).toHaveLength(1);
    expect(found.devis.data[0]).toMatchObject({ client_name: 'Alice Garnier', compagnie: 'testco' });
    expect(found.opportunities.data.map((o) => o.title)).toEqual(['Flotte 12 véhicules']);
    expect(JSON.stringify(found)).not.toContain('Effacé');
    expect(found.clients.has_more).toBe(false);
  });

  it('finds a pricing by its insured’s name and by the start of its id; % matches itself', async () => {
    expect((await search(broker, 'lemoine')).jobs.data.map((j) => j.job_id)).toEqual([jobId]);
    expect((await search(broker, jobId.slice(0, 8))).jobs.data.map((j) => j.job_id)).toEqual([jobId]);
    expect((await search(broker, '100%')).opportunities.data.map((o) => o.title)).toEqual(['Taux 100% garanti']);
    expect((await search(broker, '0%')).opportunities.data.map((o) => o.title)).toEqual(['Taux 100% garanti']);
    expect((await search(broker, 'Taux 1_0')).opportunities.data).toEqual([]);
  });

  it('another cabinet finds nothing of this one', async () => {
    for (const q of ['garn', 'lemoine', jobId.slice(0, 8), 'Flotte']) {
      const found = await search(other, q);
      expect([found.clients.data.length, found.opportunities.data.length, found.devis.data.length, found.jobs.data.length]).toEqual([
        0, 0, 0, 0,
      ]);
    }
  });

  it('a text of one character is refused, naming q; no session is refused', async () => {
    const res = await broker.request('/api/v1/console/search?q=%20a%20');
    const body = await expectErrorResponse(res, 400, 'validation_error');
    expect(JSON.stringify(body)).toContain('q');
    expect((await server.request('/api/v1/console/search?q=garn')).status).toBe(401);
  });
});
