import Sqlite from 'better-sqlite3';
import fc from 'fast-check';
import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_CONTACT_FIELDS,
  clientSchema,
  isValidSiret,
  opportunitySchema,
  type Client,
  type ClientContactField,
  type Opportunity,
} from '../../shared/crm.js';
import {
  clientErasedPayload,
  clientUpdatedPayload,
  eventEnvelopeSchema,
  opportunityCreatedPayload,
  opportunityStagePayload,
} from '../../shared/events.js';
import { databaseFile } from '../../server/platform/db/open.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { apiClient, createOpportunity } from '../helpers/api.js';
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

/** A fleet lead of Dupont SARL, a second after the last record. */
async function createFleetOpportunity(fields: Record<string, unknown> = {}): Promise<Opportunity> {
  tick();
  return createOpportunity(api, { title: 'Flotte auto', contact, ...fields });
}

function lastEvents(n: number) {
  return listEvents(server.deps, cabinetId).slice(-n);
}

describe('opportunities', () => {
  it('creates one record carrying both the event names and the names list readers use', async () => {
    const o = await createFleetOpportunity({ expected_value_eur: 1234.5, tags: ['flotte', 'flotte', 'pro'], source: 'salon' });
    expect(o).toMatchObject({
      id: o.opportunity_id,
      name: 'Flotte auto',
      title: 'Flotte auto',
      amount: 1234.5,
      expected_value_eur: 1234.5,
      stage: 'new',
      tags: ['flotte', 'pro'],
      source: 'salon',
      created_via: 'api',
    });
    expect(o.contact).toEqual({
      last_name: 'Dupont',
      first_name: null,
      company_name: 'Dupont SARL',
      siret: VALID_SIRET,
      email: 'jd@dupont.fr',
      phone: null,
    });
    expect((await api.get(`/opportunities/${o.id}`)).body).toEqual(o);
  });

  it('writes opportunity.created in the outbox with exactly the payload of part 2.2', async () => {
    const o = await createFleetOpportunity();
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
      client_id: null,
      created_via: 'api',
    });
  });

  it('refuses bad input with one problem per field and writes nothing', async () => {
    const before = listEvents(server.deps, cabinetId).length;
    const res = await api.post('/opportunities', {
      title: '',
      product: 'auto',
      contact: { siret: '12345678901234' },
      expected_value_eur: 10.123,
      stage: 'done',
      extra: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    const paths = (res.body.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['body', 'body.contact.last_name', 'body.contact.siret', 'body.expected_value_eur', 'body.stage', 'body.title']);
    expect(listEvents(server.deps, cabinetId).length).toBe(before);
  });

  it('moves through open stages freely, and won/lost emit their events in addition to stage_changed', async () => {
    const o = await createFleetOpportunity();
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
    expect(opportunityStagePayload.strict().parse(events[0]?.data)).toMatchObject({
      opportunity_id: o.id,
      previous_stage: 'new',
      stage: 'won',
    });

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
    const o = await createFleetOpportunity();
    const count = listEvents(server.deps, cabinetId).length;
    tick();
    const res = await api.patch(`/opportunities/${o.id}`, {
      title: 'Flotte auto 12 véhicules',
      expected_value_eur: 9800,
      contact: { phone: '+33 6 12 34 56 78' },
    });
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
    expect(bad.body.details).toEqual([
      expect.objectContaining({ path: 'path.opportunity_id', message: expect.any(String), code: expect.any(String) }),
    ]);
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
      const res = await list.post('/opportunities', {
        title: `O${i}`,
        product: 'mrh',
        contact: { last_name: `N${i}` },
        stage: i < 3 ? 'qualified' : 'new',
      });
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
    expect(clientSchema.strict().parse(person.body)).toMatchObject({
      type: 'person',
      last_name: 'Martin',
      birth_date: '1984-03-09',
      address: { line1: '3 rue des Lilas', line2: null, postcode: '69003', city: 'Lyon', country: 'FR' },
    });
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
      expect(
        (res.body.details as { path: string }[]).map((d) => d.path),
        JSON.stringify(body),
      ).toContain(path);
    }
  });

  it('accepts La Poste SIRETs, whose key follows their own rule', async () => {
    const res = await api.post('/clients', { type: 'company', company_name: 'La Poste Lyon', siret: '35600000049837' });
    expect(res.status).toBe(201);
  });
});

