import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { consoleDeliveryPageSchema, consoleWebhookPageSchema } from '../../shared/console-webhooks.js';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import { createdWebhookSchema, deliverySchema, rotatedSecretSchema, testDeliverySchema, webhookSchema } from '../../shared/webhooks.js';
import { hashPassword } from '../../server/tenancy/passwords.js';
import { insertUser } from '../../server/tenancy/store.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser, type TestUser } from '../helpers/oauth.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The console's webhook routes on the real app (real port, real SQLite) delivering to a real HTTPS
 * receiver: the same services as the REST API, behind the session cookie, CSRF and the admin role.
 */

const BASE = '/api/v1/console/webhooks';
let server: TestServer;
let receiver: Receiver;
let admin: TestUser;
let client: ConsoleClient;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ config: { webhookAllowPrivateTargets: true }, webhooks: { extraCa: [receiver.ca] } });
  admin = await createUser(server, 'Cabinet Webhooks');
  client = await consoleClient(server, admin);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});
afterEach(async () => {
  await server.app.webhookDispatcher.drain();
  for (const w of await list(client)) await client.request(`${BASE}/${w.id}`, { method: 'DELETE' });
  receiver.received.length = 0;
  receiver.respondWith();
});

async function json(response: Response): Promise<Record<string, unknown> & { error?: string }> {
  const text = await response.text();
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown> & { error?: string });
}

async function list(c: ConsoleClient) {
  const response = await c.request(BASE);
  expect(response.status).toBe(200);
  return consoleWebhookPageSchema.parse(await response.json()).data;
}

async function create(c: ConsoleClient = client, body: Record<string, unknown> = {}) {
  const response = await c.request(BASE, { method: 'POST', json: { url: receiver.url, events: ['*'], description: 'CRM', ...body } });
  const payload = await json(response);
  expect(response.status, JSON.stringify(payload)).toBe(201);
  return createdWebhookSchema.strict().parse(payload);
}

async function deliveries(id: string, c: ConsoleClient = client) {
  const response = await c.request(`${BASE}/${id}/deliveries`);
  expect(response.status).toBe(200);
  return consoleDeliveryPageSchema.parse(await response.json()).data;
}

async function addBroker(cabinetId: string): Promise<{ email: string; password: string }> {
  const email = `broker-${randomUUID()}@example.fr`;
  const password = 'correct horse battery';
  insertUser(server.deps.db.orm, {
    id: randomUUID(),
    cabinetId,
    email,
    passwordHash: await hashPassword(password, randomBytes(16)),
    role: 'broker',
    createdAt: Date.now(),
  });
  return { email, password };
}

