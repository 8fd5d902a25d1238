/**
 * Tenant isolation, route by route. Two cabinets A and B share one server and one SQLite file; B's
 * key (with every scope) must never see, change, sign, download, page through or reference what
 * belongs to A. Another cabinet's resource is 404 not_found, never 403: its existence is not
 * revealed. Every route of the public catalogue has its entry in ISOLATION_CHECKS, and a test
 * fails when a route is added to the catalogue without one.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getMe, meResponseSchema } from '../../shared/api-keys.js';
import { PUBLIC_ENDPOINTS } from '../../shared/catalogue.js';
import {
  clientSchema,
  createClient,
  createOpportunity,
  getClient,
  getOpportunity,
  listClients,
  listOpportunities,
  opportunitySchema,
  updateOpportunity,
} from '../../shared/crm.js';
import { createDevis, devisSchema, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from '../../shared/devis.js';
import { PUBLIC_API_PREFIX, type Endpoint } from '../../shared/endpoint.js';
import { errorBodySchema } from '../../shared/errors.js';
import { getApiDocs, getOpenApiDocument } from '../../shared/meta.js';
import { verifyWebhook } from '../../shared/verify-webhook.js';
import {
  createWebhook,
  createdWebhookSchema,
  deleteWebhook,
  deliverySchema,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotatedSecretSchema,
  rotateWebhookSecret,
  testDeliverySchema,
  testWebhook,
  updateWebhook,
  type Delivery,
} from '../../shared/webhooks.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let cabinetA: string;
let cabinetB: string;
let keyA: { key: string; key_id: string };
let keyB: { key: string; key_id: string };
/** One real HTTPS receiver for both cabinets: A's subscriptions at its path, B's at <path>/b. */
let receiver: Receiver;

/** A's resources, created through A's key (the priced devis is priced as the pricing engine would). */
const A = {
  personClient: '',
  companyClient: '',
  qualifiedOpportunity: '',
  newOpportunity: '',
  draftDevis: '',
  pricedDevis: '',
  signedDevis: '',
  contract: '',
  /** Subscribed to "*" before hookedOpportunity was created and moved, so it holds two deliveries. */
  webhook: '',
  /** Paused, subscribed to opportunity.won only. */
  pausedWebhook: '',
  hookedOpportunity: '',
  /** The opportunity.created delivery of hookedOpportunity to webhook. */
  delivery: '',
};
/** B's own resources, so that B's lists are not trivially empty. */
const B = { client: '', opportunity: '', pricedDevis: '', webhook: '', delivery: '' };
/** The secrets A was given for its subscriptions (at creation), to check what signs A's deliveries. */
const aSecrets: Record<string, string> = {};

/** A's resources created later by the checks themselves. */
const aExtra: string[] = [];
const aIds = () => [...Object.values(A), ...aExtra];

// ---------------------------------------------------------------------------------------------
// HTTP helpers: URLs are built from the catalogue entries themselves.
// ---------------------------------------------------------------------------------------------

