import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleOpportunitySchema } from '../../shared/console-records.js';
import { opportunitySchema } from '../../shared/crm.js';
import { opportunityNoteSchema } from '../../shared/opportunity-notes.js';
import { apiClient, json } from '../helpers/api.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser, type TestUser } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

/**
 * An opportunity's client (chosen among the cabinet's clients, never another cabinet's nor an
 * erased one) and its notes, through the REST API and the console over real HTTP on real SQLite:
 * bad input is a 4xx with a stable code and nothing written; another cabinet sees nothing; a
 * client's erasure empties its opportunities' contact and notes.
 */

const C = '/api/v1/console';
const clock = testClock();
let server: TestServer;

interface Cabinet {
  user: TestUser;
  console: ConsoleClient;
  api: ReturnType<typeof apiClient>;
}

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(() => server?.close());

async function cabinet(): Promise<Cabinet> {
  const user = await createUser(server, `Cabinet ${randomUUID().slice(0, 6)}`);
  return { user, console: await consoleClient(server, user), api: apiClient(server, server.createKey(user.cabinetId).key) };
}

async function newClient(cab: Cabinet, body: Record<string, unknown> = { last_name: 'Martin', first_name: 'Léa' }): Promise<string> {
  const res = await cab.api.post('/clients', body);
  expect(res.status).toBe(201);
  return String(res.body.id);
}

const lead = { title: 'Auto Martin', product: 'auto', contact: { last_name: 'Martin' } };

function count(table: string, cabinetId: string): number {
  return (server.deps.db.sqlite.prepare(`SELECT count(*) AS n FROM ${table} WHERE cabinet_id = ?`).get(cabinetId) as { n: number }).n;
}

function row(table: string, id: string): Record<string, unknown> | undefined {
  return server.deps.db.sqlite.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
}

describe('an opportunity’s client', () => {
  it('is taken on creation and on change, answered as client_id, carried by opportunity.created, and null detaches it', async () => {
    const cab = await cabinet();
    const clientId = await newClient(cab);
    const created = await cab.api.post('/opportunities', { ...lead, client_id: clientId });
    expect(created.status).toBe(201);
    const opportunity = opportunitySchema.parse(created.body);
    expect(opportunity.client_id).toBe(clientId);
    const event = server.deps.db.sqlite
      .prepare("SELECT data FROM events WHERE cabinet_id = ? AND type = 'opportunity.created'")
      .get(cab.user.cabinetId) as { data: string };
    expect(JSON.parse(event.data)).toMatchObject({ opportunity_id: opportunity.id, client_id: clientId });

    const without = opportunitySchema.parse((await cab.api.post('/opportunities', lead)).body);
    expect(without.client_id).toBeNull();
    const attached = await cab.api.patch(`/opportunities/${without.id}`, { client_id: clientId });
    expect(attached.status).toBe(200);
    expect(attached.body.client_id).toBe(clientId);
    const detached = await cab.api.patch(`/opportunities/${without.id}`, { client_id: null });
    expect(detached.body.client_id).toBeNull();

    // The console names the client; the client's page lists the opportunity made for it, though its contact has no email.
    const read = consoleOpportunitySchema.parse(await json(await cab.console.request(`${C}/opportunities/${opportunity.id}`)));
    expect(read).toMatchObject({ client_id: clientId, client_name: 'Léa Martin' });
    const ofClient = (await json(await cab.console.request(`${C}/clients/${clientId}/opportunities`))) as { data: { id: string }[] };
    expect(ofClient.data.map((o) => o.id)).toEqual([opportunity.id]);
  });

  it('refuses an unknown client, another cabinet’s or an erased one: 400 validation_error at body.client_id, nothing written', async () => {
    const cab = await cabinet();
    const other = await cabinet();
    const othersClient = await newClient(other);
    const erased = await newClient(cab, { last_name: 'Effacé' });
    expect((await cab.api.delete(`/clients/${erased}`)).status).toBe(204);
    const mine = opportunitySchema.parse((await cab.api.post('/opportunities', lead)).body);
    const before = { opportunities: count('opportunities', cab.user.cabinetId), events: count('events', cab.user.cabinetId) };
    const stored = row('opportunities', mine.id);
    for (const clientId of [randomUUID(), othersClient, erased]) {
      for (const res of [
        await cab.api.post('/opportunities', { ...lead, client_id: clientId }),
        await cab.api.patch(`/opportunities/${mine.id}`, { client_id: clientId, title: 'Changed' }),
        await cab.console.request(`${C}/opportunities/${mine.id}`, { method: 'PATCH', json: { client_id: clientId } }),
      ]) {
        const body = (res instanceof Response ? await json(res) : res.body) as { error: string; details: { path: string }[] };
        expect(res.status).toBe(400);
        expect(body.error).toBe('validation_error');
        expect(body.details.map((d) => d.path)).toEqual(['body.client_id']);
      }
    }
    expect({ opportunities: count('opportunities', cab.user.cabinetId), events: count('events', cab.user.cabinetId) }).toEqual(before);
    expect(row('opportunities', mine.id)).toEqual(stored);
    expect((await cab.api.post('/opportunities', { ...lead, client_id: 'not-a-uuid' })).status).toBe(400);
  });
});