function subscriptionCount(): number {
  return (server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM webhook_subscriptions').get() as { n: number }).n;
}

describe('subscriptions', () => {
  it('creates with the secret once; lists without it, with the last delivery', async () => {
    const created = await create(client, { events: ['opportunity.created', 'devis.signed'] });
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{40}$/);
    expect(created._warning).toMatch(/only once/);
    expect(created).toMatchObject({ url: receiver.url, events: ['opportunity.created', 'devis.signed'], description: 'CRM', active: true });

    const response = await client.request(BASE);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    expect(text).not.toContain(created.secret);
    const [listed] = consoleWebhookPageSchema.parse(JSON.parse(text)).data;
    expect(listed).toMatchObject({ id: created.id, url: receiver.url, active: true, last_delivery: null });
  });

  it('refuses a bad url or event type in the house error shape', async () => {
    const badUrl = await client.request(BASE, { method: 'POST', json: { url: 'http://example.com/hook', events: ['*'] } });
    expect(badUrl.status).toBe(400);
    const body = await json(badUrl);
    expect(body).toMatchObject({ error: 'invalid_webhook_url', message: expect.any(String), request_id: expect.any(String) });
    const badEvent = await client.request(BASE, { method: 'POST', json: { url: receiver.url, events: ['job.*'] } });
    expect(badEvent.status).toBe(400);
    expect((await json(badEvent)).error).toBe('unknown_event_type');
    const noEvents = await client.request(BASE, { method: 'POST', json: { url: receiver.url, events: [] } });
    expect((await json(noEvents)).error).toBe('validation_error');
    expect(subscriptionCount()).toBe(0);
  });

  it('edits the events, url and description; pauses and resumes', async () => {
    const created = await create();
    const edited = await client.request(`${BASE}/${created.id}`, { method: 'PATCH', json: { events: ['job.failed'], description: null } });
    expect(edited.status).toBe(200);
    expect(webhookSchema.strict().parse(await edited.json())).toMatchObject({ events: ['job.failed'], description: null, active: true });

    const paused = await client.request(`${BASE}/${created.id}`, { method: 'PATCH', json: { active: false } });
    expect(webhookSchema.parse(await paused.json()).active).toBe(false);
    expect((await list(client))[0]?.active).toBe(false);
    const resumed = await client.request(`${BASE}/${created.id}`, { method: 'PATCH', json: { active: true } });
    expect(webhookSchema.parse(await resumed.json()).active).toBe(true);

    const empty = await client.request(`${BASE}/${created.id}`, { method: 'PATCH', json: {} });
    expect(empty.status).toBe(400);
    expect((await json(empty)).error).toBe('validation_error');
  });

  it('deletes (204), then 404', async () => {
    const created = await create();
    const deleted = await client.request(`${BASE}/${created.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await list(client)).toEqual([]);
    const again = await client.request(`${BASE}/${created.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect((await json(again)).error).toBe('not_found');
  });
});

describe('test deliveries, history and replay', () => {
  it('sends a signed webhook.test at once, lists it with its attempt, and replays it as a second delivery', async () => {
    const created = await create();
    const test = await client.request(`${BASE}/${created.id}/test`, { method: 'POST' });
    expect(test.status).toBe(200);
    const result = testDeliverySchema.parse(await test.json());
    expect(result.succeeded).toBe(true);
    expect(result.delivery).toMatchObject({ event_type: 'webhook.test', status: 'succeeded', attempt_count: 1 });
    expect(result.delivery.attempts[0]).toMatchObject({ http_status: 200, error: null, duration_ms: expect.any(Number) });

    // The receiver already has it: the route answered after the attempt.
    expect(receiver.received).toHaveLength(1);
    const [first] = receiver.received;
    expect(verifyWebhook(first!.rawBody, first!.headers, [created.secret])).toMatchObject({ valid: true });
    const envelope = eventEnvelopeSchema.parse(JSON.parse(first!.rawBody));
    expect(envelope).toMatchObject({ type: 'webhook.test', cabinet_id: admin.cabinetId, data: { webhook_id: created.id } });
    expect(first!.headers['service-delivery-id']).toBe(result.delivery.id);

    const [listed] = await deliveries(created.id);
    expect(listed).toMatchObject({ id: result.delivery.id, status: 'succeeded' });
    expect(listed!.attempts).toEqual([
      expect.objectContaining({ attempted_at: expect.any(String), http_status: 200, duration_ms: expect.any(Number), error: null }),
    ]);
    expect((await list(client))[0]?.last_delivery?.id).toBe(result.delivery.id);

    const replay = await client.request(`${BASE}/${created.id}/deliveries/${result.delivery.id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(202);
    const replayed = deliverySchema.parse(await replay.json());
    expect(replayed).toMatchObject({ replay_of: result.delivery.id, event_id: result.delivery.event_id, status: 'pending' });
    // Replays are due at once: the dispatcher, woken by the route, sends it without being drained.
    const [, second] = await receiver.waitFor(2);
    expect(verifyWebhook(second!.rawBody, second!.headers, [created.secret])).toMatchObject({ valid: true });
    expect(JSON.parse(second!.rawBody).id).toBe(envelope.id);
    expect(second!.headers['service-delivery-id']).toBe(replayed.id);
    await server.app.webhookDispatcher.drain();
    const history = await deliveries(created.id);
    expect(history.map((d) => d.id).sort()).toEqual([result.delivery.id, replayed.id].sort());
    expect(history.find((d) => d.id === replayed.id)).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('reports a failed test with the receiver status, without a retry', async () => {
    const created = await create();
    receiver.respondWith(503);
    const result = testDeliverySchema.parse(await (await client.request(`${BASE}/${created.id}/test`, { method: 'POST' })).json());
    expect(result.succeeded).toBe(false);
    expect(result.delivery).toMatchObject({ status: 'failed', attempt_count: 1 });
    expect(result.delivery.attempts[0]).toMatchObject({ http_status: 503, response_body: 'failing with 503' });
  });

  it('rotates the secret: the new one shown once, both signing during the overlap', async () => {
    const created = await create();
    const rotate = await client.request(`${BASE}/${created.id}/rotate-secret`, { method: 'POST', json: { overlap_seconds: 3600 } });
    expect(rotate.status).toBe(200);
    const rotated = rotatedSecretSchema.parse(await rotate.json());
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect((await list(client))[0]?.secret_rotation_ends_at).toBe(rotated.previous_secret_expires_at);
    expect(JSON.stringify(await list(client))).not.toContain(rotated.secret);

    await client.request(`${BASE}/${created.id}/test`, { method: 'POST' });
    const [delivery] = receiver.received;
    expect(String(delivery!.headers['service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook(delivery!.rawBody, delivery!.headers, [rotated.secret]).valid).toBe(true);
    expect(verifyWebhook(delivery!.rawBody, delivery!.headers, [created.secret]).valid).toBe(true);

    // No body: the default overlap (24 h).
    const byDefault = rotatedSecretSchema.parse(
      await (await client.request(`${BASE}/${created.id}/rotate-secret`, { method: 'POST' })).json(),
    );
    expect(Date.parse(byDefault.previous_secret_expires_at) - Date.now()).toBeGreaterThan(86_000_000);
    const tooLong = await client.request(`${BASE}/${created.id}/rotate-secret`, { method: 'POST', json: { overlap_seconds: 8 * 86_400 } });
    expect((await json(tooLong)).error).toBe('validation_error');
  });

  it('pages the history with a cursor', async () => {
    const created = await create();
    for (let i = 0; i < 3; i += 1) await client.request(`${BASE}/${created.id}/test`, { method: 'POST' });
    const bad = await client.request(`${BASE}/${created.id}/deliveries?cursor=nonsense`);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toBe('invalid_cursor');
    expect(await deliveries(created.id)).toHaveLength(3);
  });
});

describe('who may call', () => {
  it('needs a session: 401 not_signed_in, even with an API key', async () => {
    const key = server.createKey(admin.cabinetId).key;
    for (const headers of [{}, { 'X-API-Key': key }, { Authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const response = await server.request(BASE, { headers });
      expect(response.status).toBe(401);
      expect((await json(response)).error).toBe('not_signed_in');
    }
  });

  it('is for admins only: a broker of the cabinet gets 403 admin_only on every route, and nothing changes', async () => {
    const created = await create();
    const test = testDeliverySchema.parse(await (await client.request(`${BASE}/${created.id}/test`, { method: 'POST' })).json());
    receiver.received.length = 0;
    const broker = await consoleClient(server, await addBroker(admin.cabinetId));
    const calls: [string, string, unknown?][] = [
      ['GET', BASE],
      ['POST', BASE, { url: receiver.url, events: ['*'] }],
      ['PATCH', `${BASE}/${created.id}`, { active: false }],
      ['DELETE', `${BASE}/${created.id}`],
      ['POST', `${BASE}/${created.id}/rotate-secret`, {}],
      ['POST', `${BASE}/${created.id}/test`],
      ['GET', `${BASE}/${created.id}/deliveries`],
      ['POST', `${BASE}/${created.id}/deliveries/${test.delivery.id}/replay`],
    ];
    for (const [method, path, body] of calls) {
      const response = await broker.request(path, { method, ...(body === undefined ? {} : { json: body }) });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).error, `${method} ${path}`).toBe('admin_only');
    }
    expect(await list(client)).toEqual([expect.objectContaining({ id: created.id, active: true })]);
    expect(await deliveries(created.id)).toHaveLength(1);
    await server.app.webhookDispatcher.drain();
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a write without the CSRF header (403 invalid_csrf_token) and writes nothing', async () => {
    const created = await create();
    const noCsrf = (path: string, method: string, body?: unknown) =>
      server.request(path, {
        method,
        headers: { cookie: client.cookie, Origin: server.url, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const before = subscriptionCount();
    const attempts: [string, string, unknown?][] = [
      ['POST', BASE, { url: receiver.url, events: ['*'] }],
      ['PATCH', `${BASE}/${created.id}`, { active: false }],
      ['DELETE', `${BASE}/${created.id}`],
      ['POST', `${BASE}/${created.id}/rotate-secret`, {}],
      ['POST', `${BASE}/${created.id}/test`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await noCsrf(path, method, body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).error).toBe('invalid_csrf_token');
    }
    // A wrong token is no better than none.
    const wrong = await server.request(BASE, {
      method: 'POST',
      headers: {
        cookie: client.cookie,
        Origin: server.url,
        'Content-Type': 'application/json',
        'X-CSRF-Token': 'x'.repeat(client.csrfToken.length),
      },
      body: JSON.stringify({ url: receiver.url, events: ['*'] }),
    });
    expect((await json(wrong)).error).toBe('invalid_csrf_token');

    expect(subscriptionCount()).toBe(before);
    const [still] = await list(client);
    expect(still).toMatchObject({ id: created.id, active: true, secret_rotation_ends_at: null, last_delivery: null });
    await server.app.webhookDispatcher.drain();
    expect(receiver.received).toHaveLength(0);
  });

  it('keeps cabinets apart: another cabinet’s webhook and delivery are 404', async () => {
    const mine = await create();
    const test = testDeliverySchema.parse(await (await client.request(`${BASE}/${mine.id}/test`, { method: 'POST' })).json());
    receiver.received.length = 0;
    const other = await consoleClient(server, await createUser(server, 'Autre cabinet'));
    expect(await list(other)).toEqual([]);
    const theirs = await create(other);
    expect((await list(client)).map((w) => w.id)).toEqual([mine.id]);

    const calls: [string, string, unknown?][] = [
      ['PATCH', `${BASE}/${mine.id}`, { active: false }],
      ['DELETE', `${BASE}/${mine.id}`],
      ['POST', `${BASE}/${mine.id}/rotate-secret`, {}],
      ['POST', `${BASE}/${mine.id}/test`],
      ['GET', `${BASE}/${mine.id}/deliveries`],
      ['POST', `${BASE}/${mine.id}/deliveries/${test.delivery.id}/replay`],
      // Their own webhook with my delivery id.
      ['POST', `${BASE}/${theirs.id}/deliveries/${test.delivery.id}/replay`],
    ];
    for (const [method, path, body] of calls) {
      const response = await other.request(path, { method, ...(body === undefined ? {} : { json: body }) });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).error).toBe('not_found');
    }
    expect(await list(client)).toEqual([expect.objectContaining({ id: mine.id, active: true })]);
    expect(await deliveries(mine.id)).toHaveLength(1);
    await server.app.webhookDispatcher.drain();
    expect(receiver.received).toHaveLength(0);
    await other.request(`${BASE}/${theirs.id}`, { method: 'DELETE' });
  });

  it('validates ids in the path', async () => {
    const response = await client.request(`${BASE}/not-a-uuid/test`, { method: 'POST' });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toBe('validation_error');
  });
});
