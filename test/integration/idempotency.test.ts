/**
 * Idempotency-Key (part 4.1 rules 1-3), over real HTTP against a real SQLite file:
 *  1. the same key, caller, endpoint and body replay the stored 2xx response with HTTP 200 and
 *     Idempotent-Replayed: true; another body is 422 idempotency_key_reused;
 *  2. concurrent requests with one key create one resource: a synchronous endpoint's duplicates
 *     replay (those of one turn of the event loop share its transaction, later ones wait for the
 *     write lock; an endpoint that awaits, the webhook test, answers 409 idempotency_conflict
 *     while it runs: test/security/idempotency.test.ts); requests that arrive together commit
 *     together, each undone alone when its handler refuses it;
 *  3. a failed request does not consume its key; keys expire after 24 h; a claim of another process
 *     not renewed for 60 s (a dead process) is taken over.
 * Every check counts the rows in SQLite as well as reading the responses.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchema, createOpportunityBody, opportunitySchema } from '../../shared/crm.js';
import { devisSchema } from '../../shared/devis.js';
import { PUBLIC_API_PREFIX } from '../../shared/endpoint.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { IDEMPOTENCY_TTL_MS } from '../../server/idempotency/service.js';
import { insertClaim } from '../../server/idempotency/store.js';
import { canonicalJson } from '../../server/platform/http/canonical-json.js';
import { expectError } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let cabinetId: string;
let apiKey: string;
let keyId: string;

const OPPORTUNITIES = `${PUBLIC_API_PREFIX}/opportunities`;
const CLIENTS = `${PUBLIC_API_PREFIX}/clients`;
const DEVIS = `${PUBLIC_API_PREFIX}/devis`;
const OPPORTUNITIES_ENDPOINT = `POST ${OPPORTUNITIES}`;

/** Every statement the server's connection runs: POSTs that arrive together share a transaction. */
const statements: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ clock, onStatement: (sql) => void statements.push(sql) });
  cabinetId = await server.createCabinet('Cabinet Idempotence');
  const created = server.createKey(cabinetId);
  apiKey = created.key;
  keyId = created.key_id;
});
afterAll(() => server.close());

