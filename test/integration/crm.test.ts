import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchema, opportunitySchema, type Opportunity } from '../../shared/crm.js';
import { eventEnvelopeSchema, opportunityCreatedPayload, opportunityStagePayload } from '../../shared/events.js';
import { listEvents } from '../../server/events/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, tempDir, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let cabinetId: string;
let api: ReturnType<typeof apiClient>;

const VALID_SIRET = '73282932000074';
const contact = { last_name: 'Dupont', company_name: 'Dupont SARL', siret: VALID_SIRET, email: 'jd@dupont.fr' };

beforeAll(async () => {
  server = await startTestServer({ clock });
  cabinetId = await server.createCabinet();
  api = apiClient(server, server.createKey(cabinetId).key);
});
afterAll(() => server.close());

function tick(): void {
  clock.advance(1000);
}

async function createOpportunity(body: Record<string, unknown> = {}): Promise<Opportunity> {
  tick();
  const res = await api.post('/opportunities', { title: 'Flotte auto', product: 'auto', contact, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return opportunitySchema.strict().parse(res.body);
}

function lastEvents(n: number) {
  return listEvents(server.deps, cabinetId).slice(-n);
}

describe('opportunities', () => {
  it('creates one record carrying both the event names and the names list readers use', async () => {
    const o = await createOpportunity({ expected_value_eur: 1234.5, tags: ['flotte', 'flotte', 'pro'], source: 'salon' });
    expect(o).toMatchObject({ id: o.opportunity_id, name: 'Flotte auto', title: 'Flotte auto', amount: 1234.5, expected_value_eur: 1234.5, stage: 'new', tags: ['flotte', 'pro'], source: 'salon', created_via: 'api' });
    expect(o.contact).toEqual({ last_name: 'Dupont', first_name: null, company_name: 'Dupont SARL', siret: VALID_SIRET, email: 'jd@dupont.fr', phone: null });
    expect((await api.get(`/opportunities/${o.id}`)).body).toEqual(o);
  });

  it('writes opportunity.created in the outbox with exactly the payload of part 2.2', async () => {
    const o = await createOpportunity();
    const [event] = lastEvents(1);
    const envelope = eventEnvelopeSchema.parse(event);
    expect(envelope).toMatchObject({ type: 'opportunity.created', version: 'v1', cabinet_id: cabinetId });
    expect(opportunityCreatedPayload.strict().parse(envelope.data)).toEqual({
      opportunity_id: o.id,
      title: 'Flotte auto',
      stage: 'new',
      expected_value_eur: 0,
      source: 'api',
      contact: { last_name: 'Dupont', company_name: 'Dupont SARL', siret: VALID_SIRET },
      tags: [],
      created_via: 'api',
    });
  });

  it('refuses bad input with one problem per field and writes nothing', async () => {
    const before = listEvents(server.deps, cabinetId).length;
    const res = await api.post('/opportunities', { title: '', product: 'auto', contact: { siret: '12345678901234' }, expected_value_eur: 10.123, stage: 'done', extra: true });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    const paths = (res.body.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['body', 'body.contact.last_name', 'body.contact.siret', 'body.expected_value_eur', 'body.stage', 'body.title']);
    expect(listEvents(server.deps, cabinetId).length).toBe(before);
  });

  it('moves through open stages freely, and won/lost emit their events in addition to stage_changed', async () => {
    const o = await createOpportunity();
    tick();
    const qualified = await api.patch(`/opportunities/${o.id}`, { stage: 'qualified' });
    expect(qualified.status).toBe(200);
    expect(lastEvents(1).map((e) => e.type)).toEqual(['opportunity.stage_changed']);
    const back = await api.patch(`/opportunities/${o.id}`, { stage: 'new' });
    expect(back.body.stage).toBe('new');

    const won = await api.patch(`/opportunities/${o.id}`, { stage: 'won' });
    expect(won.body.stage).toBe('won');
    const events = lastEvents(2);
    expect(events.map((e) => e.type)).toEqual(['opportunity.stage_changed', 'opportunity.won']);
    expect(opportunityStagePayload.strict().parse(events[0]?.data)).toMatchObject({ opportunity_id: o.id, previous_stage: 'new', stage: 'won' });

    const refused = await api.patch(`/opportunities/${o.id}`, { stage: 'negotiation' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('invalid_stage_transition');
    expect((await api.get(`/opportunities/${o.id}`)).body.stage).toBe('won');

    const reopened = await api.patch(`/opportunities/${o.id}`, { stage: 'negotiation', reopen: true });
    expect(reopened.status).toBe(200);
    const lost = await api.patch(`/opportunities/${o.id}`, { stage: 'lost' });
    expect(lost.status).toBe(200);
    expect(lastEvents(2).map((e) => e.type)).toEqual(['opportunity.stage_changed', 'opportunity.lost']);
    expect((await api.patch(`/opportunities/${o.id}`, { stage: 'won' })).body.error).toBe('invalid_stage_transition');
  });

  it('changes other fields without stage events, merging the contact', async () => {
    const o = await createOpportunity();
    const count = listEvents(server.deps, cabinetId).length;
    tick();
    const res = await api.patch(`/opportunities/${o.id}`, { title: 'Flotte auto 12 véhicules', expected_value_eur: 9800, contact: { phone: '+33 6 12 34 56 78' } });
    expect(res.status).toBe(200);
    const updated = opportunitySchema.parse(res.body);
    expect(updated).toMatchObject({ title: 'Flotte auto 12 véhicules', name: 'Flotte auto 12 véhicules', amount: 9800 });
    expect(updated.contact).toMatchObject({ last_name: 'Dupont', company_name: 'Dupont SARL', phone: '+33 6 12 34 56 78' });
    expect(updated.updated_at > updated.created_at).toBe(true);
    expect(listEvents(server.deps, cabinetId).length).toBe(count);
    expect((await api.patch(`/opportunities/${o.id}`, {})).body.error).toBe('validation_error');
    expect((await api.patch(`/opportunities/${o.id}`, { reopen: true })).body.error).toBe('validation_error');
  });

  it('404 for an unknown id, 400 for a malformed one', async () => {
    expect((await api.get('/opportunities/6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f')).body.error).toBe('not_found');
    expect((await api.patch('/opportunities/6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f', { title: 'x' })).body.error).toBe('not_found');
    const bad = await api.get('/opportunities/12');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ path: 'path.opportunity_id', message: expect.any(String) }]);
  });
});

describe('lists and cursors', () => {
  let ids: string[];
  let separate: TestServer;
  let list: ReturnType<typeof apiClient>;
  let key: string;
  const dataDir = tempDir();

  beforeAll(async () => {
    // A cabinet of its own, so that counts are exact.
    separate = await startTestServer({ clock, dataDir });
    const cabinet = await separate.createCabinet();
    key = separate.createKey(cabinet).key;
    list = apiClient(separate, key);
    ids = [];
    for (let i = 0; i < 7; i++) {
      // Two rows share each instant, so that the id breaks ties.
      if (i % 2 === 0) tick();
      const res = await list.post('/opportunities', { title: `O${i}`, product: 'mrh', contact: { last_name: `N${i}` }, stage: i < 3 ? 'qualified' : 'new' });
      ids.push(String(res.body.id));
    }
  });
  afterAll(async () => {
    await separate.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function walk(query: string, limit: number): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list.get(`/opportunities?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['count', 'data', 'has_more', 'next_cursor']);
      const data = res.body.data as { id: string }[];
      expect(res.body.count).toBe(data.length);
      seen.push(...data.map((d) => d.id));
      cursor = res.body.next_cursor as string | null;
      expect(res.body.has_more).toBe(cursor !== null);
    } while (cursor);
    return seen;
  }

  it('pages newest first on (created_at, id) with no duplicates and no gaps', async () => {
    const all = await walk('', 2);
    expect(all).toHaveLength(7);
    expect(new Set(all).size).toBe(7);
    const full = await list.get('/opportunities');
    expect((full.body.data as { id: string }[]).map((d) => d.id)).toEqual(all);
    expect(full.body).toMatchObject({ has_more: false, next_cursor: null, count: 7 });
    const createdAt = (full.body.data as { created_at: string }[]).map((d) => d.created_at);
    expect([...createdAt].sort().reverse()).toEqual(createdAt);
  });

  it('cursors stay valid as new rows arrive', async () => {
    const first = await list.get('/opportunities?limit=3');
    const firstIds = (first.body.data as { id: string }[]).map((d) => d.id);
    tick();
    const added = await list.post('/opportunities', { title: 'new arrival', product: 'auto', contact: { last_name: 'X' } });
    let rest: string[] = [];
    let cursor = first.body.next_cursor as string | null;
    while (cursor) {
      const page = await list.get(`/opportunities?limit=3&cursor=${encodeURIComponent(cursor)}`);
      rest = rest.concat((page.body.data as { id: string }[]).map((d) => d.id));
      cursor = page.body.next_cursor as string | null;
    }
    expect([...firstIds, ...rest].sort()).toEqual([...ids].sort());
    expect(rest).not.toContain(added.body.id);
  });

  it('filters by stage and created_after', async () => {
    const qualified = await walk('&stage=qualified', 2);
    expect(qualified.sort()).toEqual(ids.slice(0, 3).sort());
    const all = (await list.get('/opportunities?limit=100')).body.data as { id: string; created_at: string }[];
    const pivot = all[3]?.created_at ?? '';
    const after = (await list.get(`/opportunities?created_after=${encodeURIComponent(pivot)}`)).body.data as { created_at: string }[];
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((o) => o.created_at > pivot)).toBe(true);
    expect((await list.get('/opportunities?stage=archived')).body.error).toBe('validation_error');
    expect((await list.get('/opportunities?created_after=yesterday')).body.error).toBe('validation_error');
  });

  it('clamps limit to 1..100', async () => {
    expect((await list.get('/opportunities?limit=0')).body.count).toBe(1);
    expect((await list.get('/opportunities?limit=-5')).body.count).toBe(1);
    expect((await list.get('/opportunities?limit=100000')).body.count).toBe(8);
    expect((await list.get('/opportunities?limit=abc')).body.error).toBe('validation_error');
  });

  it('400 invalid_cursor for a forged, truncated, altered or cross-filter cursor', async () => {
    const page = await list.get('/opportunities?limit=2&stage=qualified');
    const cursor = String(page.body.next_cursor);
    const [payload = '', mac = ''] = cursor.split('.');
    const forgedPayload = Buffer.from(JSON.stringify([Date.now(), ids[0]])).toString('base64url');
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    const bad = [cursor.slice(0, -3), `${forgedPayload}.${mac}`, `${payload}.${flipped}`, 'not-a-cursor', `${cursor}.x`, `${payload}.`];
    for (const c of bad) {
      const res = await list.get(`/opportunities?limit=2&stage=qualified&cursor=${encodeURIComponent(c)}`);
      expect(res.status, c).toBe(400);
      expect(res.body.error).toBe('invalid_cursor');
    }
    for (const query of ['', '&stage=new', '&stage=qualified&created_after=2020-01-01T00:00:00Z']) {
      const res = await list.get(`/opportunities?limit=2${query}&cursor=${encodeURIComponent(cursor)}`);
      expect(res.body.error, query).toBe('invalid_cursor');
    }
    // The same cursor on another list is refused too.
    expect((await list.get(`/clients?cursor=${encodeURIComponent(cursor)}`)).body.error).toBe('invalid_cursor');
    // It survives a restart: the signing secret lives in the data dir.
    await separate.app.close();
    separate.deps.db.close();
    separate = await startTestServer({ clock, dataDir });
    list = apiClient(separate, key);
    const again = await list.get(`/opportunities?limit=2&stage=qualified&cursor=${encodeURIComponent(cursor)}`);
    expect(again.status).toBe(200);
    expect(again.body.count).toBe(1);
  });
});

describe('clients', () => {
  it('creates a person with address and birth date, and a company with a SIRET', async () => {
    tick();
    const person = await api.post('/clients', {
      first_name: 'Jeanne',
      last_name: 'Martin',
      email: 'jeanne.martin@example.fr',
      phone: '06 12 34 56 78',
      birth_date: '1984-03-09',
      address: { line1: '3 rue des Lilas', postcode: '69003', city: 'Lyon' },
    });
    expect(person.status).toBe(201);
    expect(clientSchema.strict().parse(person.body)).toMatchObject({ type: 'person', last_name: 'Martin', birth_date: '1984-03-09', address: { line1: '3 rue des Lilas', line2: null, postcode: '69003', city: 'Lyon', country: 'FR' } });
    tick();
    const company = await api.post('/clients', { type: 'company', company_name: 'Transports Leroy', siret: '732 829 320 00074' });
    expect(company.status).toBe(201);
    expect(company.body).toMatchObject({ type: 'company', company_name: 'Transports Leroy', siret: VALID_SIRET, last_name: null });
    expect((await api.get(`/clients/${String(company.body.id)}`)).body).toEqual(company.body);
    const companies = await api.get('/clients?type=company');
    expect((companies.body.data as { type: string }[]).every((c) => c.type === 'company')).toBe(true);
  });

  it('validates SIRET with its Luhn key, names per type, email and birth date', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'company', company_name: 'X', siret: '73282932000075' }, 'body.siret'],
      [{ type: 'company', company_name: 'X', siret: '7328293200007' }, 'body.siret'],
      [{ type: 'company' }, 'body.company_name'],
      [{ type: 'person' }, 'body.last_name'],
      [{ last_name: 'X', email: 'not-an-email' }, 'body.email'],
      [{ last_name: 'X', birth_date: '1984-02-30' }, 'body.birth_date'],
      [{ last_name: 'X', birth_date: '2999-01-01' }, 'body.birth_date'],
      [{ last_name: 'X', address: { line1: 'x', postcode: '69003', city: 'Lyon', country: 'France' } }, 'body.address.country'],
      [{ type: 'company', company_name: 'X', birth_date: '1990-01-01' }, 'body.birth_date'],
    ];
    for (const [body, path] of cases) {
      const res = await api.post('/clients', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((res.body.details as { path: string }[]).map((d) => d.path), JSON.stringify(body)).toContain(path);
    }
  });

  it('accepts La Poste SIRETs, whose key follows their own rule', async () => {
    const res = await api.post('/clients', { type: 'company', company_name: 'La Poste Lyon', siret: '35600000049837' });
    expect(res.status).toBe(201);
  });
});
