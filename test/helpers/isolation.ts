/**
 * The world of the tenant isolation tests (test/integration/isolation/): two cabinets A and B share
 * one server and one SQLite file, each with its key (every scope), its records, quotes, webhook
 * subscriptions and deliveries, and tarification jobs, all made before the first check; and the
 * helpers the checks share to call the public API as A or B and to read what the database holds.
 *
 * A test file calls useIsolationWorld() and registers its module's checks (isolationTests). After its
 * last test the whole database and everything the receiver got are swept again
 * (expectNothingOfAUnderB, expectDeliveriesInTheirCabinets), over what that file's checks did.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueuedSchema, enqueueTarification } from '../../shared/automation.js';
import { clientSchema, opportunitySchema } from '../../shared/crm.js';
import { createClient, createOpportunity, updateOpportunity } from '../../shared/crm-endpoints.js';
import { createDevis, devisSchema, signDevis } from '../../shared/devis.js';
import { PUBLIC_API_PREFIX, type Endpoint } from '../../shared/endpoint.js';
import {
  createWebhook,
  createdWebhookSchema,
  deliverySchema,
  listDeliveries,
  testDeliverySchema,
  testWebhook,
  updateWebhook,
  type Delivery,
} from '../../shared/webhooks.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { expectError } from './api.js';
import { startReceiver, type Receiver } from './receiver.js';
import { startTestServer, testClock, type TestServer } from './server.js';
import { createTestInsurer, failWith, succeed, type TestInsurer, TEST_AUTO_LINE } from './test-insurer.js';

export const clock = testClock();
export let server: TestServer;
export let cabinetA: string;
export let cabinetB: string;
export let keyA: { key: string; key_id: string };
export let keyB: { key: string; key_id: string };
/** One real HTTPS receiver for both cabinets: A's subscriptions at its path, B's at <path>/b. */
export let receiver: Receiver;
/** The scripted insurer both cabinets have their own portal login for. */
export let insurer: TestInsurer;
/** A second scripted insurer: only A has credentials for it at first. */
export let otherInsurer: TestInsurer;
/** Low enough that the status check can exhaust A's hourly quota, high enough for every check's jobs. */
export const QUOTA_PER_HOUR = 11;
/** Each cabinet's own portal logins (and passwords), as the robot must receive them. */
export const LOGINS = {
  A: { testco: { login: 'a-broker', password: 'a-secret' }, otherco: { login: 'a-other', password: 'a-other-secret' } },
  B: { testco: { login: 'b-broker', password: 'b-secret' }, otherco: { login: 'b-other', password: 'b-other-secret' } },
} as const;

/** A's resources, created through A's key (the priced devis is priced as the pricing engine would). */
export const A = {
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
  /** A draft quote at testco/auto: A (and only A) could have it priced by a job. */
  pricingDraft: '',
  /** A tarification job that completed, and the quote it priced. */
  job: '',
  jobDevis: '',
  /** A tarification job the insurer refused (failed, not refunded). */
  failedJob: '',
};
/** B's own resources, so that B's lists are not trivially empty. */
export const B = { client: '', opportunity: '', pricedDevis: '', webhook: '', delivery: '', job: '' };
/** The secrets A was given for its subscriptions (at creation), to check what signs A's deliveries. */
export const aSecrets: Record<string, string> = {};

/** A's resources created later by the checks themselves. */
export const aExtra: string[] = [];
export const aIds = () => [...Object.values(A), ...aExtra];

// ---------------------------------------------------------------------------------------------
// HTTP helpers: URLs are built from the catalogue entries themselves.
// ---------------------------------------------------------------------------------------------