describe('an opportunity’s notes', () => {
  it('a broker adds notes in their name, listed newest first; the REST API writes its author or "API"', async () => {
    const cab = await cabinet();
    const opportunity = opportunitySchema.parse((await cab.api.post('/opportunities', lead)).body);
    const path = `${C}/opportunities/${opportunity.id}/notes`;
    const first = await cab.console.request(path, { method: 'POST', json: { body: '  Rappeler lundi.  ' } });
    expect(first.status).toBe(201);
    expect(opportunityNoteSchema.parse(await json(first))).toMatchObject({ author: cab.user.email, body: 'Rappeler lundi.' });
    clock.advance(1000);
    expect((await cab.api.post(`/opportunities/${opportunity.id}/notes`, { body: 'Devis envoyé.', author: 'Assistant' })).status).toBe(201);
    clock.advance(1000);
    // A retried POST with its Idempotency-Key adds nothing: it answers the first note again.
    const retry = { 'Idempotency-Key': randomUUID() };
    const once = await cab.api.post(`/opportunities/${opportunity.id}/notes`, { body: 'Signature prévue.' }, retry);
    expect(once.status).toBe(201);
    expect(once.body.author).toBe('API');
    const again = await cab.api.post(`/opportunities/${opportunity.id}/notes`, { body: 'Signature prévue.' }, retry);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.note_id]).toEqual([200, 'true', once.body.note_id]);
    const listed = (await json(await cab.console.request(path))) as { data: unknown[] };
    expect(listed.data.map((n) => opportunityNoteSchema.parse(n).body)).toEqual(['Signature prévue.', 'Devis envoyé.', 'Rappeler lundi.']);
    expect((await cab.api.get(`/opportunities/${opportunity.id}/notes`)).body.data).toEqual(listed.data);
  });

  it('refuses an empty note, one for an unknown opportunity, and an author from the console; writes nothing', async () => {
    const cab = await cabinet();
    const opportunity = opportunitySchema.parse((await cab.api.post('/opportunities', lead)).body);
    const path = `${C}/opportunities/${opportunity.id}/notes`;
    for (const body of [{ body: '   ' }, { body: 'x'.repeat(5001) }, {}, { body: 'Moi', author: 'Quelqu’un d’autre' }]) {
      const res = await cab.console.request(path, { method: 'POST', json: body });
      expect(res.status).toBe(400);
      expect(((await json(res)) as { error: string }).error).toBe('validation_error');
    }
    const unknown = await cab.console.request(`${C}/opportunities/${randomUUID()}/notes`, { method: 'POST', json: { body: 'Perdu' } });
    expect(unknown.status).toBe(404);
    expect(count('opportunity_notes', cab.user.cabinetId)).toBe(0);
  });

  it('another cabinet can neither read nor add notes to an opportunity that is not its own (404 not_found)', async () => {
    const a = await cabinet();
    const b = await cabinet();
    const opportunity = opportunitySchema.parse((await a.api.post('/opportunities', lead)).body);
    expect((await a.api.post(`/opportunities/${opportunity.id}/notes`, { body: 'Secret de A' })).status).toBe(201);
    const path = `/opportunities/${opportunity.id}/notes`;
    for (const res of [
      await b.console.request(`${C}${path}`),
      await b.console.request(`${C}${path}`, { method: 'POST', json: { body: 'Intrus' } }),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('Secret de A');
    }
    expect((await b.api.get(path)).status).toBe(404);
    expect((await b.api.post(path, { body: 'Intrus' })).status).toBe(404);
    expect(count('opportunity_notes', b.user.cabinetId)).toBe(0);
    expect(count('opportunity_notes', a.user.cabinetId)).toBe(1);
  });
});

describe('a client’s erasure', () => {
  it('empties the contact and the notes of the opportunities chosen for the client; their client_id stays, the client’s name goes', async () => {
    const cab = await cabinet();
    const clientId = await newClient(cab, { last_name: 'Durand', first_name: 'Paul' });
    const opportunity = opportunitySchema.parse(
      (await cab.api.post('/opportunities', { ...lead, contact: { last_name: 'Durand', phone: '06 12 34 56 78' }, client_id: clientId }))
        .body,
    );
    const untouched = opportunitySchema.parse((await cab.api.post('/opportunities', lead)).body);
    await cab.api.post(`/opportunities/${opportunity.id}/notes`, { body: 'Paul Durand a trois enfants.' });
    await cab.api.post(`/opportunities/${untouched.id}/notes`, { body: 'Rien à voir.' });
    expect((await cab.api.delete(`/clients/${clientId}`)).status).toBe(204);

    const read = consoleOpportunitySchema.parse(await json(await cab.console.request(`${C}/opportunities/${opportunity.id}`)));
    expect(read).toMatchObject({ client_id: clientId, client_name: null, contact: { last_name: '', phone: null } });
    const notes = (await cab.api.get(`/opportunities/${opportunity.id}/notes`)).body.data as { body: string; author: string }[];
    expect(notes).toEqual([expect.objectContaining({ body: '', author: 'API' })]);
    expect(((await cab.api.get(`/opportunities/${untouched.id}/notes`)).body.data as { body: string }[])[0]?.body).toBe('Rien à voir.');
    const file = server.deps.db.sqlite.prepare('SELECT group_concat(body) AS all_bodies FROM opportunity_notes').get() as {
      all_bodies: string;
    };
    expect(file.all_bodies).not.toContain('trois enfants');
    const events = server.deps.db.sqlite
      .prepare("SELECT data FROM events WHERE cabinet_id = ? AND type = 'opportunity.created'")
      .all(cab.user.cabinetId) as { data: string }[];
    expect(events.map((e) => e.data).join()).not.toContain('06 12');
  });
});