describe('changing and erasing clients', () => {
  /** A value no other test uses: finding it anywhere in the file means it is this client's. */
  const unique = (prefix: string) => `${prefix}${randomUUID().slice(0, 8)}`;

  /** A SIRET no other test uses: 13 random digits and the key digit that makes its Luhn sum right. */
  function uniqueSiret(): string {
    const body = `1${String(randomInt(0, 1e12)).padStart(12, '0')}`;
    for (let key = 0; key < 10; key++) if (isValidSiret(`${body}${key}`)) return `${body}${key}`;
    throw new Error('no Luhn key');
  }

  async function newClient(body: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Client> {
    tick();
    const res = await api.post('/clients', { last_name: 'Moreau', ...body }, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return clientSchema.strict().parse(res.body);
  }

  /** The client's row as the SQLite file holds it, read through a connection of its own. */
  function rawRow(id: string): Record<string, unknown> | undefined {
    const file = new Sqlite(databaseFile(server.dataDir), { readonly: true, fileMustExist: true });
    try {
      return file.prepare('SELECT * FROM clients WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    } finally {
      file.close();
    }
  }

  const eventCount = () => listEvents(server.deps, cabinetId).length;

  async function listedIds(query: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.get(`/clients?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      ids.push(...(res.body.data as { id: string }[]).map((c) => c.id));
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    return ids;
  }

  it('PATCH changes the fields given, leaves the others, answers the client and emits client.updated with changed_fields', async () => {
    const created = await newClient({
      first_name: 'Luc',
      email: 'luc.moreau@example.fr',
      birth_date: '1979-06-01',
      address: { line1: '1 place Bellecour', postcode: '69002', city: 'Lyon' },
    });
    tick();
    const res = await api.patch(`/clients/${created.id}`, { email: 'l.moreau@example.fr', phone: '+33 4 78 00 00 00' });
    expect(res.status).toBe(200);
    const updated = clientSchema.strict().parse(res.body);
    expect(updated).toEqual({
      ...created,
      email: 'l.moreau@example.fr',
      phone: '+33 4 78 00 00 00',
      updated_at: new Date(clock.now()).toISOString(),
    });
    expect((await api.get(`/clients/${created.id}`)).body).toEqual(updated);
    const [event] = lastEvents(1);
    expect(eventEnvelopeSchema.parse(event)).toMatchObject({ type: 'client.updated', version: 'v1', cabinet_id: cabinetId });
    expect(clientUpdatedPayload.strict().parse(event?.data)).toEqual({ ...updated, changed_fields: ['email', 'phone'] });
  });

  it('changes each contact field alone, validated as at creation, and null clears each optional one', async () => {
    const person = await newClient();
    const values: Record<ClientContactField, [sent: unknown, stored: unknown]> = {
      last_name: ['  Morel ', 'Morel'],
      first_name: ['Anne', 'Anne'],
      company_name: ['Morel Conseil', 'Morel Conseil'],
      siret: ['732 829 320 00074', VALID_SIRET],
      email: ['anne.morel@example.fr', 'anne.morel@example.fr'],
      phone: ['06 11 22 33 44', '06 11 22 33 44'],
      address: [
        { line1: '8 quai Claude Bernard', postcode: '69007', city: 'Lyon' },
        { line1: '8 quai Claude Bernard', line2: null, postcode: '69007', city: 'Lyon', country: 'FR' },
      ],
      birth_date: ['1990-12-31', '1990-12-31'],
    };
    for (const field of CLIENT_CONTACT_FIELDS) {
      const [sent, stored] = values[field];
      tick();
      const res = await api.patch(`/clients/${person.id}`, { [field]: sent });
      expect(res.status, field).toBe(200);
      expect(res.body[field], field).toEqual(stored);
      expect(lastEvents(1)[0]?.data, field).toEqual({ ...res.body, changed_fields: [field] });
    }
    for (const field of CLIENT_CONTACT_FIELDS.filter((f) => f !== 'last_name')) {
      const res = await api.patch(`/clients/${person.id}`, { [field]: null });
      expect(res.status, field).toBe(200);
      expect(res.body[field], field).toBeNull();
      expect(lastEvents(1)[0]?.data.changed_fields, field).toEqual([field]);
    }
    // A company's last_name is optional: null clears it.
    const company = await newClient({ type: 'company', company_name: 'Morel SA' });
    expect((await api.patch(`/clients/${company.id}`, { last_name: null })).body.last_name).toBeNull();
  });

  it('a change that changes no value writes nothing and emits nothing', async () => {
    const client = await newClient({ email: 'same@example.fr', address: { line1: '2 rue Neuve', postcode: '69001', city: 'Lyon' } });
    const before = eventCount();
    tick();
    const res = await api.patch(`/clients/${client.id}`, {
      email: 'same@example.fr',
      address: { line1: '2 rue Neuve', postcode: '69001', city: 'Lyon', country: 'FR' },
      first_name: null,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(client);
    expect(eventCount()).toBe(before);
  });

  it('keeps the rules of the type and of each field: 400 validation_error naming the field, nothing written', async () => {
    const person = await newClient();
    const company = await newClient({ type: 'company', company_name: 'Morel SA' });
    const rows = new Map([person, company].map((c) => [c.id, rawRow(c.id)]));
    const before = eventCount();
    const cases: [Client, Record<string, unknown>, string][] = [
      [person, { last_name: null }, 'body.last_name'],
      [company, { company_name: null }, 'body.company_name'],
      [company, { birth_date: '1990-01-01' }, 'body.birth_date'],
      [person, { type: 'company' }, 'body'],
      [person, {}, 'body'],
      [person, { first_name: 'Léa', email: 'not-an-email' }, 'body.email'],
      [person, { siret: '73282932000075' }, 'body.siret'],
    ];
    for (const [client, body, path] of cases) {
      const res = await api.patch(`/clients/${client.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(
        (res.body.details as { path: string }[]).map((d) => d.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    for (const [id, row] of rows) expect(rawRow(id)).toEqual(row);
    expect(eventCount()).toBe(before);
  });

  it('answers any bad change with a 400 on body fields only, and writes nothing (property)', async () => {
    const person = await newClient({ first_name: 'Paul', email: 'paul.moreau@example.fr' });
    const row = rawRow(person.id);
    const before = eventCount();
    const invalid: Record<ClientContactField, unknown[]> = {
      // null: a person keeps a last_name (the service's rule, after zod's).
      last_name: ['', '   ', 'x'.repeat(201), 42, null, ['Moreau']],
      first_name: ['', 'x'.repeat(201), false],
      company_name: ['', { name: 'X' }],
      siret: ['73282932000075', '7328293200007', 'abcdefghijklmn', 73282932000074],
      email: ['not-an-email', '', 'a@', `${'x'.repeat(250)}@example.fr`],
      phone: ['abc', '12', '+33 6 12 34 56 78 90 12 34 56 78 90'],
      address: [
        'Lyon',
        {},
        { line1: 'x', city: 'Lyon' },
        { line1: 'x', postcode: '!!', city: 'Lyon' },
        { line1: 'x', postcode: '69003', city: 'Lyon', country: 'France' },
        { line1: 'x', postcode: '69003', city: 'Lyon', floor: 2 },
      ],
      birth_date: ['1984-02-30', '2999-01-01', '1899-12-31', '09/03/1984', 19840309],
    };
    const valid: Record<ClientContactField, unknown[]> = {
      last_name: ['Morel'],
      first_name: [null, 'Léa'],
      company_name: [null, 'Morel Conseil'],
      siret: [null, VALID_SIRET],
      email: [null, 'lea@example.fr'],
      phone: [null, '04 78 00 00 00'],
      address: [null, { line1: '1 rue X', postcode: '69001', city: 'Lyon' }],
      birth_date: [null, '1985-05-05'],
    };
    const fields = (pool: Record<ClientContactField, unknown[]>) =>
      fc.record(
        Object.fromEntries(CLIENT_CONTACT_FIELDS.map((f) => [f, fc.constantFrom(...pool[f])])) as Record<
          ClientContactField,
          fc.Arbitrary<unknown>
        >,
        { requiredKeys: [] },
      );
    const notContactFields = fc.record(
      { type: fc.constant('company'), id: fc.uuid(), erased_at: fc.constant(null), colour: fc.constant('red') },
      { requiredKeys: [] },
    );
    const badPatch = fc
      .tuple(fields(valid), fields(invalid), notContactFields)
      .filter(([, bad, extra]) => Object.keys(bad).length + Object.keys(extra).length > 0)
      .map(([good, bad, extra]) => ({ ...good, ...bad, ...extra }));
    await fc.assert(
      fc.asyncProperty(badPatch, async (patch) => {
        const res = await api.patch(`/clients/${person.id}`, patch);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('validation_error');
        const paths = (res.body.details as { path: string }[]).map((d) => d.path);
        expect(paths.length).toBeGreaterThan(0);
        for (const path of paths) expect(path === 'body' || path.startsWith('body.'), path).toBe(true);
        expect(eventCount()).toBe(before);
      }),
      { numRuns: 150 },
    );
    expect(rawRow(person.id)).toEqual(row);
    expect((await api.get(`/clients/${person.id}`)).body).toEqual(person);
  });

  it('404 not_found for an unknown client or another cabinet’s, on PATCH and DELETE; 400 for a malformed id', async () => {
    const ghost = '6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f';
    for (const res of [await api.patch(`/clients/${ghost}`, { first_name: 'X' }), await api.delete(`/clients/${ghost}`)]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    expect((await api.delete('/clients/12')).body.details).toEqual([
      expect.objectContaining({ path: 'path.client_id', message: expect.any(String), code: expect.any(String) }),
    ]);
    const client = await newClient();
    const other = apiClient(server, server.createKey(await server.createCabinet('Autre cabinet')).key);
    expect((await other.patch(`/clients/${client.id}`, { first_name: 'X' })).body.error).toBe('not_found');
    expect((await other.delete(`/clients/${client.id}`)).body.error).toBe('not_found');
    expect((await api.get(`/clients/${client.id}`)).body).toEqual(client);
  });

  it('erasure wipes every personal field from the SQLite file, earlier events and stored creation included; the row stays as a tombstone', async () => {
    const personal = {
      last_name: unique('Nom'),
      first_name: unique('Prenom'),
      company_name: unique('Societe'),
      siret: uniqueSiret(),
      email: `${unique('mail')}@example.fr`,
      phone: `06 ${String(randomInt(0, 1e8)).padStart(8, '0')}`,
      address: { line1: unique('Rue'), line2: unique('Bat'), postcode: unique('P'), city: unique('Ville') },
      birth_date: '1957-03-14',
    };
    const idempotencyKey = randomUUID();
    const created = await newClient(personal, { 'Idempotency-Key': idempotencyKey });
    const newEmail = `${unique('nouveau')}@example.fr`;
    expect((await api.patch(`/clients/${created.id}`, { email: newEmail })).status).toBe(200);
    tick();

    const erased = await api.delete(`/clients/${created.id}`);
    expect(erased.status).toBe(204);
    expect(erased.body).toBeUndefined();

    const row = rawRow(created.id);
    const kept = {
      id: created.id,
      cabinet_id: cabinetId,
      type: 'person',
      created_at: Date.parse(created.created_at),
      updated_at: clock.now(),
      erased_at: clock.now(),
    };
    expect(row).toMatchObject(kept);
    // Every other column is personal, whatever columns a later version adds.
    for (const [column, value] of Object.entries(row ?? {})) if (!(column in kept)) expect(value, column).toBeNull();

    const [event] = lastEvents(1);
    expect(event?.type).toBe('client.erased');
    expect(clientErasedPayload.strict().parse(event?.data)).toEqual({
      client_id: created.id,
      erased_at: new Date(clock.now()).toISOString(),
    });
    const updates = listEvents(server.deps, cabinetId).filter((e) => e.type === 'client.updated' && e.data.client_id === created.id);
    expect(updates).toHaveLength(1);
    const scrubbed = clientUpdatedPayload.strict().parse(updates[0]?.data);
    expect(scrubbed).toMatchObject({ client_id: created.id, type: 'person', changed_fields: ['email'] });
    for (const field of CLIENT_CONTACT_FIELDS) expect(scrubbed[field], field).toBeNull();

    // The creation's replay answers the erased client.
    const replay = await api.post('/clients', personal, { 'Idempotency-Key': idempotencyKey });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toMatchObject({ id: created.id, last_name: null, email: null, address: null });

    // Until a checkpoint, the write-ahead log still holds the pages as they were before the erasure.
    server.deps.db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const file = databaseFile(server.dataDir);
    const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`)]).toString('latin1');
    const values = [...Object.values(personal).flatMap((v) => (typeof v === 'string' ? [v] : Object.values(v))), newEmail];
    for (const value of values) expect(bytes.includes(value), value).toBe(false);
  });

  it('erasing through the API empties what the client’s quotes and opportunities hold of them, and an unsigned quote’s PDF; a signed quote keeps its PDF', async () => {
    const email = `${unique('efface')}@example.fr`;
    const client = await newClient({ last_name: 'Quintavalle', email });
    const opportunity = await api.post('/opportunities', {
      title: 'Auto',
      product: 'auto',
      contact: { last_name: 'Quintavalle', email: email.toUpperCase() },
    });
    const key = randomUUID();
    const quote = (dicData: Record<string, unknown>, headers: Record<string, string> = {}) =>
      api.post(
        '/devis',
        { client_id: client.id, compagnie: 'sandbox', produit: 'auto', opportunity_id: opportunity.body.id, dicData },
        headers,
      );
    const priced = await quote({ insured_name: 'Quintavalle' }, { 'Idempotency-Key': key });
    const signed = await quote({ insured_name: 'Quintavalle' });
    for (const id of [priced.body.id, signed.body.id])
      recordDevisPriced(server.deps, cabinetId, String(id), {
        tarifEur: 100,
        suspens: 'Permis de Quintavalle',
        pdf: Buffer.from('%PDF-1.4 Quintavalle'),
      });
    expect((await api.post(`/devis/${String(signed.body.id)}/sign`, {})).status).toBe(200);

    expect((await api.delete(`/clients/${client.id}`)).status).toBe(204);
    expect((await api.get(`/opportunities/${String(opportunity.body.id)}`)).body.contact).toEqual({
      last_name: '',
      first_name: null,
      company_name: null,
      siret: null,
      email: null,
      phone: null,
    });
    expect((await api.get(`/devis/${String(priced.body.id)}`)).body).toMatchObject({
      dicData: {},
      suspens: null,
      pdf_available: false,
      status: 'priced',
      tarif_eur: 100,
    });
    expect((await api.get(`/devis/${String(signed.body.id)}`)).body).toMatchObject({
      dicData: {},
      suspens: null,
      pdf_available: true,
      status: 'signed',
    });
    expect((await api.get(`/devis/${String(priced.body.id)}/pdf`)).body.error).toBe('pdf_not_available');
    expect((await api.get(`/devis/${String(signed.body.id)}/pdf`)).status).toBe(302);
    // The creation's replay answers the quote as it is now.
    const replay = await quote({ insured_name: 'Quintavalle' }, { 'Idempotency-Key': key });
    expect(replay.body).toMatchObject({ id: priced.body.id, dicData: {} });
  });

  it('erasing an erased client answers 204 again, changes nothing and emits nothing', async () => {
    const client = await newClient();
    expect((await api.delete(`/clients/${client.id}`)).status).toBe(204);
    const row = rawRow(client.id);
    const before = eventCount();
    tick();
    const again = await api.delete(`/clients/${client.id}`);
    expect(again.status).toBe(204);
    expect(rawRow(client.id)).toEqual(row);
    expect(eventCount()).toBe(before);
  });

  it('an erased client is gone: GET and PATCH 404, left out of lists, refused by new quotes as an unknown one; its quotes keep client_id', async () => {
    const client = await newClient({ type: 'company', company_name: unique('Partie') });
    const quote = await api.post('/devis', { client_id: client.id, compagnie: 'sandbox', produit: 'auto' });
    expect(quote.status).toBe(201);
    expect(await listedIds('&type=company')).toContain(client.id);
    expect((await api.delete(`/clients/${client.id}`)).status).toBe(204);

    expect(await api.get(`/clients/${client.id}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await api.patch(`/clients/${client.id}`, { first_name: 'X' })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await listedIds('')).not.toContain(client.id);
    expect(await listedIds('&type=company')).not.toContain(client.id);

    const ghost = randomUUID();
    const refused = await api.post('/devis', { client_id: client.id, compagnie: 'sandbox', produit: 'auto' });
    const unknown = await api.post('/devis', { client_id: ghost, compagnie: 'sandbox', produit: 'auto' });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([{ path: 'body.client_id', message: `no client with id ${client.id} in this cabinet` }]);
    expect(unknown.body.details).toEqual([{ path: 'body.client_id', message: `no client with id ${ghost} in this cabinet` }]);
    expect((await api.get(`/devis/${String(quote.body.id)}`)).body.client_id).toBe(client.id);
  });

  it('a crm:read key gets 403 insufficient_scope on PATCH and DELETE, and nothing changes', async () => {
    const client = await newClient();
    const reader = apiClient(server, server.createKey(cabinetId, { scopes: ['crm:read'] }).key);
    for (const res of [await reader.patch(`/clients/${client.id}`, { first_name: 'X' }), await reader.delete(`/clients/${client.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('insufficient_scope');
    }
    expect((await reader.get(`/clients/${client.id}`)).body).toEqual(client);
  });
});