interface Result {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

async function post(path: string, body: unknown, idempotencyKey?: string): Promise<Result> {
  const headers: Record<string, string> = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
  if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
  const res = await server.request(path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** A distinct title per test, so that row counts in SQLite are per test. */
function opportunityBody(title: string) {
  return { title, product: 'auto', contact: { last_name: 'Martin', first_name: 'Claire' }, expected_value_eur: 1200.5, tags: ['vip'] };
}

function countOpportunities(title: string): number {
  const row = server.deps.db.sqlite
    .prepare('SELECT count(*) AS n FROM opportunities WHERE cabinet_id = ? AND title = ?')
    .get(cabinetId, title) as { n: number };
  return row.n;
}

function countClients(lastName: string): number {
  const row = server.deps.db.sqlite
    .prepare('SELECT count(*) AS n FROM clients WHERE cabinet_id = ? AND last_name = ?')
    .get(cabinetId, lastName) as { n: number };
  return row.n;
}

function keyRows(key: string): { endpoint: string; state: string; status_code: number | null }[] {
  return server.deps.db.sqlite
    .prepare('SELECT endpoint, state, status_code FROM idempotency_keys WHERE cabinet_id = ? AND key = ? ORDER BY endpoint')
    .all(cabinetId, key) as { endpoint: string; state: string; status_code: number | null }[];
}

function createdEventsFor(opportunityId: string): number {
  return listEvents(server.deps, cabinetId).filter((e) => e.type === 'opportunity.created' && e.data.opportunity_id === opportunityId)
    .length;
}

describe('rule 1: replay and reuse', () => {
  it('first POST is 201; the same key and body replay it with 200, the identical body and Idempotent-Replayed: true', async () => {
    const key = randomUUID();
    const body = opportunityBody('replay-basic');
    const first = await post(OPPORTUNITIES, body, key);
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = opportunitySchema.parse(first.body);
    expect(created).toMatchObject({ title: 'replay-basic', expected_value_eur: 1200.5, tags: ['vip'], created_via: 'api' });

    for (let i = 0; i < 2; i++) {
      const again = await post(OPPORTUNITIES, body, key);
      expect(again.status, again.text).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    }
    expect(countOpportunities('replay-basic')).toBe(1);
    expect(createdEventsFor(created.id)).toBe(1);
    expect(keyRows(key)).toEqual([{ endpoint: OPPORTUNITIES_ENDPOINT, state: 'done', status_code: 201 }]);
  });

  it('the same key with a different body is 422 idempotency_key_reused and creates nothing', async () => {
    const key = randomUUID();
    const first = await post(OPPORTUNITIES, opportunityBody('reuse-a'), key);
    expect(first.status, first.text).toBe(201);

    const changedTitle = await post(OPPORTUNITIES, opportunityBody('reuse-b'), key);
    const error = expectError(changedTitle, 422, 'idempotency_key_reused');
    expect(error.message).toMatch(/Idempotency-Key/);
    // A change deep inside the body counts too.
    const changedContact = await post(
      OPPORTUNITIES,
      { ...opportunityBody('reuse-a'), contact: { last_name: 'Martin', first_name: 'Paul' } },
      key,
    );
    expectError(changedContact, 422, 'idempotency_key_reused');

    expect(countOpportunities('reuse-a')).toBe(1);
    expect(countOpportunities('reuse-b')).toBe(0);
    // The stored response is untouched: the original body still replays.
    const replay = await post(OPPORTUNITIES, opportunityBody('reuse-a'), key);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
  });

  it('a body with its keys in another order (nested ones too) is the same request: replay', async () => {
    const key = randomUUID();
    const first = await post(OPPORTUNITIES, opportunityBody('canonical'), key);
    expect(first.status, first.text).toBe(201);
    const reordered =
      '{"tags":["vip"],"expected_value_eur":1200.5,"contact":{"first_name":"Claire","last_name":"Martin"},"product":"auto","title":"canonical"}';
    const again = await post(OPPORTUNITIES, reordered, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(countOpportunities('canonical')).toBe(1);
  });

  it('without the header, two identical POSTs create two resources', async () => {
    const body = opportunityBody('no-header');
    const first = await post(OPPORTUNITIES, body);
    const second = await post(OPPORTUNITIES, body);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(opportunitySchema.parse(first.body).id).not.toBe(opportunitySchema.parse(second.body).id);
    expect(countOpportunities('no-header')).toBe(2);
  });

  it('one key on two endpoints (POST /clients and POST /opportunities) is two independent keys', async () => {
    const key = randomUUID();
    const client = await post(CLIENTS, { type: 'person', last_name: 'same-key-client' }, key);
    expect(client.status, client.text).toBe(201);
    const opportunity = await post(OPPORTUNITIES, opportunityBody('same-key-opportunity'), key);
    expect(opportunity.status, opportunity.text).toBe(201);
    expect(opportunity.headers.get('idempotent-replayed')).toBeNull();
    expect(opportunitySchema.parse(opportunity.body).title).toBe('same-key-opportunity');

    // Each endpoint replays its own response.
    const clientReplay = await post(CLIENTS, { type: 'person', last_name: 'same-key-client' }, key);
    expect(clientReplay.status).toBe(200);
    expect(clientSchema.parse(clientReplay.body).id).toBe(clientSchema.parse(client.body).id);
    const opportunityReplay = await post(OPPORTUNITIES, opportunityBody('same-key-opportunity'), key);
    expect(opportunityReplay.status).toBe(200);
    expect(opportunityReplay.text).toBe(opportunity.text);

    expect(countClients('same-key-client')).toBe(1);
    expect(countOpportunities('same-key-opportunity')).toBe(1);
    expect(keyRows(key).map((r) => r.endpoint)).toEqual([`POST ${CLIENTS}`, OPPORTUNITIES_ENDPOINT]);
  });
});

describe('rule 3: expiry and failed requests', () => {
  it('a key expires 24 h after its first use: then the same request creates a new resource', async () => {
    const key = randomUUID();
    const body = opportunityBody('expiry');
    const first = await post(OPPORTUNITIES, body, key);
    expect(first.status, first.text).toBe(201);

    clock.advance(IDEMPOTENCY_TTL_MS - 1);
    const stillKept = await post(OPPORTUNITIES, body, key);
    expect(stillKept.status, stillKept.text).toBe(200);
    expect(stillKept.text).toBe(first.text);
    expect(countOpportunities('expiry')).toBe(1);

    clock.advance(2); // 24 h + 1 ms after the first use
    const afterExpiry = await post(OPPORTUNITIES, body, key);
    expect(afterExpiry.status, afterExpiry.text).toBe(201);
    expect(afterExpiry.headers.get('idempotent-replayed')).toBeNull();
    expect(opportunitySchema.parse(afterExpiry.body).id).not.toBe(opportunitySchema.parse(first.body).id);
    expect(countOpportunities('expiry')).toBe(2);

    // The key now holds the new response, for 24 h more.
    const replay = await post(OPPORTUNITIES, body, key);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(afterExpiry.text);
    expect(keyRows(key)).toHaveLength(1);
  });

  it('the documented 24 h + 1 ms advance gives a new resource', async () => {
    const key = randomUUID();
    const body = opportunityBody('expiry-advance');
    const first = await post(OPPORTUNITIES, body, key);
    expect(first.status).toBe(201);
    clock.advance(24 * 3600 * 1000 + 1);
    const second = await post(OPPORTUNITIES, body, key);
    expect(second.status, second.text).toBe(201);
    expect(opportunitySchema.parse(second.body).id).not.toBe(opportunitySchema.parse(first.body).id);
    expect(countOpportunities('expiry-advance')).toBe(2);
  });

  it('a request that fails in its handler does not consume the key: the same request succeeds once the quote is priced', async () => {
    const client = await post(CLIENTS, { type: 'person', last_name: 'sign-retry' });
    expect(client.status, client.text).toBe(201);
    const clientId = clientSchema.parse(client.body).id;
    const draft = await post(DEVIS, { client_id: clientId, compagnie: 'sandbox', produit: 'auto' });
    expect(draft.status, draft.text).toBe(201);
    const devisId = devisSchema.parse(draft.body).id;
    const signPath = `${DEVIS}/${devisId}/sign`;
    const signBody = { signed_at: '2026-11-22T10:00:00Z' };
    const key = randomUUID();

    const refused = await post(signPath, signBody, key);
    const error = expectError(refused, 409, 'invalid_devis_transition');
    expect(error.details).toEqual({ status: 'draft' });
    expect(keyRows(key)).toEqual([]);
    // A retry before the quote is priced fails the same way (not 409 idempotency_conflict, not a replay of the error).
    expectError(await post(signPath, signBody, key), 409, 'invalid_devis_transition');

    recordDevisPriced(server.deps, cabinetId, devisId, { tarifEur: 512.34, pdf: Buffer.from('%PDF-1.4 test') });
    const signed = await post(signPath, signBody, key);
    expect(signed.status, signed.text).toBe(200);
    expect(signed.headers.get('idempotent-replayed')).toBeNull();
    const devis = devisSchema.parse(signed.body);
    expect(devis).toMatchObject({ id: devisId, status: 'signed', tarif_eur: 512.34, signed_at: '2026-11-22T10:00:00.000Z' });
    expect(devis.contract_id).not.toBeNull();

    const replay = await post(signPath, signBody, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(signed.text);

    const db = server.deps.db.sqlite;
    expect(db.prepare('SELECT status, contract_id FROM devis WHERE id = ?').get(devisId)).toEqual({
      status: 'signed',
      contract_id: devis.contract_id,
    });
    expect((db.prepare('SELECT count(*) AS n FROM contracts WHERE devis_id = ?').get(devisId) as { n: number }).n).toBe(1);
    expect(listEvents(server.deps, cabinetId).filter((e) => e.type === 'devis.signed' && e.data.devis_id === devisId)).toHaveLength(1);
  });
});

describe('the Idempotency-Key header itself', () => {
  const invalid: [string, string][] = [
    ['300 characters', 'k'.repeat(300)],
    ['256 characters', 'k'.repeat(256)],
    ['a space inside', 'my key'],
    ['a non-ASCII character', 'clé-idempotence'],
    ['empty', ''],
  ];
  for (const [what, value] of invalid) {
    it(`400 validation_error on header.Idempotency-Key for a key with ${what}; nothing is created`, async () => {
      const title = `invalid-key-${what}`;
      const res = await post(OPPORTUNITIES, opportunityBody(title), value);
      const body = expectError(res, 400, 'validation_error');
      expect(body.details).toEqual([
        expect.objectContaining({
          path: 'header.Idempotency-Key',
          message: expect.any(String) as string,
          code: expect.any(String) as string,
        }),
      ]);
      expect(countOpportunities(title)).toBe(0);
    });
  }

  it('accepts 255 visible ASCII characters', async () => {
    const key = `${randomUUID()}-${'~'.repeat(255 - 37)}`;
    expect(key).toHaveLength(255);
    const res = await post(OPPORTUNITIES, opportunityBody('key-255'), key);
    expect(res.status, res.text).toBe(201);
    expect((await post(OPPORTUNITIES, opportunityBody('key-255'), key)).status).toBe(200);
    expect(countOpportunities('key-255')).toBe(1);
  });
});

describe('rule 2: concurrency', () => {
  /** Fires n truly parallel requests with one key and checks the invariants of rule 2; returns the statuses. */
  async function fireConcurrently(title: string, n: number): Promise<number[]> {
    const key = randomUUID();
    const body = opportunityBody(title);
    const results = await Promise.all(Array.from({ length: n }, () => post(OPPORTUNITIES, body, key)));

    const created = results.filter((r) => r.status === 201);
    expect(created, results.map((r) => r.status).join(',')).toHaveLength(1);
    const id = opportunitySchema.parse(created[0]?.body).id;
    // The creation and its stored response commit together: every duplicate waits for it and replays.
    for (const res of results) {
      if (res.status === 201) continue;
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('idempotent-replayed')).toBe('true');
      expect(opportunitySchema.parse(res.body).id).toBe(id);
      expect(res.text).toBe(created[0]?.text);
    }
    expect(countOpportunities(title)).toBe(1);
    expect(createdEventsFor(id)).toBe(1);
    expect(keyRows(key)).toEqual([{ endpoint: OPPORTUNITIES_ENDPOINT, state: 'done', status_code: 201 }]);

    // Once settled, every retry is a replay of the one creation.
    const after = await post(OPPORTUNITIES, body, key);
    expect(after.status).toBe(200);
    expect(opportunitySchema.parse(after.body).id).toBe(id);
    return results.map((r) => r.status);
  }

  it('25 parallel POSTs with one key over real HTTP create exactly one opportunity', async () => {
    await fireConcurrently('concurrent', 25);
  });

  it('POSTs that arrive together commit together; one refused by its handler leaves the others created and its key unused', async () => {
    const client = await post(CLIENTS, { type: 'person', last_name: 'group-commit' });
    const draft = await post(DEVIS, { client_id: clientSchema.parse(client.body).id, compagnie: 'sandbox', produit: 'auto' });
    const signPath = `${DEVIS}/${devisSchema.parse(draft.body).id}/sign`;
    const refusedKey = randomUUID();
    const keys = Array.from({ length: 8 }, () => randomUUID());

    // Nine open connections first, so that the nine requests reach the server in the same turn.
    await Promise.all(
      Array.from({ length: keys.length + 1 }, () =>
        server.request(`${PUBLIC_API_PREFIX}/me`, { headers: { 'X-API-Key': apiKey } }).then((r) => r.text()),
      ),
    );
    const before = statements.length;
    const [refused, ...created] = await Promise.all([
      post(signPath, { signed_at: '2026-11-22T10:00:00Z' }, refusedKey),
      ...keys.map((key, i) => post(OPPORTUNITIES, opportunityBody(`group-${i}`), key)),
    ]);
    const ran = statements.slice(before);
    const transactions = ran.filter((sql) => sql.startsWith('BEGIN')).length;
    const savepoints = ran.filter((sql) => sql.startsWith('SAVEPOINT')).length;

    expect(refused).toBeDefined();
    if (refused) expectError(refused, 409, 'invalid_devis_transition');
    expect(keyRows(refusedKey)).toEqual([]);
    expect(created.map((r) => r.status)).toEqual(keys.map(() => 201));
    keys.forEach((key, i) => {
      expect(countOpportunities(`group-${i}`)).toBe(1);
      expect(keyRows(key)).toEqual([{ endpoint: OPPORTUNITIES_ENDPOINT, state: 'done', status_code: 201 }]);
    });
    // Each request in a savepoint of a shared transaction (the refused one's undone alone), not a transaction each.
    expect(savepoints).toBeGreaterThanOrEqual(keys.length);
    expect(transactions).toBeLessThan(keys.length);
  });
});

describe('claims of an awaiting request whose process died', () => {
  /** The hash the server computes: canonical JSON of the route params and the parsed body. */
  function requestHash(body: unknown): string {
    return createHash('sha256')
      .update(canonicalJson({ params: {}, body: createOpportunityBody.parse(body) }))
      .digest('hex');
  }
  /** A claim as another server process would have left it, at a given time. */
  function claimByAnotherProcess(key: string, body: unknown, at: number): void {
    insertClaim(
      server.deps.db.orm,
      { cabinetId, caller: `key:${keyId}`, endpoint: OPPORTUNITIES_ENDPOINT, key },
      requestHash(body),
      'another-process',
      at,
      at + IDEMPOTENCY_TTL_MS,
    );
  }

  it('a claim not renewed for 60 s is taken over', async () => {
    const key = randomUUID();
    const body = opportunityBody('abandoned-old');
    claimByAnotherProcess(key, body, clock.now() - 61_000);
    expect(keyRows(key)).toEqual([{ endpoint: OPPORTUNITIES_ENDPOINT, state: 'in_progress', status_code: null }]);

    const res = await post(OPPORTUNITIES, body, key);
    expect(res.status, res.text).toBe(201);
    expect(countOpportunities('abandoned-old')).toBe(1);
    expect(keyRows(key)).toEqual([{ endpoint: OPPORTUNITIES_ENDPOINT, state: 'done', status_code: 201 }]);
  });

  it('a live claim is 409 idempotency_conflict, and is taken over once it has not been renewed for 60 s', async () => {
    const key = randomUUID();
    const body = opportunityBody('abandoned-live');
    claimByAnotherProcess(key, body, clock.now());

    expectError(await post(OPPORTUNITIES, body, key), 409, 'idempotency_conflict');
    // Another body with the claimed key is a reuse, even while in progress.
    expectError(await post(OPPORTUNITIES, opportunityBody('abandoned-other'), key), 422, 'idempotency_key_reused');
    clock.advance(59_000);
    expectError(await post(OPPORTUNITIES, body, key), 409, 'idempotency_conflict');
    expect(countOpportunities('abandoned-live')).toBe(0);

    clock.advance(1_001);
    const res = await post(OPPORTUNITIES, body, key);
    expect(res.status, res.text).toBe(201);
    expect(countOpportunities('abandoned-live')).toBe(1);
    expect(countOpportunities('abandoned-other')).toBe(0);
    const replay = await post(OPPORTUNITIES, body, key);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(res.text);
  });
});
