/**
 * The webhook subscriptions and their deliveries (tag Webhooks).
 * One check per operationId, run by webhooks.test.ts; test/helpers/isolation.ts holds the two cabinets.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { opportunitySchema } from '../../../shared/crm.js';
import { createOpportunity } from '../../../shared/crm-endpoints.js';
import { verifyWebhook } from '../../../shared/verify-webhook.js';
import {
  createWebhook,
  createdWebhookSchema,
  deleteWebhook,
  deliverySchema,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotatedSecretReplaySchema,
  rotatedSecretSchema,
  rotateWebhookSecret,
  testDeliverySchema,
  testWebhook,
  updateWebhook,
} from '../../../shared/webhooks.js';
import { listEvents } from '../../../server/events/service.js';
import { expectError } from '../../helpers/api.js';
import {
  A,
  aEventIds,
  aExtra,
  aIds,
  aSecrets,
  aWebhookRows,
  B,
  cabinetA,
  cabinetB,
  cabinetRowCounts,
  call,
  clock,
  count,
  deliveriesAs,
  drain,
  expectCreated,
  expectCursorRefusedForB,
  expectNotFoundForB,
  expectOnlyB,
  keyA,
  keyB,
  listAs,
  receivedRequests,
  receiver,
  row,
  server,
  withAndWithoutIdempotencyKey,
  type IsolationCheck,
} from '../../helpers/isolation.js';

export const WEBHOOK_CHECKS: Record<string, IsolationCheck> = {
  [createWebhook.operationId]: {
    title:
      "one Idempotency-Key used by A then B gives two subscriptions (B never gets A's secret); A's events never reach B's subscriptions",
    async run() {
      const key = randomUUID();
      const body = { url: `${receiver.url}/shared`, events: ['*'] };
      const fromA = expectCreated(await call(keyA.key, createWebhook, { body, headers: { 'Idempotency-Key': key } }), createdWebhookSchema);
      const b = await call(keyB.key, createWebhook, { body, headers: { 'Idempotency-Key': key } });
      const fromB = expectCreated(b, createdWebhookSchema);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(fromB.id).not.toBe(fromA.id);
      expect(fromB.secret).not.toBe(fromA.secret);
      expect(b.text).not.toContain(fromA.secret);
      expect(b.text).not.toContain(fromA.id);
      expect(row('webhook_subscriptions', fromA.id)?.cabinet_id).toBe(cabinetA);
      expect(row('webhook_subscriptions', fromB.id)?.cabinet_id).toBe(cabinetB);
      expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(2);
      expectError(await call(keyA.key, getWebhook, { params: { id: fromB.id } }), 404, 'not_found');
      expectError(await call(keyB.key, getWebhook, { params: { id: fromA.id } }), 404, 'not_found');
      aExtra.push(fromA.id);
      aSecrets[fromA.id] = fromA.secret;

      // Both cabinets now have "*" subscriptions; each cabinet's new event goes to its own only.
      clock.advance(1000);
      const aOpp = expectCreated(
        await call(keyA.key, createOpportunity, {
          body: { title: 'A after B subscribed', product: 'auto', contact: { last_name: 'Durand' } },
        }),
        opportunitySchema,
      ).id;
      aExtra.push(aOpp);
      const bOpp = expectCreated(
        await call(keyB.key, createOpportunity, {
          body: { title: 'B after subscribing', product: 'auto', contact: { last_name: 'Bernard' } },
        }),
        opportunitySchema,
      ).id;
      await drain();
      const aEvent = listEvents(server.deps, cabinetA).find((e) => e.type === 'opportunity.created' && e.data.opportunity_id === aOpp);
      const bEvent = listEvents(server.deps, cabinetB).find((e) => e.type === 'opportunity.created' && e.data.opportunity_id === bOpp);
      expect(aEvent).toBeDefined();
      expect(bEvent).toBeDefined();
      const aEvents = aEventIds();
      for (const id of [A.webhook, fromA.id]) {
        expect((await deliveriesAs(keyA.key, id, { limit: '100' })).data.map((d) => d.event_id)).toContain(aEvent?.id);
      }
      for (const id of [B.webhook, fromB.id]) {
        const list = (await deliveriesAs(keyB.key, id, { limit: '100' })).data;
        expect(list.map((d) => d.event_id)).toContain(bEvent?.id);
        for (const d of list) {
          expect(aEvents.has(d.event_id), d.event_type).toBe(false);
          expect(aIds()).not.toContain(d.id);
          expect(row('webhook_deliveries', d.id)?.cabinet_id).toBe(cabinetB);
        }
      }
      // On the wire: B's endpoints got B's event, and nothing of A's.
      const requests = receivedRequests();
      const toB = requests.filter((r) => r.subscriptionCabinet === cabinetB);
      expect(toB.map((r) => r.envelope.id)).toContain(bEvent?.id);
      for (const r of toB) {
        expect(r.envelope.cabinet_id).toBe(cabinetB);
        expect(aEvents.has(r.envelope.id)).toBe(false);
        expect(r.rawBody).not.toContain(cabinetA);
      }
      const toA = requests.filter((r) => r.subscriptionCabinet === cabinetA);
      expect(
        toA
          .filter((r) => r.envelope.id === aEvent?.id)
          .map((r) => r.subscriptionId)
          .sort(),
      ).toEqual([A.webhook, fromA.id].sort());
    },
  },

  [listWebhooks.operationId]: {
    title: "B's list never holds A's subscriptions, page by page; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listWebhooks, { limit: '100' });
      expect(all.data.map((w) => w.id)).toContain(B.webhook);
      expectOnlyB('webhook_subscriptions', all.data);
      for (const id of [A.webhook, A.pausedWebhook]) expect(all.data.map((w) => w.id)).not.toContain(id);
      // Walking B's pages one by one never reaches A's either.
      let cursor: string | null = null;
      let seen = 0;
      do {
        const page = await listAs(keyB.key, listWebhooks, cursor === null ? { limit: '1' } : { limit: '1', cursor });
        expectOnlyB('webhook_subscriptions', page.data);
        seen += page.count;
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toBe(all.count);
      // A's list has A's (so there was something to leak), and not B's.
      const mine = await listAs(keyA.key, listWebhooks, { limit: '100' });
      expect(mine.data.map((w) => w.id)).toEqual(expect.arrayContaining([A.webhook, A.pausedWebhook]));
      expect(mine.data.map((w) => w.id)).not.toContain(B.webhook);
      await expectCursorRefusedForB(listWebhooks);
    },
  },

  [getWebhook.operationId]: {
    title: "B's GET of A's subscription (active or paused) is 404 not_found",
    async run() {
      await expectNotFoundForB(getWebhook, 'id', [A.webhook, A.pausedWebhook]);
      expect((await call(keyB.key, getWebhook, { params: { id: B.webhook } })).status).toBe(200);
    },
  },

  [updateWebhook.operationId]: {
    title: "B's PATCH of A's subscription is 404 not_found (even with an invalid url or event) and changes nothing",
    async run() {
      await drain();
      const rowsBefore = aWebhookRows();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const bodyBefore = (await call(keyA.key, getWebhook, { params: { id: A.webhook } })).text;
      clock.advance(1000); // an update would change updated_at
      const patches = [
        { url: `${receiver.url}/b` },
        { events: ['opportunity.won'] },
        { active: false },
        { active: true },
        { description: 'Hijacked' },
        { url: 'https://attacker.example/h', events: ['*'], description: null, active: true },
        // 404 before the body is judged: the existence of A's subscription is not revealed.
        { url: 'http://insecure.example/h' },
        { events: ['opportunity.deleted'] },
      ];
      for (const id of [A.webhook, A.pausedWebhook]) {
        for (const patch of patches) {
          const res = await call(keyB.key, updateWebhook, { params: { id }, body: patch });
          expectError(res, 404, 'not_found');
          expect(res.text).not.toContain(cabinetA);
        }
      }
      expect(aWebhookRows()).toEqual(rowsBefore); // same url, events, active, secret_enc, updated_at
      expect(row('webhook_subscriptions', A.pausedWebhook)).toMatchObject({ active: 0, events: '["opportunity.won"]' });
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);
      expect((await call(keyA.key, getWebhook, { params: { id: A.webhook } })).text).toBe(bodyBefore);
      // The same PATCH by A does apply (the route works; only the cabinet differs).
      const mine = await call(keyA.key, updateWebhook, { params: { id: A.pausedWebhook }, body: { description: 'A paused' } });
      expect(mine.status, mine.text).toBe(200);
    },
  },

  [deleteWebhook.operationId]: {
    title: "B's DELETE of A's subscription is 404 not_found and deletes nothing, deliveries included",
    async run() {
      await drain();
      const rowsBefore = aWebhookRows();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      for (const id of [A.webhook, A.pausedWebhook]) {
        for (let i = 0; i < 2; i++) {
          const res = await call(keyB.key, deleteWebhook, { params: { id } });
          expectError(res, 404, 'not_found');
          expect(res.text).not.toContain(cabinetA);
        }
      }
      expect(aWebhookRows()).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // no cascade to A's deliveries
      expect(row('webhook_deliveries', A.delivery)?.cabinet_id).toBe(cabinetA);
      expect((await call(keyA.key, getWebhook, { params: { id: A.webhook } })).status).toBe(200);
      expect((await deliveriesAs(keyA.key, A.webhook, { limit: '100' })).data.map((d) => d.id)).toContain(A.delivery);
      // The route works: A deletes a throwaway subscription of its own, which B could not.
      const throwaway = expectCreated(
        await call(keyA.key, createWebhook, { body: { url: `${receiver.url}/throwaway`, events: ['job.failed'] } }),
        createdWebhookSchema,
      ).id;
      expectError(await call(keyB.key, deleteWebhook, { params: { id: throwaway } }), 404, 'not_found');
      expect((await call(keyA.key, getWebhook, { params: { id: throwaway } })).status).toBe(200);
      expect((await call(keyA.key, deleteWebhook, { params: { id: throwaway } })).status).toBe(204);
      expectError(await call(keyA.key, getWebhook, { params: { id: throwaway } }), 404, 'not_found');
    },
  },

  [rotateWebhookSecret.operationId]: {
    title:
      "B's rotate-secret of A's subscription is 404 not_found, reveals no secret and leaves A's secret_enc; A's rotation is never replayed to B",
    async run() {
      await drain();
      const rowsBefore = aWebhookRows();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      clock.advance(1000);
      const bodies = [undefined, {}, { overlap_seconds: 0 }, { overlap_seconds: 3600 }];
      for (const id of [A.webhook, A.pausedWebhook]) {
        for (const body of bodies) {
          for (const headers of withAndWithoutIdempotencyKey()) {
            const res = await call(keyB.key, rotateWebhookSecret, { params: { id }, body, headers });
            expectError(res, 404, 'not_found');
            expect(res.text).not.toContain('whsec_');
          }
        }
      }
      expect(aWebhookRows()).toEqual(rowsBefore); // secret_enc, previous_secret_enc and its expiry unchanged
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);

      // A's next delivery is signed with A's own secret, and with it alone.
      const before = receiver.received.length;
      const opp = expectCreated(
        await call(keyA.key, createOpportunity, {
          body: { title: 'A after B rotated', product: 'auto', contact: { last_name: 'Durand' } },
        }),
        opportunitySchema,
      ).id;
      aExtra.push(opp);
      await drain();
      const fresh = receivedRequests()
        .slice(before)
        .filter((r) => r.subscriptionId === A.webhook);
      expect(fresh).toHaveLength(1);
      const [delivery] = fresh;
      expect(String(delivery?.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhook(delivery?.rawBody ?? '', delivery?.headers ?? {}, [aSecrets[A.webhook] ?? ''], { now: clock.now() }).valid).toBe(
        true,
      );

      // One Idempotency-Key: A's rotation (and A's new secret) is never replayed to B.
      const key = randomUUID();
      const body = { overlap_seconds: 60 };
      const mine = await call(keyA.key, rotateWebhookSecret, {
        params: { id: A.pausedWebhook },
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(mine.status, mine.text).toBe(200);
      const rotated = rotatedSecretSchema.parse(mine.body);
      const rowAfterA = row('webhook_subscriptions', A.pausedWebhook);
      const b = await call(keyB.key, rotateWebhookSecret, { params: { id: A.pausedWebhook }, body, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(b.text).not.toContain(rotated.secret);
      expect(row('webhook_subscriptions', A.pausedWebhook)).toEqual(rowAfterA);
      const replayA = await call(keyA.key, rotateWebhookSecret, {
        params: { id: A.pausedWebhook },
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');
      // The replay keeps the rotation's answer but not its secret, which is shown once.
      expect(rotatedSecretReplaySchema.parse(replayA.body)).toMatchObject({ id: A.pausedWebhook, secret: null });
      aSecrets[A.pausedWebhook] = rotated.secret;
    },
  },

  [testWebhook.operationId]: {
    title: "B's test of A's subscription is 404 not_found and sends nothing, records nothing",
    async run() {
      await drain();
      const receivedBefore = receiver.received.length;
      const rowsBefore = aWebhookRows();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      for (const id of [A.webhook, A.pausedWebhook]) {
        for (const headers of withAndWithoutIdempotencyKey()) {
          const res = await call(keyB.key, testWebhook, { params: { id }, headers });
          expectError(res, 404, 'not_found');
          expect(res.text).not.toContain(cabinetA);
        }
      }
      await drain();
      expect(receiver.received).toHaveLength(receivedBefore);
      expect(aWebhookRows()).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // no webhook.test event, no delivery
      expect(count(`SELECT count(*) AS n FROM events WHERE type = 'webhook.test' AND data LIKE '%' || ? || '%'`, A.webhook)).toBe(0);
      // B's test of its own subscription reaches B's endpoint only, as B's event.
      const own = await call(keyB.key, testWebhook, { params: { id: B.webhook } });
      expect(own.status, own.text).toBe(200);
      const result = testDeliverySchema.parse(own.body);
      expect(result).toMatchObject({ succeeded: true, delivery: { webhook_id: B.webhook, event_type: 'webhook.test' } });
      expect(receiver.received).toHaveLength(receivedBefore + 1);
      const last = receivedRequests().at(-1);
      expect(last).toMatchObject({
        subscriptionId: B.webhook,
        subscriptionCabinet: cabinetB,
        envelope: { cabinet_id: cabinetB, data: { webhook_id: B.webhook } },
      });
    },
  },

  [listDeliveries.operationId]: {
    title:
      "B's history of A's subscription is 404 not_found whatever the filters; B's own holds B's only; A's cursors are invalid_cursor for B",
    async run() {
      const mine = await deliveriesAs(keyA.key, A.webhook, { limit: '100' });
      expect(mine.data.map((d) => d.id)).toContain(A.delivery);
      const queries: Record<string, string>[] = [
        {},
        { limit: '1' },
        { status: 'succeeded' },
        { event_type: 'opportunity.created' },
        { status: 'pending', limit: '100' },
      ];
      for (const id of [A.webhook, A.pausedWebhook]) {
        for (const query of queries) {
          const res = await call(keyB.key, listDeliveries, { params: { id }, query });
          expectError(res, 404, 'not_found');
          expect(res.text).not.toContain(A.delivery);
          expect(res.text).not.toContain(cabinetA);
        }
        expect((await call(keyB.key, listDeliveries, { params: { id }, method: 'HEAD' })).status).toBe(404);
      }
      // B's own history: B's deliveries, of B's events, only.
      const aEvents = aEventIds();
      const own = await deliveriesAs(keyB.key, B.webhook, { limit: '100' });
      expect(own.data.map((d) => d.id)).toContain(B.delivery);
      for (const d of own.data) {
        expect(aEvents.has(d.event_id)).toBe(false);
        expect(d.webhook_id).toBe(B.webhook);
        expect(row('webhook_deliveries', d.id)?.cabinet_id).toBe(cabinetB);
      }
      // A's history cursor works for A, and is refused for B (on B's own history; A's is 404 first).
      const first = await deliveriesAs(keyA.key, A.webhook, { limit: '1' });
      expect(first.has_more).toBe(true);
      const cursor = first.next_cursor ?? '';
      const second = await deliveriesAs(keyA.key, A.webhook, { limit: '1', cursor });
      expect(second.count).toBe(1);
      expect(second.data[0]?.id).not.toBe(first.data[0]?.id);
      expectError(
        await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { limit: '1', cursor } }),
        400,
        'invalid_cursor',
      );
      expectError(await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { cursor } }), 400, 'invalid_cursor');
      expectError(await call(keyB.key, listDeliveries, { params: { id: A.webhook }, query: { limit: '1', cursor } }), 404, 'not_found');
      // ...and so is a cursor of A's /webhooks list, on B's history and on B's /webhooks list.
      const hooks = await listAs(keyA.key, listWebhooks, { limit: '1' });
      const hooksCursor = hooks.next_cursor ?? '';
      expect(hooksCursor).not.toBe('');
      expectError(
        await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { cursor: hooksCursor } }),
        400,
        'invalid_cursor',
      );
      expectError(await call(keyB.key, listWebhooks, { query: { cursor: hooksCursor } }), 400, 'invalid_cursor');
    },
  },

  [replayDelivery.operationId]: {
    title: "B's replay of A's delivery is 404 not_found, under A's subscription or B's own, and sends nothing",
    async run() {
      await drain();
      const receivedBefore = receiver.received.length;
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const attempts: Record<string, string>[] = [
        { id: A.webhook, delivery_id: A.delivery }, // A's own pair
        { id: B.webhook, delivery_id: A.delivery }, // A's delivery under B's own subscription
        { id: A.webhook, delivery_id: B.delivery }, // B's delivery under A's subscription
        { id: A.pausedWebhook, delivery_id: A.delivery },
      ];
      for (const params of attempts) {
        for (const headers of withAndWithoutIdempotencyKey()) {
          const res = await call(keyB.key, replayDelivery, { params, headers });
          expectError(res, 404, 'not_found');
          expect(res.text).not.toContain(cabinetA);
        }
      }
      // Nor can A replay B's delivery under A's own subscription.
      expectError(await call(keyA.key, replayDelivery, { params: { id: A.webhook, delivery_id: B.delivery } }), 404, 'not_found');
      await drain();
      expect(receiver.received).toHaveLength(receivedBefore);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);
      expect(count('SELECT count(*) AS n FROM webhook_deliveries WHERE replay_of IN (?, ?)', A.delivery, B.delivery)).toBe(0);
      // The route works for A, and A's replay goes to A's endpoint, as A's event.
      const res = await call(keyA.key, replayDelivery, { params: { id: A.webhook, delivery_id: A.delivery } });
      expect(res.status, res.text).toBe(202);
      const replay = deliverySchema.parse(res.body);
      expect(replay).toMatchObject({ webhook_id: A.webhook, replay_of: A.delivery, status: 'pending' });
      aExtra.push(replay.id);
      await drain();
      expect(row('webhook_deliveries', replay.id)).toMatchObject({ cabinet_id: cabinetA, status: 'succeeded' });
      const sent = receivedRequests().slice(receivedBefore);
      expect(sent.map((r) => [r.deliveryId, r.subscriptionId, r.envelope.cabinet_id])).toEqual([[replay.id, A.webhook, cabinetA]]);
    },
  },
};
