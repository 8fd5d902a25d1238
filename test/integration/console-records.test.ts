import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchema, opportunitySchema, type Client, type Opportunity } from '../../shared/crm.js';
import { CONSOLE_RECORDS_ENDPOINTS, consoleDevisSchema, type ConsoleDevis } from '../../shared/console-records.js';
import { pathTo } from '../../shared/endpoint.js';
import { CONSOLE_NOTE_ENDPOINTS } from '../../shared/opportunity-notes.js';
import { errorBodySchema } from '../../shared/errors.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { hashPassword } from '../../server/tenancy/passwords.js';
import { insertUser } from '../../server/tenancy/store.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient, expectErrorResponse, json } from '../helpers/api.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser, PASSWORD, type TestUser } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_PDF, type TestInsurer } from '../helpers/test-insurer.js';

/**
 * The console's records lines over real HTTP: a session (and its CSRF token) instead of a key, the
 * same services as the REST API, one cabinet's records only, stable error codes with nothing
 * written, the quotes named after their client and product, and the PDF's file name.
 */

const C = '/api/v1/console';
let server: TestServer;
let insurer: TestInsurer;

beforeAll(async () => {
  insurer = createTestInsurer();
  server = await startTestServer({ insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
});
afterAll(() => server?.close());

interface Cabinet {
  user: TestUser;
  console: ConsoleClient;
  api: ReturnType<typeof apiClient>;
}

async function cabinet(): Promise<Cabinet> {
  const user = await createUser(server, `Cabinet ${randomUUID().slice(0, 6)}`);
  grantCredits(server.deps, user.cabinetId, 100);
  setInsurerCredentials(server.deps, user.cabinetId, 'testco', { login: 'broker-42', password: 's3cret!' });
  return { user, console: await consoleClient(server, user), api: apiClient(server, server.createKey(user.cabinetId).key) };
}

/** A broker (not an admin) of the cabinet: the records are every user's work. */
async function broker(cab: Cabinet): Promise<ConsoleClient> {
  const email = `broker-${randomUUID()}@example.fr`;
  const passwordHash = await hashPassword(PASSWORD, server.deps.randomBytes(16));
  insertUser(server.deps.db.orm, {
    id: randomUUID(),
    cabinetId: cab.user.cabinetId,
    email,
    passwordHash,
    role: 'broker',
    createdAt: Date.now(),
  });
  return consoleClient(server, { email, password: PASSWORD });
}

async function clientsOf(client: ConsoleClient, query = ''): Promise<{ data: Client[]; next_cursor: string | null }> {
  const res = await client.request(`${C}/clients${query}`);
  expect(res.status).toBe(200);
  const body = (await json(res)) as { data: unknown[]; next_cursor: string | null };
  return { data: body.data.map((c) => clientSchema.parse(c)), next_cursor: body.next_cursor };
}

async function quotesOf(client: ConsoleClient, query = ''): Promise<ConsoleDevis[]> {
  const res = await client.request(`${C}/devis${query}`);
  expect(res.status).toBe(200);
  return ((await json(res)) as { data: unknown[] }).data.map((d) => consoleDevisSchema.parse(d));
}

async function apiClientCreate(cab: Cabinet, body: Record<string, unknown>): Promise<Client> {
  const res = await cab.api.post('/clients', body);
  expect(res.status).toBe(201);
  return clientSchema.parse(res.body);
}

/** Prices a quote for the client through the test insurer's robot, and waits for the job to end. */
async function priceFor(cab: Cabinet, clientId: string | undefined, postcode = '69003'): Promise<ConsoleDevis> {
  const res = await cab.console.request(`${C}/tarifications`, {
    method: 'POST',
    json: {
      compagnie: 'testco',
      produit: 'auto',
      ...(clientId === undefined ? {} : { client_id: clientId }),
      dicData: { postcode, birth_date: '1984-03-09', formula: 'tiers' },
    },
  });
  expect(res.status).toBe(202);
  const { job_id } = (await json(res)) as { job_id: string };
  const { devis_id } = (await json(await cab.console.request(`${C}/jobs/${job_id}`))) as { devis_id: string };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const quote = consoleDevisSchema.parse(await json(await cab.console.request(`${C}/devis/${devis_id}`)));
    if (quote.status === 'priced' || quote.status === 'failed') return quote;
    if (Date.now() > deadline) throw new Error(`quote ${devis_id} stuck in ${quote.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function tableCount(table: string, cabinetId: string): number {
  return (server.deps.db.sqlite.prepare(`SELECT count(*) AS n FROM ${table} WHERE cabinet_id = ?`).get(cabinetId) as { n: number }).n;
}

function eventCount(type: string, cabinetId: string): number {
  return (
    server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND type = ?').get(cabinetId, type) as {
      n: number;
    }
  ).n;
}

describe('console records: access', () => {
  it('every line needs a session (401 not_signed_in), and a write its CSRF token', async () => {
    const id = randomUUID();
    for (const line of [...CONSOLE_RECORDS_ENDPOINTS, ...CONSOLE_NOTE_ENDPOINTS]) {
      const url = pathTo(line as Parameters<typeof pathTo>[0], { client_id: id, opportunity_id: id, devis_id: id } as never);
      const res = await server.request(url, {
        method: line.method,
        headers: { 'Content-Type': 'application/json', Origin: server.url },
        body: line.method === 'GET' || line.method === 'DELETE' ? undefined : '{}',
      });
      expect(res.status, `${line.operationId}`).toBe(401);
      expect(errorBodySchema.parse(await json(res)).error).toBe('not_signed_in');
    }
    const cab = await cabinet();
    const noCsrf = await server.request(`${C}/clients`, {
      method: 'POST',
      headers: { cookie: cab.console.cookie, 'Content-Type': 'application/json', Origin: server.url },
      body: JSON.stringify({ last_name: 'Sans Jeton' }),
    });
    await expectErrorResponse(noCsrf, 403, 'invalid_csrf_token');
    expect(tableCount('clients', cab.user.cabinetId)).toBe(0);
  });

  it('a broker sees their cabinet’s records only: another cabinet’s ids are 404 and its records are not listed', async () => {
    const a = await cabinet();
    const b = await cabinet();
    const dupont = await apiClientCreate(a, { last_name: 'Dupont', first_name: 'Jean', email: 'jean.dupont@example.fr' });
    const opp = await a.api.post('/opportunities', { title: 'Auto Dupont', product: 'auto', contact: { last_name: 'Dupont' } });
    const quote = await priceFor(a, dupont.client_id);

    const brokerA = await broker(a);
    expect((await clientsOf(brokerA)).data.map((c) => c.client_id)).toEqual([dupont.client_id]);
    expect((await clientsOf(b.console)).data).toEqual([]);
    expect(await quotesOf(b.console)).toEqual([]);
    const opportunitiesOfB = (await json(await b.console.request(`${C}/opportunities`))) as { data: unknown[] };
    expect(opportunitiesOfB.data).toEqual([]);

    await expectErrorResponse(await b.console.request(`${C}/clients/${dupont.client_id}`), 404, 'not_found');
    await expectErrorResponse(
      await b.console.request(`${C}/clients/${dupont.client_id}`, { method: 'PATCH', json: { phone: '0600000000' } }),
      404,
      'not_found',
    );
    await expectErrorResponse(await b.console.request(`${C}/clients/${dupont.client_id}`, { method: 'DELETE' }), 404, 'not_found');
    await expectErrorResponse(await b.console.request(`${C}/clients/${dupont.client_id}/opportunities`), 404, 'not_found');
    await expectErrorResponse(
      await b.console.request(`${C}/opportunities/${String(opp.body.id)}`, { method: 'PATCH', json: { stage: 'won' } }),
      404,
      'not_found',
    );
    await expectErrorResponse(await b.console.request(`${C}/devis/${quote.devis_id}`), 404, 'not_found');
    await expectErrorResponse(await b.console.request(`${C}/devis/${quote.devis_id}/sign`, { method: 'POST', json: {} }), 404, 'not_found');
    await expectErrorResponse(await b.console.request(`${C}/devis/${quote.devis_id}/pdf`), 404, 'not_found');
    // Nothing of A's changed.
    expect(clientSchema.parse(await json(await brokerA.request(`${C}/clients/${dupont.client_id}`)))).toEqual(dupont);
  });
});

describe('console records: clients', () => {
  it('searches by name, first name, company and email, case-insensitively, and pages with the search', async () => {
    const cab = await cabinet();
    const dupont = await apiClientCreate(cab, { last_name: 'Dupont', first_name: 'Jean' });
    const dupontAignan = await apiClientCreate(cab, { last_name: 'Dupont-Aignan', email: 'nda@example.fr' });
    const martin = await apiClientCreate(cab, { last_name: 'Martin', email: 'contact@dupontetfils.fr' });
    const acme = await apiClientCreate(cab, { type: 'company', company_name: 'Garage 100%_Auto' });
    await apiClientCreate(cab, { last_name: 'Durand' });

    const ids = async (q: string) => (await clientsOf(cab.console, `?q=${encodeURIComponent(q)}`)).data.map((c) => c.client_id);
    expect(await ids('DUPONT')).toEqual([martin.client_id, dupontAignan.client_id, dupont.client_id]);
    expect(await ids('jean')).toEqual([dupont.client_id]);
    expect(await ids('100%_')).toEqual([acme.client_id]);
    // % and _ match themselves, not "anything".
    expect(await ids('%')).toEqual([acme.client_id]);
    expect(await ids('_')).toEqual([acme.client_id]);
    expect(await ids('nobody')).toEqual([]);

    const first = await clientsOf(cab.console, '?q=dupont&limit=2');
    expect(first.data.map((c) => c.client_id)).toEqual([martin.client_id, dupontAignan.client_id]);
    const second = await clientsOf(cab.console, `?q=dupont&limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`);
    expect(second.data.map((c) => c.client_id)).toEqual([dupont.client_id]);
    expect(second.next_cursor).toBeNull();
    // The cursor is bound to its search.
    await expectErrorResponse(
      await cab.console.request(`${C}/clients?q=martin&cursor=${encodeURIComponent(first.next_cursor ?? '')}`),
      400,
      'invalid_cursor',
    );
    await expectErrorResponse(await cab.console.request(`${C}/clients?q=${encodeURIComponent('   ')}`), 400, 'validation_error');
    // The REST API searches the same way.
    const viaApi = await cab.api.get('/clients?q=dupont');
    expect((viaApi.body.data as Client[]).map((c) => c.client_id)).toEqual([martin.client_id, dupontAignan.client_id, dupont.client_id]);
  });

  it('creates, edits and erases a client; bad input is a 400 naming the field, with nothing written', async () => {
    const cab = await cabinet();
    const res = await cab.console.request(`${C}/clients`, {
      method: 'POST',
      json: { last_name: 'Dupont', first_name: 'Jeanne', email: 'jeanne@example.fr', phone: '06 12 34 56 78' },
    });
    expect(res.status).toBe(201);
    const created = clientSchema.parse(await json(res));
    expect(created).toMatchObject({ type: 'person', last_name: 'Dupont', first_name: 'Jeanne' });

    const before = tableCount('clients', cab.user.cabinetId);
    const eventsBefore = tableCount('events', cab.user.cabinetId);
    for (const body of [
      { type: 'company', last_name: 'Sans Raison' },
      { last_name: 'Dupont', email: 'not-an-email' },
      { last_name: 'X', siret: '123' },
      { nope: 1 },
    ]) {
      const bad = await cab.console.request(`${C}/clients`, { method: 'POST', json: body });
      await expectErrorResponse(bad, 400, 'validation_error');
    }
    const bad = await cab.console.request(`${C}/clients`, { method: 'POST', json: { type: 'company' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await json(bad))).toContain('body.company_name');
    expect(tableCount('clients', cab.user.cabinetId)).toBe(before);

    // Edit: the REST API's PATCH rules (null clears; a person keeps a last_name).
    await expectErrorResponse(
      await cab.console.request(`${C}/clients/${created.client_id}`, { method: 'PATCH', json: { last_name: null } }),
      400,
      'validation_error',
    );
    await expectErrorResponse(
      await cab.console.request(`${C}/clients/${created.client_id}`, { method: 'PATCH', json: {} }),
      400,
      'validation_error',
    );
    await expectErrorResponse(
      await cab.console.request(`${C}/clients/not-a-uuid`, { method: 'PATCH', json: { phone: null } }),
      400,
      'validation_error',
    );
    expect(tableCount('events', cab.user.cabinetId)).toBe(eventsBefore);
    const patched = await cab.console.request(`${C}/clients/${created.client_id}`, {
      method: 'PATCH',
      json: { phone: null, address: { line1: '3 rue de la Paix', postcode: '75002', city: 'Paris' } },
    });
    expect(patched.status).toBe(200);
    expect(clientSchema.parse(await json(patched))).toMatchObject({
      phone: null,
      address: { line1: '3 rue de la Paix', line2: null, postcode: '75002', city: 'Paris', country: 'FR' },
    });
    // The same event as a change through the REST API.
    expect(eventCount('client.updated', cab.user.cabinetId)).toBe(1);

    // Erase: 204, then gone for every reader; erasing again is 204 too.
    expect((await cab.console.request(`${C}/clients/${created.client_id}`, { method: 'DELETE' })).status).toBe(204);
    await expectErrorResponse(await cab.console.request(`${C}/clients/${created.client_id}`), 404, 'not_found');
    expect((await clientsOf(cab.console)).data).toEqual([]);
    expect((await cab.console.request(`${C}/clients/${created.client_id}`, { method: 'DELETE' })).status).toBe(204);
    const row = server.deps.db.sqlite
      .prepare('SELECT last_name, email, erased_at FROM clients WHERE id = ?')
      .get(created.client_id) as Record<string, unknown>;
    expect(row.last_name).toBeNull();
    expect(row.email).toBeNull();
    expect(row.erased_at).not.toBeNull();
  });
});

describe('console records: opportunities', () => {
  it('creates one from the console (created_via console), moves it between stages, and keeps won and lost final unless reopened', async () => {
    const cab = await cabinet();
    const res = await cab.console.request(`${C}/opportunities`, {
      method: 'POST',
      json: { title: 'Flotte Garage Martin', product: 'auto', contact: { last_name: 'Martin' }, expected_value_eur: 1200.5 },
    });
    expect(res.status).toBe(201);
    const opp = opportunitySchema.parse(await json(res));
    expect(opp).toMatchObject({ stage: 'new', created_via: 'console', source: 'console', expected_value_eur: 1200.5 });
    await expectErrorResponse(
      await cab.console.request(`${C}/opportunities`, { method: 'POST', json: { title: 'Sans contact', product: 'auto' } }),
      400,
      'validation_error',
    );
    expect(tableCount('opportunities', cab.user.cabinetId)).toBe(1);

    const move = (body: Record<string, unknown>) => cab.console.request(`${C}/opportunities/${opp.id}`, { method: 'PATCH', json: body });
    for (const stage of ['qualified', 'negotiation', 'won'] as const) {
      const moved = await move({ stage });
      expect(moved.status).toBe(200);
      expect(opportunitySchema.parse(await json(moved)).stage).toBe(stage);
    }
    await expectErrorResponse(await move({ stage: 'quoted' }), 409, 'invalid_stage_transition');
    await expectErrorResponse(await move({ stage: 'archived' }), 400, 'validation_error');
    expect(opportunitySchema.parse(await json(await cab.console.request(`${C}/opportunities/${opp.id}`))).stage).toBe('won');
    const reopened = await move({ stage: 'quoted', reopen: true });
    expect(reopened.status).toBe(200);
    expect(opportunitySchema.parse(await json(reopened)).stage).toBe('quoted');

    // Listed by stage, as the REST API lists them.
    const quoted = (await json(await cab.console.request(`${C}/opportunities?stage=quoted`))) as { data: Opportunity[] };
    expect(quoted.data.map((o) => o.id)).toEqual([opp.id]);
    expect(eventCount('opportunity.stage_changed', cab.user.cabinetId)).toBe(4);
    expect(eventCount('opportunity.won', cab.user.cabinetId)).toBe(1);
  });

  it('a client’s opportunities: those its quotes name, and those whose contact has its email or SIRET', async () => {
    const cab = await cabinet();
    const dupont = await apiClientCreate(cab, { last_name: 'Dupont', email: 'Jean.Dupont@example.fr' });
    const company = await apiClientCreate(cab, { type: 'company', company_name: 'Dupont SA', siret: '73282932000074' });
    const byEmail = await cab.api.post('/opportunities', {
      title: 'Habitation',
      product: 'mrh',
      contact: { last_name: 'Dupont', email: 'jean.dupont@EXAMPLE.fr' },
    });
    const bySiret = await cab.api.post('/opportunities', {
      title: 'Flotte',
      product: 'auto',
      contact: { last_name: 'Dupont', siret: '732 829 320 00074' },
    });
    const byQuote = await cab.api.post('/opportunities', { title: 'Sans coordonnées', product: 'auto', contact: { last_name: 'Autre' } });
    await cab.api.post('/opportunities', { title: 'Homonyme', product: 'auto', contact: { last_name: 'Dupont' } });
    const draft = await cab.api.post('/devis', {
      client_id: dupont.client_id,
      compagnie: 'testco',
      produit: 'auto',
      opportunity_id: byQuote.body.id,
    });
    expect(draft.status).toBe(201);

    const of = async (clientId: string) =>
      ((await json(await cab.console.request(`${C}/clients/${clientId}/opportunities`))) as { data: Opportunity[] }).data.map(
        (o) => o.title,
      );
    expect(await of(dupont.client_id)).toEqual(['Sans coordonnées', 'Habitation']);
    expect(await of(company.client_id)).toEqual(['Flotte']);
    expect(bySiret.status).toBe(201);
    expect(byEmail.status).toBe(201);
  });
});

describe('console records: quotes', () => {
  it('lists quotes with the client’s name, the product’s label and the job that priced them; filters by status and client; signs; downloads the PDF under a human name', async () => {
    const cab = await cabinet();
    const dupont = await apiClientCreate(cab, { last_name: 'Dupont', first_name: 'Jean' });
    const garage = await apiClientCreate(cab, { type: 'company', company_name: 'Garage Lefèvre & Fils' });
    const draft = await cab.api.post('/devis', { client_id: garage.client_id, compagnie: 'testco', produit: 'auto' });
    const priced = await priceFor(cab, dupont.client_id);
    expect(priced).toMatchObject({
      status: 'priced',
      client_name: 'Jean Dupont',
      client_erased: false,
      product_label: 'Assurance auto',
      insurer_name: 'Test Assurances',
      pdf_available: true,
    });
    expect(priced.job).toMatchObject({ status: 'completed' });

    const all = await quotesOf(cab.console);
    expect(all.map((q) => [q.devis_id, q.client_name, q.status])).toEqual([
      [priced.devis_id, 'Jean Dupont', 'priced'],
      [String(draft.body.id), 'Garage Lefèvre & Fils', 'draft'],
    ]);
    expect((await quotesOf(cab.console, '?status=draft')).map((q) => q.devis_id)).toEqual([String(draft.body.id)]);
    expect((await quotesOf(cab.console, `?client_id=${dupont.client_id}`)).map((q) => q.devis_id)).toEqual([priced.devis_id]);
    await expectErrorResponse(await cab.console.request(`${C}/devis?status=sent`), 400, 'validation_error');

    // The PDF is named after the client's last name, the product and the day it was priced.
    const pdf = await cab.console.request(`${C}/devis/${priced.devis_id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(Buffer.from(await pdf.arrayBuffer()).equals(TEST_PDF)).toBe(true);
    const day = new Date(Date.parse(priced.updated_at));
    const date = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
    expect(pdf.headers.get('content-disposition')).toBe(`attachment; filename="Devis_Dupont_Assurance-auto_${date}.pdf"`);
    await expectErrorResponse(await cab.console.request(`${C}/devis/${String(draft.body.id)}/pdf`), 404, 'pdf_not_available');

    // Signing: a draft cannot be signed; the priced one can, once.
    await expectErrorResponse(
      await cab.console.request(`${C}/devis/${String(draft.body.id)}/sign`, { method: 'POST', json: {} }),
      409,
      'invalid_devis_transition',
    );
    const signed = await cab.console.request(`${C}/devis/${priced.devis_id}/sign`, { method: 'POST', json: {} });
    expect(signed.status).toBe(200);
    expect(consoleDevisSchema.parse(await json(signed))).toMatchObject({ status: 'signed', client_name: 'Jean Dupont' });
    await expectErrorResponse(
      await cab.console.request(`${C}/devis/${priced.devis_id}/sign`, { method: 'POST', json: {} }),
      409,
      'invalid_devis_transition',
    );
    expect(tableCount('contracts', cab.user.cabinetId)).toBe(1);

    // An erased client's quote stays, without a name.
    expect((await cab.console.request(`${C}/clients/${dupont.client_id}`, { method: 'DELETE' })).status).toBe(204);
    const after = consoleDevisSchema.parse(await json(await cab.console.request(`${C}/devis/${priced.devis_id}`)));
    expect(after).toMatchObject({ client_id: dupont.client_id, client_name: null, client_erased: true, status: 'signed' });
    expect((await cab.console.request(`${C}/devis/${priced.devis_id}/pdf`)).headers.get('content-disposition')).toBe(
      `attachment; filename="Devis_Assurance-auto_${date}.pdf"`,
    );
  });

  it('attaches a client to a quote priced without one, once, so that it can be signed; never an erased client or another cabinet’s', async () => {
    const cab = await cabinet();
    const other = await cabinet();
    const bare = await priceFor(cab, undefined, '69004');
    expect(bare).toMatchObject({ status: 'priced', client_id: null, client_name: null });
    const attach = (as: Cabinet, devisId: string, clientId: string) =>
      as.console.request(`${C}/devis/${devisId}/client`, { method: 'POST', json: { client_id: clientId } });
    const gone = await apiClientCreate(cab, { last_name: 'Parti' });
    expect((await cab.console.request(`${C}/clients/${gone.client_id}`, { method: 'DELETE' })).status).toBe(204);
    const theirs = await apiClientCreate(other, { last_name: 'Ailleurs' });
    for (const refused of [gone.client_id, theirs.client_id, randomUUID()])
      await expectErrorResponse(await attach(cab, bare.devis_id, refused), 400, 'validation_error');
    const bernard = await apiClientCreate(cab, { last_name: 'Bernard', first_name: 'Léon' });
    await expectErrorResponse(await attach(other, bare.devis_id, theirs.client_id), 404, 'not_found');
    const attached = await attach(cab, bare.devis_id, bernard.client_id);
    expect(attached.status).toBe(200);
    expect(consoleDevisSchema.parse(await json(attached))).toMatchObject({ client_id: bernard.client_id, client_name: 'Léon Bernard' });
    // A quote's client never changes; the quote can be signed now.
    await expectErrorResponse(await attach(cab, bare.devis_id, bernard.client_id), 409, 'invalid_devis_transition');
    expect((await cab.console.request(`${C}/devis/${bare.devis_id}/sign`, { method: 'POST', json: {} })).status).toBe(200);
    expect((await quotesOf(cab.console, `?client_id=${bernard.client_id}`)).map((q) => q.devis_id)).toEqual([bare.devis_id]);
  });
});