interface Result {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

interface CallOptions {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  method?: string;
}

function pathOf(endpoint: Endpoint, params: Record<string, string> = {}, query: Record<string, string> = {}): string {
  const path = endpoint.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${endpoint.operationId}`);
    return encodeURIComponent(value);
  });
  const qs = new URLSearchParams(query).toString();
  return `${PUBLIC_API_PREFIX}${path}${qs ? `?${qs}` : ''}`;
}

async function fetchPath(key: string | null, path: string, options: CallOptions = {}): Promise<Result> {
  const headers: Record<string, string> = { ...options.headers };
  if (key !== null) headers['X-API-Key'] = key;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await server.request(path, {
    method: options.method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.includes('application/json') === true && text !== '';
  return { status: res.status, headers: res.headers, text, body: isJson ? (JSON.parse(text) as unknown) : undefined };
}

function call(key: string | null, endpoint: Endpoint, options: CallOptions = {}): Promise<Result> {
  return fetchPath(key, pathOf(endpoint, options.params, options.query), { method: endpoint.method, ...options });
}

function expectError(res: Result, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  const body = errorBodySchema.parse(res.body);
  expect(body.error).toBe(code);
  return body;
}

function expectCreated<T>(res: Result, schema: { parse(v: unknown): T }): T {
  expect(res.status, res.text).toBe(201);
  return schema.parse(res.body);
}

// ---------------------------------------------------------------------------------------------
// Direct database checks
// ---------------------------------------------------------------------------------------------

type Table = 'opportunities' | 'clients' | 'devis' | 'contracts' | 'webhook_subscriptions' | 'webhook_deliveries';

function row(table: Table, id: string): Record<string, unknown> | undefined {
  return server.deps.db.sqlite.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
}

function count(sql: string, ...args: unknown[]): number {
  return (server.deps.db.sqlite.prepare(sql).get(...args) as { n: number }).n;
}

const TENANT_TABLES = [
  'opportunities',
  'clients',
  'devis',
  'contracts',
  'devis_documents',
  'events',
  'idempotency_keys',
  'webhook_subscriptions',
  'webhook_deliveries',
] as const;

function cabinetRowCounts(cabinetId: string): Record<(typeof TENANT_TABLES)[number], number> {
  const counts = (t: string) => count(`SELECT count(*) AS n FROM ${t} WHERE cabinet_id = ?`, cabinetId);
  return Object.fromEntries(TENANT_TABLES.map((t) => [t, counts(t)])) as Record<(typeof TENANT_TABLES)[number], number>;
}

/** Every item of a page B received is B's, per the database, and none is A's. */
function expectOnlyB(table: Table, items: { id: string }[]): void {
  for (const item of items) {
    expect(aIds()).not.toContain(item.id);
    expect(row(table, item.id)?.cabinet_id).toBe(cabinetB);
  }
}

async function listAs(key: string, endpoint: Endpoint, query: Record<string, string> = {}) {
  const res = await call(key, endpoint, { query });
  expect(res.status, res.text).toBe(200);
  return res.body as { data: { id: string }[]; next_cursor: string | null; has_more: boolean; count: number };
}

/** A cursor of A (limit=1 over 2+ rows) is 400 invalid_cursor for B, with the same filters. */
async function expectCursorRefusedForB(endpoint: Endpoint, filters: Record<string, string> = {}) {
  const first = await listAs(keyA.key, endpoint, { ...filters, limit: '1' });
  expect(first.count).toBe(1);
  expect(first.has_more).toBe(true);
  expect(first.next_cursor).toEqual(expect.any(String));
  const cursor = first.next_cursor as string;
  // The cursor works for A...
  const second = await listAs(keyA.key, endpoint, { ...filters, limit: '1', cursor });
  expect(second.count).toBe(1);
  expect(second.data[0]?.id).not.toBe(first.data[0]?.id);
  // ...and is refused for B, whatever the limit.
  expectError(await call(keyB.key, endpoint, { query: { ...filters, limit: '1', cursor } }), 400, 'invalid_cursor');
  expectError(await call(keyB.key, endpoint, { query: { ...filters, cursor } }), 400, 'invalid_cursor');
}

// ---------------------------------------------------------------------------------------------
// Webhook helpers
// ---------------------------------------------------------------------------------------------

const drain = () => server.app.webhookDispatcher.drain();

/** No Idempotency-Key, then a fresh one: a failed request must behave the same either way. */
const withAndWithoutIdempotencyKey = (): Record<string, string>[] => [{}, { 'Idempotency-Key': randomUUID() }];

type DeliveryPage = { data: Delivery[]; next_cursor: string | null; has_more: boolean; count: number };

async function deliveriesAs(key: string, webhookId: string, query: Record<string, string> = {}): Promise<DeliveryPage> {
  const res = await call(key, listDeliveries, { params: { id: webhookId }, query });
  expect(res.status, res.text).toBe(200);
  const page = res.body as DeliveryPage;
  return { ...page, data: page.data.map((d) => deliverySchema.parse(d)) };
}

/** A's subscriptions, straight from SQLite (url, events, active, secret_enc, updated_at…). */
function aWebhookRows() {
  return [A.webhook, A.pausedWebhook, ...aExtra].map((id) => row('webhook_subscriptions', id)).filter((r) => r !== undefined);
}

function aEventIds(): Set<string> {
  return new Set(listEvents(server.deps, cabinetA).map((e) => e.id));
}

/**
 * Every request the receiver got, with the delivery, subscription and cabinet it was for per the
 * database (found by its Service-Delivery-Id), and its envelope.
 */
function receivedRequests() {
  return receiver.received.map((r) => {
    const deliveryId = String(r.headers['service-delivery-id']);
    const delivery = row('webhook_deliveries', deliveryId);
    const subscriptionId = delivery === undefined ? undefined : String(delivery.subscription_id);
    const subscription = subscriptionId === undefined ? undefined : row('webhook_subscriptions', subscriptionId);
    const envelope = JSON.parse(r.rawBody) as { id: string; type: string; cabinet_id: string; data: Record<string, unknown> };
    return { ...r, deliveryId, subscriptionId, subscriptionCabinet: subscription?.cabinet_id, envelope };
  });
}

/** B's GET and HEAD of each id: 404 not_found, never 403, never 200. */
async function expectNotFoundForB(endpoint: Endpoint, param: string, ids: string[]) {
  for (const id of ids) {
    const mine = await call(keyA.key, endpoint, { params: { [param]: id } });
    expect(mine.status, mine.text).toBe(200);
    const res = await call(keyB.key, endpoint, { params: { [param]: id } });
    const error = expectError(res, 404, 'not_found');
    expect(res.text).not.toContain(cabinetA);
    expect(error.message).not.toMatch(/another cabinet|forbidden/i);
    const head = await call(keyB.key, endpoint, { params: { [param]: id }, method: 'HEAD' });
    expect(head.status).toBe(404);
  }
}

// ---------------------------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ clock, config: { webhookAllowPrivateTargets: true }, webhooks: { extraCa: [receiver.ca] } });
  cabinetA = await server.createCabinet('Cabinet A');
  cabinetB = await server.createCabinet('Cabinet B');
  keyA = server.createKey(cabinetA);
  keyB = server.createKey(cabinetB);

  const step = () => clock.advance(1000);
  A.personClient = expectCreated(await call(keyA.key, createClient, { body: { type: 'person', last_name: 'Durand', first_name: 'Alice' } }), clientSchema).id;
  step();
  A.companyClient = expectCreated(await call(keyA.key, createClient, { body: { type: 'company', company_name: 'Durand SARL' } }), clientSchema).id;
  step();
  A.qualifiedOpportunity = expectCreated(
    await call(keyA.key, createOpportunity, {
      body: { title: 'A qualified', product: 'auto', stage: 'qualified', contact: { last_name: 'Durand' }, tags: ['a-tag'] },
    }),
    opportunitySchema,
  ).id;
  step();
  A.newOpportunity = expectCreated(
    await call(keyA.key, createOpportunity, { body: { title: 'A new', product: 'mrh', contact: { last_name: 'Durand' }, expected_value_eur: 900 } }),
    opportunitySchema,
  ).id;
  step();
  A.draftDevis = expectCreated(
    await call(keyA.key, createDevis, {
      body: { client_id: A.personClient, opportunity_id: A.qualifiedOpportunity, compagnie: 'sandbox', produit: 'auto', dicData: { bonus: 0.5 } },
    }),
    devisSchema,
  ).id;
  step();
  A.pricedDevis = expectCreated(
    await call(keyA.key, createDevis, { body: { client_id: A.personClient, opportunity_id: A.newOpportunity, compagnie: 'sandbox', produit: 'mrh' } }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetA, A.pricedDevis, { tarifEur: 512.34, pdf: Buffer.from('%PDF-1.4 test') });
  step();
  A.signedDevis = expectCreated(
    await call(keyA.key, createDevis, { body: { client_id: A.companyClient, compagnie: 'sandbox', produit: 'rc-pro' } }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetA, A.signedDevis, { tarifEur: 99.9, pdf: Buffer.from('%PDF-1.4 signed') });
  const signed = await call(keyA.key, signDevis, { params: { devis_id: A.signedDevis } });
  expect(signed.status, signed.text).toBe(200);
  A.contract = devisSchema.parse(signed.body).contract_id as string;
  step();

  B.client = expectCreated(await call(keyB.key, createClient, { body: { type: 'person', last_name: 'Bernard' } }), clientSchema).id;
  B.opportunity = expectCreated(
    await call(keyB.key, createOpportunity, { body: { title: 'B own', product: 'auto', contact: { last_name: 'Bernard' } } }),
    opportunitySchema,
  ).id;
  B.pricedDevis = expectCreated(
    await call(keyB.key, createDevis, { body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' } }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetB, B.pricedDevis, { tarifEur: 42, pdf: Buffer.from('%PDF-1.4 B') });
  step();

  // Webhooks: A subscribes to "*" (and keeps a paused subscription), then creates and moves an
  // opportunity, so that A's subscription has two deliveries; B subscribes to "*" at <path>/b and
  // tests it, so that B has a delivery of its own.
  const aHook = expectCreated(await call(keyA.key, createWebhook, { body: { url: receiver.url, events: ['*'], description: 'A CRM' } }), createdWebhookSchema);
  A.webhook = aHook.id;
  aSecrets[aHook.id] = aHook.secret;
  step();
  const aPaused = expectCreated(
    await call(keyA.key, createWebhook, { body: { url: `${receiver.url}/paused`, events: ['opportunity.won'] } }),
    createdWebhookSchema,
  );
  A.pausedWebhook = aPaused.id;
  aSecrets[aPaused.id] = aPaused.secret;
  const paused = await call(keyA.key, updateWebhook, { params: { id: aPaused.id }, body: { active: false } });
  expect(paused.status, paused.text).toBe(200);
  step();
  const bHook = expectCreated(await call(keyB.key, createWebhook, { body: { url: `${receiver.url}/b`, events: ['*'], description: 'B CRM' } }), createdWebhookSchema);
  B.webhook = bHook.id;
  step();
  A.hookedOpportunity = expectCreated(
    await call(keyA.key, createOpportunity, { body: { title: 'A hooked', product: 'auto', contact: { last_name: 'Durand' } } }),
    opportunitySchema,
  ).id;
  step();
  const moved = await call(keyA.key, updateOpportunity, { params: { opportunity_id: A.hookedOpportunity }, body: { stage: 'qualified' } });
  expect(moved.status, moved.text).toBe(200);
  step();
  const bTest = await call(keyB.key, testWebhook, { params: { id: B.webhook } });
  expect(bTest.status, bTest.text).toBe(200);
  B.delivery = testDeliverySchema.parse(bTest.body).delivery.id;
  await drain();
  const aDeliveries = (await deliveriesAs(keyA.key, A.webhook, { limit: '100' })).data;
  expect(aDeliveries.map((d) => [d.event_type, d.status]).sort()).toEqual([
    ['opportunity.created', 'succeeded'],
    ['opportunity.stage_changed', 'succeeded'],
  ]);
  A.delivery = aDeliveries.find((d) => d.event_type === 'opportunity.created')?.id ?? '';
  step();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

// ---------------------------------------------------------------------------------------------
// One entry per operationId of the catalogue
// ---------------------------------------------------------------------------------------------

interface IsolationCheck {
  title: string;
  run: () => Promise<void>;
}

const ISOLATION_CHECKS: Record<string, IsolationCheck> = {
  [getMe.operationId]: {
    title: "B's key reports B's cabinet, A's key A's",
    async run() {
      const b = meResponseSchema.parse((await call(keyB.key, getMe)).body);
      expect(b).toMatchObject({ cabinet_id: cabinetB, key_id: keyB.key_id });
      const a = meResponseSchema.parse((await call(keyA.key, getMe)).body);
      expect(a).toMatchObject({ cabinet_id: cabinetA, key_id: keyA.key_id });
    },
  },

  [createOpportunity.operationId]: {
    title: 'one Idempotency-Key used by A then B gives each cabinet its own new opportunity',
    async run() {
      const key = randomUUID();
      const body = { title: 'Shared key', product: 'auto', contact: { last_name: 'Petit' } };
      const before = cabinetRowCounts(cabinetB).opportunities;
      const a = await call(keyA.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      const fromA = expectCreated(a, opportunitySchema);
      const b = await call(keyB.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      const fromB = expectCreated(b, opportunitySchema);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(fromB.id).not.toBe(fromA.id);
      expect(row('opportunities', fromA.id)?.cabinet_id).toBe(cabinetA);
      expect(row('opportunities', fromB.id)?.cabinet_id).toBe(cabinetB);
      expect(cabinetRowCounts(cabinetB).opportunities).toBe(before + 1);
      // One claim per cabinet; each replays its own cabinet's resource.
      expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(2);
      const replayB = await call(keyB.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      expect(replayB.status).toBe(200);
      expect(opportunitySchema.parse(replayB.body).id).toBe(fromB.id);
      const replayA = await call(keyA.key, createOpportunity, { body, headers: { 'Idempotency-Key': key } });
      expect(opportunitySchema.parse(replayA.body).id).toBe(fromA.id);
      // And each cabinet's opportunity is invisible to the other.
      expectError(await call(keyA.key, getOpportunity, { params: { opportunity_id: fromB.id } }), 404, 'not_found');
      expectError(await call(keyB.key, getOpportunity, { params: { opportunity_id: fromA.id } }), 404, 'not_found');
      aExtra.push(fromA.id);
    },
  },

  [listOpportunities.operationId]: {
    title: "B's lists never hold A's opportunities, whatever the filters; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listOpportunities, { limit: '100' });
      expect(all.data.map((o) => o.id)).toContain(B.opportunity);
      expectOnlyB('opportunities', all.data);
      const filters: Record<string, string>[] = [
        { stage: 'qualified' },
        { stage: 'new' },
        { stage: 'won' },
        { created_after: '2000-01-01T00:00:00Z' },
        { stage: 'qualified', created_after: '2000-01-01T00:00:00Z', limit: '1' },
      ];
      for (const query of filters) {
        const page = await listAs(keyB.key, listOpportunities, query);
        expectOnlyB('opportunities', page.data);
      }
      // A filter only A's rows match gives B an empty page, not A's rows.
      const qualified = await listAs(keyB.key, listOpportunities, { stage: 'qualified' });
      expect(qualified).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      await expectCursorRefusedForB(listOpportunities);
      await expectCursorRefusedForB(listOpportunities, { created_after: '2000-01-01T00:00:00Z' });
    },
  },

  [getOpportunity.operationId]: {
    title: "B's GET of A's opportunity is 404 not_found",
    async run() {
      await expectNotFoundForB(getOpportunity, 'opportunity_id', [A.qualifiedOpportunity, A.newOpportunity]);
    },
  },

  [updateOpportunity.operationId]: {
    title: "B's PATCH of A's opportunity is 404 not_found and changes nothing",
    async run() {
      const id = A.qualifiedOpportunity;
      const rowBefore = row('opportunities', id);
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      const bodyBefore = (await call(keyA.key, getOpportunity, { params: { opportunity_id: id } })).text;
      clock.advance(1000); // an update would change updated_at
      const patches = [
        { title: 'Hijacked' },
        { stage: 'won' },
        { stage: 'lost', reopen: true },
        { contact: { email: 'attacker@example.fr' }, tags: ['b'] },
        { expected_value_eur: 1 },
      ];
      for (const patch of patches) {
        const res = await call(keyB.key, updateOpportunity, { params: { opportunity_id: id }, body: patch });
        expectError(res, 404, 'not_found');
      }
      expect(row('opportunities', id)).toEqual(rowBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      expect((await call(keyA.key, getOpportunity, { params: { opportunity_id: id } })).text).toBe(bodyBefore);
      // The same PATCH by A does apply (the route works; only the cabinet differs).
      const mine = await call(keyA.key, updateOpportunity, { params: { opportunity_id: A.newOpportunity }, body: { tags: ['a-only'] } });
      expect(mine.status, mine.text).toBe(200);
    },
  },

  [createClient.operationId]: {
    title: 'a client created by B is B’s only; one Idempotency-Key used by A then B gives two clients',
    async run() {
      const key = randomUUID();
      const body = { type: 'person', last_name: 'Leroy' };
      const fromA = expectCreated(await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      const b = await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } });
      const fromB = expectCreated(b, clientSchema);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(fromB.id).not.toBe(fromA.id);
      expect(row('clients', fromA.id)?.cabinet_id).toBe(cabinetA);
      expect(row('clients', fromB.id)?.cabinet_id).toBe(cabinetB);
      expectError(await call(keyA.key, getClient, { params: { client_id: fromB.id } }), 404, 'not_found');
      expectError(await call(keyB.key, getClient, { params: { client_id: fromA.id } }), 404, 'not_found');
      aExtra.push(fromA.id);
    },
  },

  [listClients.operationId]: {
    title: "B's lists never hold A's clients, whatever the filters; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listClients, { limit: '100' });
      expect(all.data.map((c) => c.id)).toContain(B.client);
      expectOnlyB('clients', all.data);
      const filters: Record<string, string>[] = [{ type: 'person' }, { type: 'company' }, { created_after: '2000-01-01T00:00:00Z' }, { type: 'company', limit: '1' }];
      for (const query of filters) {
        expectOnlyB('clients', (await listAs(keyB.key, listClients, query)).data);
      }
      expect(await listAs(keyB.key, listClients, { type: 'company' })).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      await expectCursorRefusedForB(listClients);
      await expectCursorRefusedForB(listClients, { type: 'person' });
    },
  },

  [getClient.operationId]: {
    title: "B's GET of A's client is 404 not_found",
    async run() {
      await expectNotFoundForB(getClient, 'client_id', [A.personClient, A.companyClient]);
    },
  },

  [createDevis.operationId]: {
    title: "B's POST /devis referencing A's client or opportunity is 400 validation_error and writes nothing",
    async run() {
      const before = cabinetRowCounts(cabinetB);
      const totalDevis = count('SELECT count(*) AS n FROM devis');
      const attempts: { body: Record<string, unknown>; path: string }[] = [
        { body: { client_id: A.personClient, compagnie: 'sandbox', produit: 'auto' }, path: 'body.client_id' },
        { body: { client_id: A.companyClient, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' }, path: 'body.client_id' },
        { body: { client_id: B.client, opportunity_id: A.qualifiedOpportunity, compagnie: 'sandbox', produit: 'auto' }, path: 'body.opportunity_id' },
      ];
      for (const { body, path } of attempts) {
        const variants: Record<string, string>[] = [{}, { 'Idempotency-Key': randomUUID() }];
        for (const headers of variants) {
          const res = await call(keyB.key, createDevis, { body, headers });
          const error = expectError(res, 400, 'validation_error');
          expect(error.details).toEqual([{ path, message: expect.stringContaining('in this cabinet') as string }]);
        }
      }
      expect(cabinetRowCounts(cabinetB)).toEqual(before); // no devis, and no idempotency claim left behind
      expect(count('SELECT count(*) AS n FROM devis')).toBe(totalDevis);
      const crossRefs = count(
        `SELECT count(*) AS n FROM devis WHERE cabinet_id = ? AND (client_id IN (?, ?) OR opportunity_id IN (?, ?))`,
        cabinetB,
        A.personClient,
        A.companyClient,
        A.qualifiedOpportunity,
        A.newOpportunity,
      );
      expect(crossRefs).toBe(0);
      // B's own references are accepted (the route works).
      const own = expectCreated(
        await call(keyB.key, createDevis, { body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' } }),
        devisSchema,
      );
      expect(row('devis', own.id)?.cabinet_id).toBe(cabinetB);
    },
  },

  [listDevis.operationId]: {
    title: "B's lists never hold A's quotes, even filtered on A's client or opportunity; A's cursor is invalid_cursor for B",
    async run() {
      const all = await listAs(keyB.key, listDevis, { limit: '100' });
      expect(all.data.map((d) => d.id)).toContain(B.pricedDevis);
      expectOnlyB('devis', all.data);
      const aOnly: Record<string, string>[] = [
        { client_id: A.personClient },
        { client_id: A.companyClient },
        { opportunity_id: A.qualifiedOpportunity },
        { opportunity_id: A.newOpportunity },
        { client_id: A.personClient, opportunity_id: A.newOpportunity, status: 'priced' },
        { status: 'signed' },
        { status: 'draft', client_id: A.personClient },
      ];
      for (const query of aOnly) {
        expect(await listAs(keyB.key, listDevis, query), JSON.stringify(query)).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      }
      const filters: Record<string, string>[] = [{ status: 'priced' }, { status: 'draft' }, { created_after: '2000-01-01T00:00:00Z' }, { limit: '1' }];
      for (const query of filters) {
        expectOnlyB('devis', (await listAs(keyB.key, listDevis, query)).data);
      }
      await expectCursorRefusedForB(listDevis);
      await expectCursorRefusedForB(listDevis, { client_id: A.personClient });
    },
  },

  [getDevis.operationId]: {
    title: "B's GET of A's quote (draft, priced or signed) is 404 not_found",
    async run() {
      await expectNotFoundForB(getDevis, 'devis_id', [A.draftDevis, A.pricedDevis, A.signedDevis]);
    },
  },

  [signDevis.operationId]: {
    title: "B's POST /devis/{A's id}/sign is 404 not_found and signs nothing",
    async run() {
      const db = server.deps.db.sqlite;
      const rowsBefore = [A.draftDevis, A.pricedDevis, A.signedDevis].map((id) => row('devis', id));
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      for (const id of [A.pricedDevis, A.draftDevis, A.signedDevis]) {
        // 404, not 409 invalid_devis_transition: the state of A's quote is not revealed either.
        expectError(await call(keyB.key, signDevis, { params: { devis_id: id } }), 404, 'not_found');
        expectError(
          await call(keyB.key, signDevis, {
            params: { devis_id: id },
            body: { signed_at: '2026-11-22T10:00:00Z' },
            headers: { 'Idempotency-Key': randomUUID() },
          }),
          404,
          'not_found',
        );
      }
      expect([A.draftDevis, A.pricedDevis, A.signedDevis].map((id) => row('devis', id))).toEqual(rowsBefore);
      expect(row('devis', A.pricedDevis)).toMatchObject({ status: 'priced', contract_id: null, signed_at: null });
      expect(count('SELECT count(*) AS n FROM contracts WHERE devis_id = ?', A.pricedDevis)).toBe(0);
      expect(db.prepare('SELECT stage FROM opportunities WHERE id = ?').get(A.newOpportunity)).toEqual({ stage: 'new' });
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);
    },
  },

  [getDevisPdf.operationId]: {
    title: "B's GET /devis/{A's id}/pdf is 404 not_found, with no redirect",
    async run() {
      const mine = await call(keyA.key, getDevisPdf, { params: { devis_id: A.pricedDevis } });
      expect(mine.status).toBe(302);
      for (const id of [A.pricedDevis, A.signedDevis, A.draftDevis]) {
        const res = await call(keyB.key, getDevisPdf, { params: { devis_id: id } });
        // not_found, not pdf_not_available for the draft: nothing about A's quote leaks.
        expectError(res, 404, 'not_found');
        expect(res.headers.get('location')).toBeNull();
      }
    },
  },

  [downloadDevisPdf.operationId]: {
    title: "A's signed link with cabinet_id changed to B's is 403 invalid_signature; B's link cannot reach A's PDF",
    async run() {
      const redirect = await call(keyA.key, getDevisPdf, { params: { devis_id: A.pricedDevis } });
      expect(redirect.status).toBe(302);
      const link = new URL(redirect.headers.get('location') ?? '', server.url);
      expect(link.searchParams.get('cabinet_id')).toBe(cabinetA);
      const ok = await server.request(link.pathname + link.search);
      expect(ok.status).toBe(200);
      expect(Buffer.from(await ok.arrayBuffer()).toString()).toBe('%PDF-1.4 test');

      const asB = new URL(link);
      asB.searchParams.set('cabinet_id', cabinetB);
      for (const key of [null, keyB.key]) {
        const res = await fetchPath(key, asB.pathname + asB.search);
        expectError(res, 403, 'invalid_signature');
        expect(res.text).not.toContain('%PDF');
      }

      // B's own valid link, pointed at A's quote (B's cabinet and signature kept), is refused too.
      const bRedirect = await call(keyB.key, getDevisPdf, { params: { devis_id: B.pricedDevis } });
      expect(bRedirect.status).toBe(302);
      const bLink = new URL(bRedirect.headers.get('location') ?? '', server.url);
      const bOk = await server.request(bLink.pathname + bLink.search);
      expect(Buffer.from(await bOk.arrayBuffer()).toString()).toBe('%PDF-1.4 B');
      const pointedAtA = `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bLink.search}`;
      expectError(await fetchPath(null, pointedAtA), 403, 'invalid_signature');
      const bWithA = new URL(bLink);
      bWithA.searchParams.set('cabinet_id', cabinetA);
      expectError(await fetchPath(null, `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bWithA.search}`), 403, 'invalid_signature');
    },
  },

  [createWebhook.operationId]: {
    title: "one Idempotency-Key used by A then B gives two subscriptions (B never gets A's secret); A's events never reach B's subscriptions",
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
        await call(keyA.key, createOpportunity, { body: { title: 'A after B subscribed', product: 'auto', contact: { last_name: 'Durand' } } }),
        opportunitySchema,
      ).id;
      aExtra.push(aOpp);
      const bOpp = expectCreated(
        await call(keyB.key, createOpportunity, { body: { title: 'B after subscribing', product: 'auto', contact: { last_name: 'Bernard' } } }),
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
      expect(toA.filter((r) => r.envelope.id === aEvent?.id).map((r) => r.subscriptionId).sort()).toEqual([A.webhook, fromA.id].sort());
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
    title: "B's rotate-secret of A's subscription is 404 not_found, reveals no secret and leaves A's secret_enc; A's rotation is never replayed to B",
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
        await call(keyA.key, createOpportunity, { body: { title: 'A after B rotated', product: 'auto', contact: { last_name: 'Durand' } } }),
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
      expect(verifyWebhook(delivery?.rawBody ?? '', delivery?.headers ?? {}, [aSecrets[A.webhook] ?? ''], { now: clock.now() }).valid).toBe(true);

      // One Idempotency-Key: A's rotation (and A's new secret) is never replayed to B.
      const key = randomUUID();
      const body = { overlap_seconds: 60 };
      const mine = await call(keyA.key, rotateWebhookSecret, { params: { id: A.pausedWebhook }, body, headers: { 'Idempotency-Key': key } });
      expect(mine.status, mine.text).toBe(200);
      const rotated = rotatedSecretSchema.parse(mine.body);
      const rowAfterA = row('webhook_subscriptions', A.pausedWebhook);
      const b = await call(keyB.key, rotateWebhookSecret, { params: { id: A.pausedWebhook }, body, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(b.text).not.toContain(rotated.secret);
      expect(row('webhook_subscriptions', A.pausedWebhook)).toEqual(rowAfterA);
      const replayA = await call(keyA.key, rotateWebhookSecret, { params: { id: A.pausedWebhook }, body, headers: { 'Idempotency-Key': key } });
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');
      expect(rotatedSecretSchema.parse(replayA.body).secret).toBe(rotated.secret);
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
      expect(last).toMatchObject({ subscriptionId: B.webhook, subscriptionCabinet: cabinetB, envelope: { cabinet_id: cabinetB, data: { webhook_id: B.webhook } } });
    },
  },

  [listDeliveries.operationId]: {
    title: "B's history of A's subscription is 404 not_found whatever the filters; B's own holds B's only; A's cursors are invalid_cursor for B",
    async run() {
      const mine = await deliveriesAs(keyA.key, A.webhook, { limit: '100' });
      expect(mine.data.map((d) => d.id)).toContain(A.delivery);
      const queries: Record<string, string>[] = [{}, { limit: '1' }, { status: 'succeeded' }, { event_type: 'opportunity.created' }, { status: 'pending', limit: '100' }];
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
      expectError(await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { limit: '1', cursor } }), 400, 'invalid_cursor');
      expectError(await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { cursor } }), 400, 'invalid_cursor');
      expectError(await call(keyB.key, listDeliveries, { params: { id: A.webhook }, query: { limit: '1', cursor } }), 404, 'not_found');
      // ...and so is a cursor of A's /webhooks list, on B's history and on B's /webhooks list.
      const hooks = await listAs(keyA.key, listWebhooks, { limit: '1' });
      const hooksCursor = hooks.next_cursor ?? '';
      expect(hooksCursor).not.toBe('');
      expectError(await call(keyB.key, listDeliveries, { params: { id: B.webhook }, query: { cursor: hooksCursor } }), 400, 'invalid_cursor');
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

  [getOpenApiDocument.operationId]: {
    title: 'the OpenAPI document is the same for A, B and no key, and holds no tenant data',
    async run() {
      const texts = await Promise.all([keyA.key, keyB.key, null].map(async (key) => (await call(key, getOpenApiDocument)).text));
      expect(texts[1]).toBe(texts[0]);
      expect(texts[2]).toBe(texts[0]);
      for (const id of [cabinetA, cabinetB, ...aIds(), ...Object.values(B)]) expect(texts[0]).not.toContain(id);
    },
  },

  [getApiDocs.operationId]: {
    title: 'the docs page is the same for A, B and no key, and holds no tenant data',
    async run() {
      const results = await Promise.all([keyA.key, keyB.key, null].map((key) => call(key, getApiDocs)));
      for (const res of results) expect(res.status).toBe(200);
      expect(results[1]?.text).toBe(results[0]?.text);
      expect(results[2]?.text).toBe(results[0]?.text);
      for (const id of [cabinetA, cabinetB, ...aIds(), ...Object.values(B)]) expect(results[0]?.text).not.toContain(id);
    },
  },
};

describe('tenant isolation, for every route of the public API', () => {
  it('every operationId of the catalogue has an isolation check, and no check is for a route that does not exist', () => {
    const catalogue = PUBLIC_ENDPOINTS.map((e) => e.operationId).sort();
    expect(Object.keys(ISOLATION_CHECKS).sort()).toEqual(catalogue);
  });

  for (const [operationId, check] of Object.entries(ISOLATION_CHECKS)) {
    it(`${operationId}: ${check.title}`, check.run);
  }

  it("B's events outbox holds none of A's events, and the database holds nothing of A's under B", () => {
    const ids = aIds().filter((id) => id !== '');
    const eventsB = listEvents(server.deps, cabinetB);
    expect(eventsB.length).toBeGreaterThan(0); // B's own opportunity.created
    for (const event of eventsB) {
      expect(event.cabinet_id).toBe(cabinetB);
      const data = JSON.stringify(event.data);
      for (const id of ids) expect(data).not.toContain(id);
    }
    // A's events are where they belong (so there was something to leak).
    const eventsA = listEvents(server.deps, cabinetA);
    expect(eventsA.map((e) => e.type)).toEqual(expect.arrayContaining(['opportunity.created', 'devis.signed', 'contract.signed']));
    for (const event of eventsA) expect(event.cabinet_id).toBe(cabinetA);
    const eventIdsA = new Set(eventsA.map((e) => e.id));
    for (const event of eventsB) expect(eventIdsA.has(event.id)).toBe(false);

    // Straight from SQLite: every row of A's is still A's, and B's rows never point at A's.
    for (const [table, id] of [
      ['clients', A.personClient],
      ['clients', A.companyClient],
      ['opportunities', A.qualifiedOpportunity],
      ['opportunities', A.newOpportunity],
      ['devis', A.draftDevis],
      ['devis', A.pricedDevis],
      ['devis', A.signedDevis],
      ['contracts', A.contract],
    ] as [Table, string][]) {
      expect(row(table, id)?.cabinet_id, `${table} ${id}`).toBe(cabinetA);
    }
    const db = server.deps.db.sqlite;
    const placeholders = ids.map(() => '?').join(',');
    expect(
      count(
        `SELECT count(*) AS n FROM devis WHERE cabinet_id = ? AND (client_id IN (${placeholders}) OR opportunity_id IN (${placeholders}))`,
        cabinetB,
        ...ids,
        ...ids,
      ),
    ).toBe(0);
    expect(count('SELECT count(*) AS n FROM contracts WHERE cabinet_id = ?', cabinetB)).toBe(0);
    expect(count(`SELECT count(*) AS n FROM devis_documents WHERE cabinet_id = ? AND devis_id IN (${placeholders})`, cabinetB, ...ids)).toBe(0);
    expect(db.prepare('SELECT cabinet_id FROM devis_documents WHERE devis_id = ?').get(A.pricedDevis)).toEqual({ cabinet_id: cabinetA });
    expect(count(`SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND data LIKE '%' || ? || '%'`, cabinetB, A.pricedDevis)).toBe(0);
  });

  it("every webhook delivery stays in its event's cabinet, in SQLite and on the wire; B's endpoints never got A's events", async () => {
    await drain();
    const deliveries = count('SELECT count(*) AS n FROM webhook_deliveries');
    expect(deliveries).toBeGreaterThan(0);
    expect(count('SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE d.cabinet_id = s.cabinet_id')).toBe(deliveries);
    expect(count('SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.cabinet_id = e.cabinet_id')).toBe(deliveries);
    const aEvents = aEventIds();
    const requests = receivedRequests();
    for (const r of requests) {
      expect(r.subscriptionCabinet, r.deliveryId).toBeDefined();
      expect(r.envelope.cabinet_id).toBe(r.subscriptionCabinet);
    }
    const toB = requests.filter((r) => r.subscriptionCabinet === cabinetB);
    expect(toB.length).toBeGreaterThan(0);
    for (const r of toB) {
      expect(aEvents.has(r.envelope.id)).toBe(false);
      expect(r.rawBody).not.toContain(cabinetA);
      for (const id of aIds().filter((i) => i !== '')) expect(r.rawBody).not.toContain(id);
    }
    expect(requests.filter((r) => r.subscriptionCabinet === cabinetA).length).toBeGreaterThan(0);
  });
});
