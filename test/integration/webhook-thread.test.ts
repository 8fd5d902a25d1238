import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import { createdWebhookSchema, deliverySchema, testDeliverySchema } from '../../shared/webhooks.js';
import { loadConfig } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps } from '../../server/deps.js';
import { recordEvent } from '../../server/events/service.js';
import { createLogger } from '../../server/platform/logging.js';
import { packageRoot } from '../../server/paths.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { createDispatcher } from '../../server/webhooks/dispatcher.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { apiClient, createOpportunity } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, tempDir, testClock, type TestServer } from '../helpers/server.js';

/**
 * The dispatcher on its own thread, as `courtier serve` runs it: the compiled thread entry in dist/
 * (npm test builds first), the real clock, a real HTTPS receiver. The dispatcher's rules are tested
 * on the main thread (webhooks.test.ts); here, what crossing the thread must keep.
 */

const THREAD_STARTED = 'webhook deliveries run on a thread of their own';
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

const logged = (server: TestServer, text: string) => server.logs.some((line) => line.includes(text));

describe('the webhook dispatcher on its own thread', () => {
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    server = await startTestServer({ config: { webhookAllowPrivateTargets: true }, webhooks: { extraCa: [receiver.ca] } });
    api = apiClient(server, server.createKey(await server.createCabinet()).key);
  });
  afterAll(() => server?.close());

  it('is not started while the install has no subscription, and events of that time never reach a later one', async () => {
    await createOpportunity(api, { contact: { last_name: 'Avant' } });
    await server.app.webhookDispatcher.drain();
    expect(logged(server, THREAD_STARTED)).toBe(false);

    const created = createdWebhookSchema.parse((await api.post('/webhooks', { url: receiver.url, events: ['opportunity.created'] })).body);
    const { id } = await createOpportunity(api, { contact: { last_name: 'Après' } });
    const [received] = await receiver.waitFor(1);
    expect(logged(server, THREAD_STARTED)).toBe(true);
    const body = JSON.parse(received?.rawBody ?? '{}') as { data: { opportunity_id: string } };
    expect(body.data.opportunity_id).toBe(id);
    // Signed with the subscription's secret, which the thread decrypted with the service's key.
    expect(verifyWebhook(received?.rawBody ?? '', received?.headers ?? {}, [created.secret]).valid).toBe(true);

    await server.app.webhookDispatcher.drain();
    const deliveries = (await api.get(`/webhooks/${created.id}/deliveries?limit=10`)).body.data as unknown[];
    expect(deliveries.map((d) => deliverySchema.parse(d).status)).toEqual(['succeeded']);
    expect(receiver.received).toHaveLength(1);
  });

  it('answers a test delivery with its attempt, made on the thread', async () => {
    const created = createdWebhookSchema.parse((await api.post('/webhooks', { url: receiver.url, events: ['devis.signed'] })).body);
    const res = await api.post(`/webhooks/${created.id}/test`, {});
    expect(res.status).toBe(200);
    const answer = testDeliverySchema.parse(res.body);
    expect(answer.succeeded).toBe(true);
    expect(answer.delivery.attempts).toHaveLength(1);
  });

  it('relays the thread’s log lines, and stops with the app', async () => {
    const line = server.logs.find((l) => l.includes(THREAD_STARTED)) ?? '';
    expect(JSON.parse(line)).toMatchObject({ level: 30, thread: 'webhooks', msg: THREAD_STARTED });
    await server.close();
    const before = receiver.received.length;
    // Nothing is sent after the close: the thread ended with the app.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(before);
  });
});

describe('while no subscription needs the thread', () => {
  it('history past its 90 days is purged from the main thread at start', async () => {
    const clock = testClock();
    const dataDir = tempDir();
    const first = await startTestServer({ clock, dataDir });
    await createOpportunity(apiClient(first, first.createKey(await first.createCabinet()).key), { contact: { last_name: 'Ancien' } });
    await first.close();
    const events = () => {
      const db = openDatabase(databaseFile(dataDir));
      try {
        return (db.sqlite.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    expect(events()).toBeGreaterThan(0);
    clock.advance(91 * 24 * 3600 * 1000);
    const second = await startTestServer({ clock, dataDir });
    try {
      await eventually(
        () => (second.deps.db.sqlite.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n,
        (n) => n === 0,
        'the old events purged',
      );
      expect(logged(second, THREAD_STARTED)).toBe(false);
    } finally {
      await second.close();
    }
  });
});

describe('when the thread cannot start', () => {
  it('delivers from the main thread, with a warning', async () => {
    const server = await startTestServer({
      config: { webhookAllowPrivateTargets: true },
      webhooks: { entry: join(packageRoot(), 'dist', 'no-such-entry.js'), extraCa: [receiver.ca] },
    });
    try {
      const api = apiClient(server, server.createKey(await server.createCabinet()).key);
      const created = createdWebhookSchema.parse(
        (await api.post('/webhooks', { url: receiver.url, events: ['opportunity.created'] })).body,
      );
      receiver.received.length = 0;
      await createOpportunity(api, { contact: { last_name: 'Repli' } });
      await eventually(
        async () =>
          ((await api.get(`/webhooks/${created.id}/deliveries?limit=10`)).body.data as unknown[]).map(
            (d) => deliverySchema.parse(d).status,
          ),
        (statuses) => statuses.join() === 'succeeded',
        'the delivery, from the main thread',
      );
      expect(logged(server, 'the webhook dispatcher thread could not start')).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('the dispatcher lets a writer that goes first take the lock', () => {
  it('takes no write lock while yieldTo says the API is writing, and delivers once it is done', async () => {
    const dataDir = tempDir();
    const db = openDatabase(databaseFile(dataDir));
    const deps = defaultDeps(db, loadConfig({ dataDir, port: 0, webhookAllowPrivateTargets: true }, {}), { env: {} });
    let apiWriting = true;
    let asked = 0;
    const dispatcher = createDispatcher(deps, {
      logger: createLogger({ level: 'silent' }),
      extraCa: [receiver.ca],
      yieldTo: () => {
        asked += 1;
        return apiWriting;
      },
    });
    try {
      const { cabinet_id } = await initCabinet(deps, { cabinet: 'Priorité', email: 'p@example.fr', password: 'correct horse battery' });
      createWebhook(deps, cabinet_id, { url: receiver.url, events: ['devis.signed'] });
      receiver.received.length = 0;
      dispatcher.start();
      db.sqlite.transaction(() =>
        recordEvent(deps, cabinet_id, 'devis.signed', {
          devis_id: randomUUID(),
          client_id: randomUUID(),
          opportunity_id: null,
          compagnie: 'sandbox',
          produit: 'auto',
          tarif_eur: 420,
          signed_at: new Date().toISOString(),
          contract_id: randomUUID(),
        }),
      )();
      await new Promise((resolve) => setTimeout(resolve, 100));
      // It asked again turn after turn, and neither fanned out nor claimed anything meanwhile.
      expect(asked).toBeGreaterThan(5);
      expect(db.sqlite.prepare('SELECT count(*) AS n FROM webhook_deliveries').get()).toEqual({ n: 0 });
      expect(receiver.received).toHaveLength(0);
      apiWriting = false;
      await receiver.waitFor(1);
    } finally {
      await dispatcher.stop();
      db.close();
    }
  });
});