export interface Result {
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

export async function fetchPath(key: string | null, path: string, options: CallOptions = {}): Promise<Result> {
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

export function call(key: string | null, endpoint: Endpoint, options: CallOptions = {}): Promise<Result> {
  return fetchPath(key, pathOf(endpoint, options.params, options.query), { method: endpoint.method, ...options });
}

export function expectCreated<T>(res: Result, schema: { parse(v: unknown): T }): T {
  expect(res.status, res.text).toBe(201);
  return schema.parse(res.body);
}

// ---------------------------------------------------------------------------------------------
// Direct database checks
// ---------------------------------------------------------------------------------------------

type Table = 'opportunities' | 'clients' | 'devis' | 'contracts' | 'webhook_subscriptions' | 'webhook_deliveries' | 'jobs' | 'conseils';

export function row(table: Table, id: string): Record<string, unknown> | undefined {
  return server.deps.db.sqlite.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
}

export function count(sql: string, ...args: unknown[]): number {
  return (server.deps.db.sqlite.prepare(sql).get(...args) as { n: number }).n;
}

const TENANT_TABLES = [
  'opportunities',
  'opportunity_notes',
  'clients',
  'devis',
  'contracts',
  'devis_documents',
  'events',
  'idempotency_keys',
  'webhook_subscriptions',
  'webhook_deliveries',
  'jobs',
  'wallet_ledger',
  'insurer_credentials',
] as const;

export function cabinetRowCounts(cabinetId: string): Record<(typeof TENANT_TABLES)[number], number> {
  const counts = (t: string) => count(`SELECT count(*) AS n FROM ${t} WHERE cabinet_id = ?`, cabinetId);
  return Object.fromEntries(TENANT_TABLES.map((t) => [t, counts(t)])) as Record<(typeof TENANT_TABLES)[number], number>;
}

/** Every item of a page B received is B's, per the database, and none is A's. */
export function expectOnlyB(table: Table, items: { id: string }[]): void {
  for (const item of items) {
    expect(aIds()).not.toContain(item.id);
    expect(row(table, item.id)?.cabinet_id).toBe(cabinetB);
  }
}

export async function listAs(key: string, endpoint: Endpoint, query: Record<string, string> = {}) {
  const res = await call(key, endpoint, { query });
  expect(res.status, res.text).toBe(200);
  return res.body as { data: { id: string }[]; next_cursor: string | null; has_more: boolean; count: number };
}

/** A cursor of A (limit=1 over 2+ rows) is 400 invalid_cursor for B, with the same filters. */
export async function expectCursorRefusedForB(endpoint: Endpoint, filters: Record<string, string> = {}) {
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

export const drain = () => server.app.webhookDispatcher.drain();

/** No Idempotency-Key, then a fresh one: a failed request must behave the same either way. */
export const withAndWithoutIdempotencyKey = (): Record<string, string>[] => [{}, { 'Idempotency-Key': randomUUID() }];

type DeliveryPage = { data: Delivery[]; next_cursor: string | null; has_more: boolean; count: number };

export async function deliveriesAs(key: string, webhookId: string, query: Record<string, string> = {}): Promise<DeliveryPage> {
  const res = await call(key, listDeliveries, { params: { id: webhookId }, query });
  expect(res.status, res.text).toBe(200);
  const page = res.body as DeliveryPage;
  return { ...page, data: page.data.map((d) => deliverySchema.parse(d)) };
}

/** A's subscriptions, straight from SQLite (url, events, active, secret_enc, updated_at…). */
export function aWebhookRows() {
  return [A.webhook, A.pausedWebhook, ...aExtra].map((id) => row('webhook_subscriptions', id)).filter((r) => r !== undefined);
}

export function aEventIds(): Set<string> {
  return new Set(listEvents(server.deps, cabinetA).map((e) => e.id));
}

/**
 * Every request the receiver got, with the delivery, subscription and cabinet it was for per the
 * database (found by its Service-Delivery-Id), and its envelope.
 */
export function receivedRequests() {
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
export async function expectNotFoundForB(endpoint: Endpoint, param: string, ids: string[]) {
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
// Pricing helpers
// ---------------------------------------------------------------------------------------------

export const robots = () => server.app.robotWorker;

let tarifications = 0;
/**
 * A testco/auto request with a dicData of its own (a distinct postcode): the replay guard only
 * meets the bodies a check repeats on purpose.
 */
export function tarification(extra: Record<string, unknown> = {}): Record<string, unknown> {
  tarifications += 1;
  return {
    compagnie: 'testco',
    produit: 'auto',
    dicData: { postcode: String(20000 + tarifications), birth_date: '1984-03-09', formula: 'tiers' },
    ...extra,
  };
}

export async function enqueueAs(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await call(key, enqueueTarification, { body, headers });
  expect(res.status, res.text).toBe(202);
  const enqueued = enqueuedSchema.strict().parse(res.body);
  expect(res.headers.get('location')).toBe(enqueued.poll_url);
  return enqueued.job_id;
}

// ---------------------------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------------------------

async function createWorld(): Promise<void> {
  receiver = await startReceiver();
  // Both price the car line from the common risk: a comparison asks them.
  insurer = Object.assign(createTestInsurer('testco', 'Test Assurances'), { risks: TEST_AUTO_LINE });
  otherInsurer = Object.assign(createTestInsurer('otherco', 'Other Assurances'), { risks: TEST_AUTO_LINE });
  server = await startTestServer({
    clock,
    config: { webhookAllowPrivateTargets: true, tarificationQuotaPerHour: QUOTA_PER_HOUR },
    webhooks: { extraCa: [receiver.ca] },
    insurers: [insurer, otherInsurer],
  });
  cabinetA = await server.createCabinet('Cabinet A');
  cabinetB = await server.createCabinet('Cabinet B');
  keyA = server.createKey(cabinetA);
  keyB = server.createKey(cabinetB);

  const step = () => clock.advance(1000);
  A.personClient = expectCreated(
    await call(keyA.key, createClient, { body: { type: 'person', last_name: 'Durand', first_name: 'Alice' } }),
    clientSchema,
  ).id;
  step();
  A.companyClient = expectCreated(
    await call(keyA.key, createClient, { body: { type: 'company', company_name: 'Durand SARL' } }),
    clientSchema,
  ).id;
  step();
  A.qualifiedOpportunity = expectCreated(
    await call(keyA.key, createOpportunity, {
      body: { title: 'A qualified', product: 'auto', stage: 'qualified', contact: { last_name: 'Durand' }, tags: ['a-tag'] },
    }),
    opportunitySchema,
  ).id;
  step();
  A.newOpportunity = expectCreated(
    await call(keyA.key, createOpportunity, {
      body: { title: 'A new', product: 'mrh', contact: { last_name: 'Durand' }, expected_value_eur: 900 },
    }),
    opportunitySchema,
  ).id;
  step();
  A.draftDevis = expectCreated(
    await call(keyA.key, createDevis, {
      body: {
        client_id: A.personClient,
        opportunity_id: A.qualifiedOpportunity,
        compagnie: 'sandbox',
        produit: 'auto',
        dicData: { bonus: 0.5 },
      },
    }),
    devisSchema,
  ).id;
  step();
  A.pricedDevis = expectCreated(
    await call(keyA.key, createDevis, {
      body: { client_id: A.personClient, opportunity_id: A.newOpportunity, compagnie: 'sandbox', produit: 'mrh' },
    }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetA, A.pricedDevis, {
    tarifEur: 512.34,
    pdf: Buffer.from('%PDF-1.4 test'),
    documents: [{ kind: 'conditions', label: 'Conditions générales', pdf: Buffer.from('%PDF-1.4 conditions A') }],
  });
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
    await call(keyB.key, createDevis, {
      body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
    }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetB, B.pricedDevis, {
    tarifEur: 42,
    pdf: Buffer.from('%PDF-1.4 B'),
    documents: [{ kind: 'conditions', label: 'Conditions générales', pdf: Buffer.from('%PDF-1.4 conditions B') }],
  });
  step();

  // Webhooks: A subscribes to "*" (and keeps a paused subscription), then creates and moves an
  // opportunity, so that A's subscription has two deliveries; B subscribes to "*" at <path>/b and
  // tests it, so that B has a delivery of its own.
  const aHook = expectCreated(
    await call(keyA.key, createWebhook, { body: { url: receiver.url, events: ['*'], description: 'A CRM' } }),
    createdWebhookSchema,
  );
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
  const bHook = expectCreated(
    await call(keyB.key, createWebhook, { body: { url: `${receiver.url}/b`, events: ['*'], description: 'B CRM' } }),
    createdWebhookSchema,
  );
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

  // Pricing: both cabinets have credits and their own testco login; only A has otherco credentials.
  // A has a completed job and a refused one, B a completed one, all settled before the checks run.
  grantCredits(server.deps, cabinetA, 1000, 'A top-up');
  grantCredits(server.deps, cabinetB, 300, 'B top-up');
  setInsurerCredentials(server.deps, cabinetA, 'testco', LOGINS.A.testco);
  setInsurerCredentials(server.deps, cabinetA, 'otherco', LOGINS.A.otherco);
  setInsurerCredentials(server.deps, cabinetB, 'testco', LOGINS.B.testco);
  A.pricingDraft = expectCreated(
    await call(keyA.key, createDevis, { body: { client_id: A.personClient, compagnie: 'testco', produit: 'auto' } }),
    devisSchema,
  ).id;
  insurer.queue(succeed(612.4));
  A.job = await enqueueAs(keyA.key, tarification());
  await robots().idle();
  step();
  insurer.queue(failWith('business'));
  A.failedJob = await enqueueAs(keyA.key, tarification());
  await robots().idle();
  aExtra.push(String(row('jobs', A.failedJob)?.devis_id));
  step();
  insurer.queue(succeed(42));
  B.job = await enqueueAs(keyB.key, tarification());
  await robots().idle();
  await drain();
  expect(row('jobs', A.job)).toMatchObject({ cabinet_id: cabinetA, status: 'completed' });
  expect(row('jobs', A.failedJob)).toMatchObject({ cabinet_id: cabinetA, status: 'failed', error_code: 'risk_declined' });
  expect(row('jobs', B.job)).toMatchObject({ cabinet_id: cabinetB, status: 'completed' });
  A.jobDevis = String(row('jobs', A.job)?.devis_id);
  expect(insurer.runs.map((r) => r.login)).toEqual(['a-broker', 'a-broker', 'b-broker']);
  step();
}

let created = false;

/**
 * The world for the whole test file: made before its first test; after its last, swept again
 * (what the file's checks did included), then closed.
 */
export function useIsolationWorld(): void {
  beforeAll(async () => {
    await createWorld();
    created = true;
  });
  afterAll(async () => {
    try {
      if (created) {
        expectNothingOfAUnderB();
        await expectDeliveriesInTheirCabinets();
      }
    } finally {
      await server?.close();
      await receiver?.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// One check per operationId of the catalogue
// ---------------------------------------------------------------------------------------------

export interface IsolationCheck {
  title: string;
  run: () => Promise<void>;
}

/** One test per check, named `operationId: title`, in the order of the table. */
export function isolationTests(checks: Record<string, IsolationCheck>): void {
  for (const [operationId, check] of Object.entries(checks)) {
    it(`${operationId}: ${check.title}`, check.run);
  }
}

// ---------------------------------------------------------------------------------------------
// Sweeps over the whole database and everything the receiver got
// ---------------------------------------------------------------------------------------------

/** B's events outbox holds none of A's events, and the database holds nothing of A's under B. */
export function expectNothingOfAUnderB(): void {
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
  expect(count(`SELECT count(*) AS n FROM devis_documents WHERE cabinet_id = ? AND devis_id IN (${placeholders})`, cabinetB, ...ids)).toBe(
    0,
  );
  expect(db.prepare('SELECT cabinet_id FROM devis_documents WHERE devis_id = ?').get(A.pricedDevis)).toEqual({ cabinet_id: cabinetA });
  expect(count(`SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND data LIKE '%' || ? || '%'`, cabinetB, A.pricedDevis)).toBe(0);
}

/** Every webhook delivery stays in its event's cabinet, in SQLite and on the wire; B's endpoints never got A's events. */
export async function expectDeliveriesInTheirCabinets(): Promise<void> {
  await drain();
  const deliveries = count('SELECT count(*) AS n FROM webhook_deliveries');
  expect(deliveries).toBeGreaterThan(0);
  expect(
    count(
      'SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE d.cabinet_id = s.cabinet_id',
    ),
  ).toBe(deliveries);
  expect(count('SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.cabinet_id = e.cabinet_id')).toBe(
    deliveries,
  );
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
}
