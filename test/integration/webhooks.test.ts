import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventEnvelopeSchema } from '../../shared/events.js';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import { createdWebhookSchema, deliverySchema, webhookSchema, type Delivery } from '../../shared/webhooks.js';
import { recordEvent } from '../../server/events/service.js';
import { setLlmDataSharing } from '../../server/tenancy/service.js';
import { enqueueCallbackDelivery } from '../../server/webhooks/service.js';
import { apiClient, createOpportunity } from '../helpers/api.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let receiver: Receiver;
let cabinetId: string;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ clock, config: { webhookAllowPrivateTargets: true }, webhooks: { extraCa: [receiver.ca] } });
  cabinetId = await server.createCabinet();
  api = apiClient(server, server.createKey(cabinetId).key);
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});
afterEach(async () => {
  // Each test leaves no subscription behind, so that the next one counts deliveries exactly.
  for (const w of (await api.get('/webhooks?limit=100')).body.data as { id: string }[]) await api.call('DELETE', `/webhooks/${w.id}`);
  receiver.received.length = 0;
});

async function subscribe(events: string[] = ['*']) {
  const res = await api.post('/webhooks', { url: receiver.url, events, description: 'CRM' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return createdWebhookSchema.strict().parse(res.body);
}

/** An opportunity created a second after the last one; returns its id. */
async function nextOpportunity(lastName = 'Dupont'): Promise<string> {
  clock.advance(1000);
  return (await createOpportunity(api, { contact: { last_name: lastName, email: 'jd@dupont.fr' } })).id;
}

async function deliveries(webhookId: string): Promise<Delivery[]> {
  const res = await api.get(`/webhooks/${webhookId}/deliveries?limit=100`);
  return (res.body.data as unknown[]).map((d) => deliverySchema.parse(d));
}

const drain = () => server.app.webhookDispatcher.drain();

describe('subscriptions', () => {
  it('creates with a whsec_ secret shown once, never again', async () => {
    const created = await subscribe(['opportunity.created', 'devis.signed']);
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{40}$/);
    expect(created._warning).toMatch(/only once/);
    expect(created).toMatchObject({ url: receiver.url, events: ['opportunity.created', 'devis.signed'], description: 'CRM', active: true });
    const read = await api.get(`/webhooks/${created.id}`);
    expect(webhookSchema.strict().parse(read.body).id).toBe(created.id);
    expect(JSON.stringify(read.body)).not.toContain(created.secret);
    const list = await api.get('/webhooks');
    expect(JSON.stringify(list.body)).not.toContain(created.secret);
    const row = server.deps.db.sqlite.prepare('SELECT * FROM webhook_subscriptions WHERE id = ?').get(created.id);
    expect(JSON.stringify(row)).not.toContain(created.secret);
  });

  it('starts the first subscription of an install after the newest event: what came before never reaches it', async () => {
    // While the install has no subscription, nothing is fanned out (no write after each commit).
    const before = await nextOpportunity('Avant');
    const created = await subscribe(['opportunity.created']);
    const after = await nextOpportunity('Après');
    await drain();
    const sent = receiver.received.map((r) => (JSON.parse(r.rawBody) as { data: { opportunity_id: string } }).data.opportunity_id);
    expect(sent).toEqual([after]);
    expect(sent).not.toContain(before);
    expect((await deliveries(created.id)).map((d) => d.status)).toEqual(['succeeded']);
  });

  it('validates the url and the event types', async () => {
    for (const url of ['http://example.com/hook', 'ftp://example.com', 'not a url', 'https://user:pw@example.com/h']) {
      const res = await api.post('/webhooks', { url, events: ['*'] });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toBe('invalid_webhook_url');
    }
    for (const events of [['opportunity.created', 'opportunity.deleted'], ['*', 'job.failed'], ['job.*']]) {
      const res = await api.post('/webhooks', { url: receiver.url, events });
      expect(res.status, events.join()).toBe(400);
      expect(res.body.error).toBe('unknown_event_type');
    }
    expect((await api.post('/webhooks', { url: receiver.url, events: [] })).body.error).toBe('validation_error');
  });

  it('updates, pauses and deletes', async () => {
    const created = await subscribe();
    const updated = await api.patch(`/webhooks/${created.id}`, { events: ['job.failed'], description: null, active: false });
    expect(updated.body).toMatchObject({ events: ['job.failed'], description: null, active: false });
    expect((await api.patch(`/webhooks/${created.id}`, { url: 'http://insecure.example' })).body.error).toBe('invalid_webhook_url');
    expect((await api.call('DELETE', `/webhooks/${created.id}`)).status).toBe(204);
    expect((await api.get(`/webhooks/${created.id}`)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('delivers right after the commit, signed per part 6.3, with the headers of part 6.2', async () => {
    const created = await subscribe(['opportunity.created']);
    const opportunityId = await nextOpportunity();
    // No drain here: the dispatcher wakes on the commit by itself.
    const [delivery] = await receiver.waitFor(1);
    expect(delivery).toBeDefined();
    if (!delivery) return;
    const headers = delivery.headers;
    const body = eventEnvelopeSchema.strict().parse(JSON.parse(delivery.rawBody));
    expect(headers['user-agent']).toBe('Service-Webhook/1.0');
    expect(headers['content-type']).toBe('application/json');
    expect(headers['service-event-id']).toBe(body.id);
    expect(headers['service-event-type']).toBe('opportunity.created');
    expect(headers['service-delivery-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(String(headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(String(headers['service-signature']).split(',')[0]).toBe(`t=${String(headers['service-timestamp'])}`);
    expect(body).toMatchObject({ type: 'opportunity.created', version: 'v1', cabinet_id: cabinetId });
    expect(body.data.opportunity_id).toBe(opportunityId);
    expect(verifyWebhook(delivery.rawBody, headers, [created.secret], { now: clock.now() })).toEqual({
      valid: true,
      timestamp: Math.floor(clock.now() / 1000),
    });
    expect(verifyWebhook(delivery.rawBody, headers, ['whsec_wrong'], { now: clock.now() }).valid).toBe(false);
    expect(verifyWebhook(`${delivery.rawBody} `, headers, [created.secret], { now: clock.now() }).valid).toBe(false);
    await drain();
    const [record] = await deliveries(created.id);
    expect(record).toMatchObject({ status: 'succeeded', attempt_count: 1, event_type: 'opportunity.created', next_attempt_at: null });
    expect(record?.attempts[0]).toMatchObject({ http_status: 200, error: null, response_body: 'ok' });
  });

  it('masks personal data unless the cabinet enabled LLM data sharing', async () => {
    await subscribe(['opportunity.created']);
    await nextOpportunity('Dupont');
    await drain();
    const masked = JSON.parse(receiver.received[0]?.rawBody ?? '{}') as { data: { contact: Record<string, unknown>; title: string } };
    expect(masked.data.contact).toEqual({ last_name: 'D***', company_name: null, siret: null });
    setLlmDataSharing(server.deps, cabinetId, true);
    await nextOpportunity('Dupont');
    await drain();
    const clear = JSON.parse(receiver.received[1]?.rawBody ?? '{}') as { data: { contact: Record<string, unknown> } };
    expect(clear.data.contact.last_name).toBe('Dupont');
    setLlmDataSharing(server.deps, cabinetId, false);
  });

  it('delivers client.updated masked per delivery and client.erased without personal data; a replay after the erasure carries none', async () => {
    const created = await subscribe(['client.updated', 'client.erased']);
    const client = await api.post('/clients', { last_name: 'Garnier', first_name: 'Inès', email: 'ines.garnier@example.fr' });
    const clientId = String(client.body.id);
    clock.advance(1000);
    expect((await api.patch(`/clients/${clientId}`, { phone: '06 55 44 33 22' })).status).toBe(200);
    await drain();
    const updated = eventEnvelopeSchema.parse(JSON.parse(receiver.received[0]?.rawBody ?? '{}'));
    expect(updated.type).toBe('client.updated');
    expect(updated.data).toMatchObject({
      client_id: clientId,
      last_name: 'G***',
      first_name: 'I***',
      email: 'i***',
      phone: '0***',
      changed_fields: ['phone'],
    });

    expect((await api.call('DELETE', `/clients/${clientId}`)).status).toBe(204);
    await drain();
    const erased = eventEnvelopeSchema.parse(JSON.parse(receiver.received[1]?.rawBody ?? '{}'));
    expect(erased).toMatchObject({ type: 'client.erased', data: { client_id: clientId, erased_at: new Date(clock.now()).toISOString() } });
    expect(Object.keys(erased.data).sort()).toEqual(['client_id', 'erased_at']);

    // Even with sharing on, a replay of the earlier change sends the same event without the erased data.
    setLlmDataSharing(server.deps, cabinetId, true);
    const original = (await deliveries(created.id)).find((d) => d.event_type === 'client.updated');
    expect((await api.post(`/webhooks/${created.id}/deliveries/${original?.id ?? ''}/replay`)).status).toBe(202);
    await drain();
    const replayed = eventEnvelopeSchema.parse(JSON.parse(receiver.received[2]?.rawBody ?? '{}'));
    expect(replayed.id).toBe(updated.id);
    expect(replayed.data).toMatchObject({
      client_id: clientId,
      last_name: null,
      first_name: null,
      email: null,
      phone: null,
      changed_fields: ['phone'],
    });
    setLlmDataSharing(server.deps, cabinetId, false);
  });

  it('follows the retry schedule 0 s, 30 s, 5 min, 30 min, 2 h, 12 h, then fails', async () => {
    const created = await subscribe(['opportunity.created']);
    receiver.respondWith(500, 500, 500, 500, 500, 500);
    await nextOpportunity();
    await drain();
    const start = clock.now();
    const schedule = [30, 300, 1800, 7200, 43200];
    for (const [i, delay] of schedule.entries()) {
      const [pending] = await deliveries(created.id);
      expect(pending).toMatchObject({ status: 'pending', attempt_count: i + 1 });
      expect(Date.parse(pending?.next_attempt_at ?? '')).toBe(clock.now() + delay * 1000);
      clock.advance(delay * 1000 - 1);
      await drain();
      expect(receiver.received).toHaveLength(i + 1);
      clock.advance(1);
      await drain();
      expect(receiver.received).toHaveLength(i + 2);
    }
    const [failed] = await deliveries(created.id);
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 6, next_attempt_at: null });
    expect(failed?.attempts.map((a) => a.http_status)).toEqual([500, 500, 500, 500, 500, 500]);
    expect(failed?.attempts[0]?.response_body).toBe('failing with 500');
    expect(clock.now() - start).toBe((30 + 300 + 1800 + 7200 + 43200) * 1000);
    const ids = new Set(receiver.received.map((r) => r.headers['service-event-id']));
    expect(ids.size).toBe(1);
  });

  it("a subscription deleted while its delivery is in flight takes nothing else with it: the other subscriptions' outcomes are recorded", async () => {
    const kept = await subscribe(['opportunity.created']);
    const deleted = await subscribe(['opportunity.created']);
    receiver.hang(true);
    await nextOpportunity();
    const sending = drain();
    await receiver.waitFor(2);
    expect((await api.call('DELETE', `/webhooks/${deleted.id}`)).status).toBe(204);
    // Both answers arrive together: their outcomes are recorded in one transaction.
    receiver.hang(false);
    await sending;
    expect((await deliveries(kept.id)).map((d) => [d.status, d.attempts.length])).toEqual([['succeeded', 1]]);
  });

  it('a receiver answering 500 then 200 gets the event twice at most, with the same envelope id', async () => {
    const created = await subscribe(['opportunity.created']);
    receiver.respondWith(500);
    await nextOpportunity();
    await drain();
    clock.advance(30_000);
    await drain();
    clock.advance(24 * 3600_000);
    await drain();
    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received.map((r) => JSON.parse(r.rawBody) as { id: string });
    expect(first?.id).toBe(second?.id);
    expect(receiver.received[0]?.headers['service-delivery-id']).toBe(receiver.received[1]?.headers['service-delivery-id']);
    expect((await deliveries(created.id))[0]?.status).toBe('succeeded');
  });

  it('"*" covers every event but webhook.test; an explicit list only its events', async () => {
    const all = await subscribe(['*']);
    const onlyWon = await subscribe(['opportunity.won']);
    const id = await nextOpportunity();
    await api.patch(`/opportunities/${id}`, { stage: 'won' });
    await api.post(`/webhooks/${onlyWon.id}/test`);
    await drain();
    const types = (await deliveries(all.id)).map((d) => d.event_type).sort();
    expect(types).toEqual(['opportunity.created', 'opportunity.stage_changed', 'opportunity.won']);
    expect((await deliveries(onlyWon.id)).map((d) => d.event_type).sort()).toEqual(['opportunity.won', 'webhook.test']);
  });
});

describe('rotation, test, replay, history', () => {
  it('rotation signs with both secrets, new first, during the overlap; then only the new one', async () => {
    const created = await subscribe(['opportunity.created']);
    const rotated = await api.post(`/webhooks/${created.id}/rotate-secret`, { overlap_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const newSecret = String(rotated.body.secret);
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(created.secret);
    expect(rotated.body.previous_secret_expires_at).toBe(new Date(clock.now() + 3600_000).toISOString());
    expect((await api.get(`/webhooks/${created.id}`)).body.secret_rotation_ends_at).toBe(rotated.body.previous_secret_expires_at);

    await nextOpportunity();
    await drain();
    const during = receiver.received[0];
    const signature = String(during?.headers['service-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const [, v1New] = signature.split(',');
    const t = Number(signature.split(',')[0]?.slice(2));
    const { signWebhookPayload } = await import('../../shared/verify-webhook.js');
    expect(v1New).toBe(`v1=${signWebhookPayload(newSecret, t, during?.rawBody ?? '')}`);
    expect(verifyWebhook(during?.rawBody ?? '', during?.headers ?? {}, [created.secret], { now: clock.now() }).valid).toBe(true);

    clock.advance(3600_000);
    await nextOpportunity();
    await drain();
    const after = receiver.received[1];
    expect(String(after?.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(after?.rawBody ?? '', after?.headers ?? {}, [created.secret], { now: clock.now() }).valid).toBe(false);
    expect(verifyWebhook(after?.rawBody ?? '', after?.headers ?? {}, [newSecret], { now: clock.now() }).valid).toBe(true);

    const immediate = await api.post(`/webhooks/${created.id}/rotate-secret`, { overlap_seconds: 0 });
    await nextOpportunity();
    await drain();
    expect(
      verifyWebhook(receiver.received[2]?.rawBody ?? '', receiver.received[2]?.headers ?? {}, [newSecret], { now: clock.now() }).valid,
    ).toBe(false);
    expect(
      verifyWebhook(receiver.received[2]?.rawBody ?? '', receiver.received[2]?.headers ?? {}, [String(immediate.body.secret)], {
        now: clock.now(),
      }).valid,
    ).toBe(true);
  });

  it('test sends webhook.test to that subscription only, whatever its list or state, and returns the outcome', async () => {
    const paused = await subscribe(['job.failed']);
    await api.patch(`/webhooks/${paused.id}`, { active: false });
    const res = await api.post(`/webhooks/${paused.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body.succeeded).toBe(true);
    const delivery = deliverySchema.parse(res.body.delivery);
    expect(delivery).toMatchObject({ event_type: 'webhook.test', status: 'succeeded', attempt_count: 1 });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]?.rawBody ?? '{}')).toMatchObject({ type: 'webhook.test', data: { webhook_id: paused.id } });

    receiver.respondWith(503);
    const failing = await api.post(`/webhooks/${paused.id}/test`);
    expect(failing.body.succeeded).toBe(false);
    expect(deliverySchema.parse(failing.body.delivery)).toMatchObject({ status: 'failed', attempt_count: 1 });
    expect(deliverySchema.parse(failing.body.delivery).attempts[0]?.http_status).toBe(503);
  });

  it('replay sends the same event id again as a new delivery', async () => {
    const created = await subscribe(['opportunity.created']);
    await nextOpportunity();
    await drain();
    const [original] = await deliveries(created.id);
    const replay = await api.post(`/webhooks/${created.id}/deliveries/${original?.id ?? ''}/replay`);
    expect(replay.status).toBe(202);
    expect(deliverySchema.parse(replay.body)).toMatchObject({ status: 'pending', replay_of: original?.id, event_id: original?.event_id });
    await drain();
    expect(receiver.received).toHaveLength(2);
    const [a, b] = receiver.received;
    expect(JSON.parse(a?.rawBody ?? '').id).toBe(JSON.parse(b?.rawBody ?? '').id);
    expect(a?.headers['service-delivery-id']).not.toBe(b?.headers['service-delivery-id']);
    expect((await api.post(`/webhooks/${created.id}/deliveries/6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f/replay`)).status).toBe(404);
  });

  it('history filters by status and event type, paginated', async () => {
    const created = await subscribe(['*']);
    receiver.respondWith(500);
    const id = await nextOpportunity();
    await api.patch(`/opportunities/${id}`, { stage: 'qualified' });
    await drain();
    const failedOnes = await api.get(`/webhooks/${created.id}/deliveries?status=pending`);
    expect((failedOnes.body.data as Delivery[]).map((d) => d.event_type)).toEqual(['opportunity.created']);
    const byType = await api.get(`/webhooks/${created.id}/deliveries?event_type=opportunity.stage_changed`);
    expect(byType.body.count).toBe(1);
    const page = await api.get(`/webhooks/${created.id}/deliveries?limit=1`);
    expect(page.body.has_more).toBe(true);
    const next = await api.get(`/webhooks/${created.id}/deliveries?limit=1&cursor=${encodeURIComponent(String(page.body.next_cursor))}`);
    expect(next.body).toMatchObject({ count: 1, has_more: false });
    expect((await api.get(`/webhooks/${created.id}/deliveries?status=lost`)).body.error).toBe('validation_error');
  });

  it('a subscription failing for 5 days is deactivated, and says why', async () => {
    const created = await subscribe(['opportunity.created']);
    receiver.respondWith(...Array<number>(20).fill(500));
    await nextOpportunity();
    await drain();
    expect((await api.get(`/webhooks/${created.id}`)).body.failing_since).not.toBeNull();
    clock.advance(5 * 24 * 3600_000);
    await nextOpportunity();
    await drain();
    const state = webhookSchema.parse((await api.get(`/webhooks/${created.id}`)).body);
    expect(state.active).toBe(false);
    expect(state.disabled_reason).toMatch(/5 days/);
    expect(state.disabled_reason).toMatch(/HTTP 500/);
    receiver.respondWith();
    const resumed = await api.patch(`/webhooks/${created.id}`, { active: true });
    expect(resumed.body).toMatchObject({ active: true, disabled_reason: null, failing_since: null });
  });

  it('a job callback reaches its subscription even when not subscribed to the type, once', async () => {
    const callback = await subscribe(['opportunity.created']);
    const event = server.deps.db.sqlite.transaction(() => {
      const e = recordEvent(server.deps, cabinetId, 'webhook.test', {
        message: 'as a stand-in for job.completed',
        webhook_id: callback.id,
      });
      expect(enqueueCallbackDelivery(server.deps, cabinetId, callback.id, e)).toBe(true);
      expect(enqueueCallbackDelivery(server.deps, cabinetId, callback.id, e)).toBe(true);
      return e;
    })();
    await drain();
    expect(receiver.received.map((r) => r.headers['service-event-id'])).toEqual([event.id]);
  });
});

describe('TLS', () => {
  it('never delivers to a certificate it does not trust', async () => {
    const untrusting = await startTestServer({ clock, config: { webhookAllowPrivateTargets: true } });
    try {
      const cabinet = await untrusting.createCabinet();
      const client = apiClient(untrusting, untrusting.createKey(cabinet).key);
      const hook = await client.post('/webhooks', { url: receiver.url, events: ['opportunity.created'] });
      await client.post('/opportunities', { title: 'x', product: 'auto', contact: { last_name: 'X' } });
      await untrusting.app.webhookDispatcher.drain();
      const [delivery] = (await client.get(`/webhooks/${String(hook.body.id)}/deliveries`)).body.data as Delivery[];
      expect(delivery?.attempts[0]?.http_status).toBeNull();
      expect(delivery?.attempts[0]?.error).toMatch(/certificate/i);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await untrusting.close();
    }
  });
});

describe('target safety', () => {
  it('refuses loopback, private, link-local and metadata targets unless allowed, recording blocked_target', async () => {
    const strict = await startTestServer({
      clock,
      webhooks: {
        extraCa: [receiver.ca],
        hosts: {
          'internal.example.com': [{ address: '10.1.2.3', family: 4 }],
          'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
          'sixlocal.example.com': [{ address: 'fe80::1', family: 6 }],
          'mapped.example.com': [{ address: '::ffff:127.0.0.1', family: 6 }],
          'mixed.example.com': [
            { address: '93.184.216.34', family: 4 },
            { address: '192.168.1.10', family: 4 },
          ],
        },
      },
    });
    try {
      const cabinet = await strict.createCabinet();
      const client = apiClient(strict, strict.createKey(cabinet).key);
      const port = new URL(receiver.url).port;
      const targets = [
        receiver.url,
        `https://[::1]:${port}/h`,
        'https://internal.example.com/h',
        'https://metadata.example.com/latest',
        'https://sixlocal.example.com/h',
        'https://mapped.example.com/h',
        'https://mixed.example.com/h',
        'https://169.254.169.254/latest/meta-data',
      ];
      const ids: string[] = [];
      for (const url of targets) ids.push(String((await client.post('/webhooks', { url, events: ['opportunity.created'] })).body.id));
      await client.post('/opportunities', { title: 'x', product: 'auto', contact: { last_name: 'X' } });
      await strict.app.webhookDispatcher.drain();
      for (const [i, id] of ids.entries()) {
        const list = (await client.get(`/webhooks/${id}/deliveries`)).body.data as Delivery[];
        expect(list[0]?.attempts[0]?.error, targets[i]).toMatch(/^blocked_target: /);
        expect(list[0]?.attempts[0]?.http_status).toBeNull();
      }
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});
