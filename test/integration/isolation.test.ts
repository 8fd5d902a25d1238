/**
 * Tenant isolation, route by route. Two cabinets A and B share one server and one SQLite file; B's
 * key (with every scope) must never see, change, sign, download, page through or reference what
 * belongs to A. Another cabinet's resource is 404 not_found, never 403: its existence is not
 * revealed. Every route of the public catalogue has its entry in ISOLATION_CHECKS, and a test
 * fails when a route is added to the catalogue without one.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getMe, meResponseSchema } from '../../shared/api-keys.js';
import {
  answerMfa,
  automationStatusSchema,
  cancelJob,
  dryRunResultSchema,
  enqueuedSchema,
  enqueueTarification,
  getAutomationStatus,
  getJob,
  getJobArtifact,
  getProductSchema,
  getWallet,
  jobSchema,
  listJobs,
  listProducts,
  productListSchema,
  pollUrl,
  productSchemaDocument,
  walletSchema,
  type AutomationStatus,
  type Job,
  type Wallet,
} from '../../shared/automation.js';
import { PUBLIC_ENDPOINTS } from '../../shared/catalogue.js';
import { clientSchema, opportunitySchema } from '../../shared/crm.js';
import {
  createClient,
  createOpportunity,
  eraseClient,
  getClient,
  getOpportunity,
  listClients,
  listOpportunities,
  updateClient,
  updateOpportunity,
} from '../../shared/crm-endpoints.js';
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
  rotatedSecretReplaySchema,
  rotatedSecretSchema,
  rotateWebhookSecret,
  testDeliverySchema,
  testWebhook,
  updateWebhook,
  type Delivery,
} from '../../shared/webhooks.js';
import { recordArtifacts } from '../../server/automation/artifacts.js';
import { acknowledgeMfaPrompt } from '../../server/automation/service.js';
import { findJob } from '../../server/automation/store.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { expectError } from '../helpers/api.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, failWith, gated, succeed, withMfa, type Script, type TestInsurer } from '../helpers/test-insurer.js';

const clock = testClock();
let server: TestServer;
let cabinetA: string;
let cabinetB: string;
let keyA: { key: string; key_id: string };
let keyB: { key: string; key_id: string };
/** One real HTTPS receiver for both cabinets: A's subscriptions at its path, B's at <path>/b. */
let receiver: Receiver;
/** The scripted insurer both cabinets have their own portal login for. */
let insurer: TestInsurer;
/** A second scripted insurer: only A has credentials for it at first. */
let otherInsurer: TestInsurer;
/** Low enough that the status check can exhaust A's hourly quota, high enough for every check's jobs. */
const QUOTA_PER_HOUR = 11;
/** Each cabinet's own portal logins (and passwords), as the robot must receive them. */
const LOGINS = {
  A: { testco: { login: 'a-broker', password: 'a-secret' }, otherco: { login: 'a-other', password: 'a-other-secret' } },
  B: { testco: { login: 'b-broker', password: 'b-secret' }, otherco: { login: 'b-other', password: 'b-other-secret' } },
} as const;

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
  /** A draft quote at testco/auto: A (and only A) could have it priced by a job. */
  pricingDraft: '',
  /** A tarification job that completed, and the quote it priced. */
  job: '',
  jobDevis: '',
  /** A tarification job the insurer refused (failed, not refunded). */
  failedJob: '',
};
/** B's own resources, so that B's lists are not trivially empty. */
const B = { client: '', opportunity: '', pricedDevis: '', webhook: '', delivery: '', job: '' };
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

function expectCreated<T>(res: Result, schema: { parse(v: unknown): T }): T {
  expect(res.status, res.text).toBe(201);
  return schema.parse(res.body);
}

// ---------------------------------------------------------------------------------------------
// Direct database checks
// ---------------------------------------------------------------------------------------------

type Table = 'opportunities' | 'clients' | 'devis' | 'contracts' | 'webhook_subscriptions' | 'webhook_deliveries' | 'jobs';

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
  'jobs',
  'wallet_ledger',
  'insurer_credentials',
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
// Pricing helpers
// ---------------------------------------------------------------------------------------------

const robots = () => server.app.robotWorker;

let tarifications = 0;
/**
 * A testco/auto request with a dicData of its own (a distinct postcode): the replay guard only
 * meets the bodies a check repeats on purpose.
 */
function tarification(extra: Record<string, unknown> = {}): Record<string, unknown> {
  tarifications += 1;
  return {
    compagnie: 'testco',
    produit: 'auto',
    dicData: { postcode: String(20000 + tarifications), birth_date: '1984-03-09', formula: 'tiers' },
    ...extra,
  };
}

async function enqueueAs(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await call(key, enqueueTarification, { body, headers });
  expect(res.status, res.text).toBe(202);
  const enqueued = enqueuedSchema.strict().parse(res.body);
  expect(res.headers.get('location')).toBe(enqueued.poll_url);
  return enqueued.job_id;
}

async function jobAs(key: string, id: string): Promise<Job> {
  const res = await call(key, getJob, { params: { job_id: id } });
  expect(res.status, res.text).toBe(200);
  return jobSchema.strict().parse(res.body);
}

type JobPage = { data: Job[]; next_cursor: string | null; has_more: boolean; count: number };

async function jobsAs(key: string, query: Record<string, string> = {}): Promise<JobPage> {
  const res = await call(key, listJobs, { query });
  expect(res.status, res.text).toBe(200);
  const page = res.body as JobPage;
  return { ...page, data: page.data.map((j) => jobSchema.strict().parse(j)) };
}

async function walletAs(key: string): Promise<Wallet> {
  const res = await call(key, getWallet);
  expect(res.status, res.text).toBe(200);
  return walletSchema.strict().parse(res.body);
}

async function statusAs(key: string): Promise<AutomationStatus> {
  const res = await call(key, getAutomationStatus);
  expect(res.status, res.text).toBe(200);
  return automationStatusSchema.strict().parse(res.body);
}

async function dryRunAs(key: string, body: Record<string, unknown>) {
  const res = await call(key, enqueueTarification, { body: { ...body, dry_run: true } });
  expect(res.status, res.text).toBe(200);
  return dryRunResultSchema.strict().parse(res.body);
}

/** Waits (bounded; on SQLite, not to spend the keys' rate limit) until the worker has moved a job to a status. */
async function untilStatus(id: string, status: Job['status']): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (row('jobs', id)?.status === status) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`job ${id} never reached ${status}; it is ${String(row('jobs', id)?.status)}`);
}

/** A job's row, without the lease the worker keeps renewing while its robot runs. */
function jobState(id: string): Record<string, unknown> {
  const state = { ...row('jobs', id) };
  delete state.lease_until;
  return state;
}

function jobIdsOf(cabinetId: string): string[] {
  return (server.deps.db.sqlite.prepare('SELECT id FROM jobs WHERE cabinet_id = ?').all(cabinetId) as { id: string }[]).map((r) => r.id);
}

type LedgerRow = { id: number; cabinet_id: string; kind: string; amount: number; job_id: string | null; note: string | null };

function ledgerRows(cabinetId: string): LedgerRow[] {
  return server.deps.db.sqlite.prepare('SELECT * FROM wallet_ledger WHERE cabinet_id = ? ORDER BY id').all(cabinetId) as LedgerRow[];
}

/** Notes a job of A's, and the quote it prices, among A's ids. */
function ownA(jobId: string): string {
  const devisId = row('jobs', jobId)?.devis_id;
  expect(row('jobs', jobId)?.cabinet_id).toBe(cabinetA);
  aExtra.push(jobId, String(devisId));
  return jobId;
}

/** Every job of a page B received is B's, as is the quote it prices, per the database; none is A's. */
function expectOnlyBJobs(jobs: Job[]): void {
  const aJobs = new Set(jobIdsOf(cabinetA));
  for (const job of jobs) {
    expect(aJobs.has(job.job_id)).toBe(false);
    expect(aIds()).not.toContain(job.devis_id);
    expect(row('jobs', job.job_id)?.cabinet_id).toBe(cabinetB);
    expect(row('devis', job.devis_id)?.cabinet_id).toBe(cabinetB);
  }
}

/** A script that notes the credentials the robot was given, then prices. */
function noting(into: { login: string; password: string }[], then: Script = succeed()): Script {
  return async (ctx, input) => {
    const { login, password } = ctx.credentials();
    into.push({ login, password });
    return then(ctx, input);
  };
}

/** An error answer with the given ids blanked: B's answer for A's id must equal its answer for an id nobody has. */
function errorShape(res: Result, ...ids: string[]) {
  const body = errorBodySchema.parse(res.body);
  const blank = (text: string) => ids.reduce((t, id) => t.replaceAll(id, '<id>'), text);
  return { status: res.status, error: body.error, message: blank(body.message), details: blank(JSON.stringify(body.details ?? null)) };
}

/** Every robot run so far logged in with the portal login of the cabinet whose job it ran (runs matched to jobs by dicData). */
function expectOwnLogins(): void {
  for (const [code, adapter] of [
    ['testco', insurer],
    ['otherco', otherInsurer],
  ] as const) {
    const jobsRun = server.deps.db.sqlite
      .prepare('SELECT cabinet_id, dic_data FROM jobs WHERE compagnie = ? AND attempts > 0')
      .all(code) as {
      cabinet_id: string;
      dic_data: string;
    }[];
    const expected = jobsRun.map((j) => `${j.dic_data} ${(j.cabinet_id === cabinetA ? LOGINS.A : LOGINS.B)[code].login}`).sort();
    expect(adapter.runs.map((r) => `${JSON.stringify(r.dicData)} ${r.login}`).sort()).toEqual(expected);
  }
}

// ---------------------------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  receiver = await startReceiver();
  insurer = createTestInsurer('testco', 'Test Assurances');
  otherInsurer = createTestInsurer('otherco', 'Other Assurances');
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
    await call(keyB.key, createDevis, {
      body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
    }),
    devisSchema,
  ).id;
  recordDevisPriced(server.deps, cabinetB, B.pricedDevis, { tarifEur: 42, pdf: Buffer.from('%PDF-1.4 B') });
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
      const filters: Record<string, string>[] = [
        { type: 'person' },
        { type: 'company' },
        { created_after: '2000-01-01T00:00:00Z' },
        { type: 'company', limit: '1' },
      ];
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

  [updateClient.operationId]: {
    title: "B's PATCH of A's client is 404 not_found and changes nothing",
    async run() {
      const ids = [A.personClient, A.companyClient];
      const rowsBefore = ids.map((id) => row('clients', id));
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      clock.advance(1000); // an update would change updated_at
      for (const id of ids) {
        for (const patch of [{ last_name: 'Hijacked' }, { email: 'attacker@example.fr', phone: null }, { company_name: null }]) {
          expectError(await call(keyB.key, updateClient, { params: { client_id: id }, body: patch }), 404, 'not_found');
        }
      }
      expect(ids.map((id) => row('clients', id))).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      // The same PATCH by B of its own client does apply (the route works; only the cabinet differs).
      const mine = await call(keyB.key, updateClient, { params: { client_id: B.client }, body: { first_name: 'Brigitte' } });
      expect(mine.status, mine.text).toBe(200);
    },
  },

  [eraseClient.operationId]: {
    title: "B's DELETE of A's client is 404 not_found and erases nothing; B's erasure rewrites only B's copies",
    async run() {
      const ids = [A.personClient, A.companyClient];
      const rowsBefore = ids.map((id) => row('clients', id));
      const eventsBefore = [cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events];
      for (const id of ids) expectError(await call(keyB.key, eraseClient, { params: { client_id: id } }), 404, 'not_found');
      expect(ids.map((id) => row('clients', id))).toEqual(rowsBefore);
      expect([cabinetRowCounts(cabinetA).events, cabinetRowCounts(cabinetB).events]).toEqual(eventsBefore);
      await expectNotFoundForB(getClient, 'client_id', ids);

      // One Idempotency-Key used by A then B: B erasing its client leaves A's stored creation as it was.
      const key = randomUUID();
      const body = { type: 'person', last_name: 'Mercier', email: 'mercier@example.fr' };
      const fromA = expectCreated(await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      const fromB = expectCreated(await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } }), clientSchema);
      aExtra.push(fromA.id);
      expect((await call(keyB.key, eraseClient, { params: { client_id: fromB.id } })).status).toBe(204);
      expect(clientSchema.parse((await call(keyB.key, createClient, { body, headers: { 'Idempotency-Key': key } })).body)).toMatchObject({
        id: fromB.id,
        last_name: null,
      });
      expect(clientSchema.parse((await call(keyA.key, createClient, { body, headers: { 'Idempotency-Key': key } })).body)).toMatchObject({
        id: fromA.id,
        last_name: 'Mercier',
      });
      expect(row('clients', fromA.id)).toMatchObject({ cabinet_id: cabinetA, last_name: 'Mercier', erased_at: null });
      expect(listEvents(server.deps, cabinetA).filter((e) => e.type === 'client.erased')).toEqual([]);
    },
  },

  [createDevis.operationId]: {
    title: "B's POST /devis referencing A's client or opportunity is 400 validation_error and writes nothing",
    async run() {
      const before = cabinetRowCounts(cabinetB);
      const totalDevis = count('SELECT count(*) AS n FROM devis');
      const attempts: { body: Record<string, unknown>; path: string }[] = [
        { body: { client_id: A.personClient, compagnie: 'sandbox', produit: 'auto' }, path: 'body.client_id' },
        {
          body: { client_id: A.companyClient, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
          path: 'body.client_id',
        },
        {
          body: { client_id: B.client, opportunity_id: A.qualifiedOpportunity, compagnie: 'sandbox', produit: 'auto' },
          path: 'body.opportunity_id',
        },
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
        await call(keyB.key, createDevis, {
          body: { client_id: B.client, opportunity_id: B.opportunity, compagnie: 'sandbox', produit: 'auto' },
        }),
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
        expect(await listAs(keyB.key, listDevis, query), JSON.stringify(query)).toEqual({
          data: [],
          next_cursor: null,
          has_more: false,
          count: 0,
        });
      }
      const filters: Record<string, string>[] = [
        { status: 'priced' },
        { status: 'draft' },
        { created_after: '2000-01-01T00:00:00Z' },
        { limit: '1' },
      ];
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
      expectError(
        await fetchPath(null, `${bLink.pathname.replace(B.pricedDevis, A.pricedDevis)}${bWithA.search}`),
        403,
        'invalid_signature',
      );
    },
  },

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

  [listProducts.operationId]: {
    title: 'the catalogue is the same for A and B, and says nothing of either cabinet (nor of their credentials)',
    async run() {
      const a = await call(keyA.key, listProducts);
      const b = await call(keyB.key, listProducts);
      expect(a.status, a.text).toBe(200);
      expect(b.status, b.text).toBe(200);
      expect(b.text).toBe(a.text);
      const catalogue = productListSchema.strict().parse(b.body);
      expect(catalogue.data.map((p) => [p.code, p.insurers.map((i) => i.code)])).toEqual([
        ['auto', ['testco', 'otherco']],
        ['attestation', ['testco', 'otherco']],
      ]);
      for (const secret of [cabinetA, cabinetB, LOGINS.A.testco.login, LOGINS.A.otherco.login, LOGINS.B.testco.login])
        expect(b.text).not.toContain(secret);
    },
  },

  [getProductSchema.operationId]: {
    title: 'a product schema is the same for A and B, at an insurer only A has credentials for too; unknowns are refused alike',
    async run() {
      for (const [code, compagnie] of [
        ['auto', 'testco'],
        ['attestation', 'testco'],
        ['auto', 'otherco'],
      ] as const) {
        const a = await call(keyA.key, getProductSchema, { params: { code }, query: { compagnie } });
        const b = await call(keyB.key, getProductSchema, { params: { code }, query: { compagnie } });
        expect(a.status, a.text).toBe(200);
        expect(b.status, b.text).toBe(200);
        expect(b.text).toBe(a.text);
        expect(productSchemaDocument.strict().parse(b.body)).toMatchObject({ produit: code, compagnie });
        for (const secret of [cabinetA, cabinetB, LOGINS.A.otherco.login]) expect(b.text).not.toContain(secret);
      }
      for (const [code, compagnie, error] of [
        ['moto', 'testco', 'unknown_product'],
        ['auto', 'nobody', 'unknown_insurer'],
      ] as const) {
        const a = await call(keyA.key, getProductSchema, { params: { code }, query: { compagnie } });
        const b = await call(keyB.key, getProductSchema, { params: { code }, query: { compagnie } });
        expectError(b, 404, error);
        expect(errorShape(b)).toEqual(errorShape(a));
      }
    },
  },

  [enqueueTarification.operationId]: {
    title:
      "B's enqueue with A's webhook, quote or client is 400 validation_error and debits or creates nothing; the replay guard, Idempotency-Key and insurer credentials are per cabinet",
    async run() {
      await robots().idle();
      await drain();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const aRowsBefore = [row('devis', A.pricingDraft), row('devis', A.draftDevis), row('clients', A.personClient), ...aWebhookRows()];
      const bWalletBefore = await walletAs(keyB.key);
      const nobody = randomUUID();

      // 1. A's ids are refused exactly as ids nobody has, before anything is debited. A.pricingDraft is
      // a draft at testco/auto: were it found, the enqueue would price it.
      const references: { field: string; ids: string[] }[] = [
        { field: 'callback_webhook_id', ids: [A.webhook, A.pausedWebhook] },
        { field: 'devis_id', ids: [A.pricingDraft, A.draftDevis] },
        { field: 'client_id', ids: [A.personClient, A.companyClient] },
      ];
      for (const { field, ids } of references) {
        const unknown = await call(keyB.key, enqueueTarification, { body: tarification({ [field]: nobody }) });
        expectError(unknown, 400, 'validation_error');
        for (const id of ids) {
          for (const headers of withAndWithoutIdempotencyKey()) {
            const res = await call(keyB.key, enqueueTarification, { body: tarification({ [field]: id }), headers });
            const error = expectError(res, 400, 'validation_error');
            expect(error.details).toEqual([{ path: `body.${field}`, message: expect.stringContaining('in this cabinet') as string }]);
            expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
            expect(res.text).not.toContain(cabinetA);
          }
        }
        // Nor does a dry run tell A's ids from ids nobody has.
        const body = tarification();
        expect(await dryRunAs(keyB.key, { ...body, [field]: ids[0] })).toEqual(await dryRunAs(keyB.key, { ...body, [field]: nobody }));
      }
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // no job, ledger entry, quote, event or idempotency claim
      expect(await walletAs(keyB.key)).toEqual(bWalletBefore);
      expect([row('devis', A.pricingDraft), row('devis', A.draftDevis), row('clients', A.personClient), ...aWebhookRows()]).toEqual(
        aRowsBefore,
      );
      expect(row('devis', A.pricingDraft)).toMatchObject({ status: 'draft', job_id: null });
      expect(
        count(
          'SELECT count(*) AS n FROM jobs WHERE callback_webhook_id IN (?, ?) OR devis_id IN (?, ?)',
          A.webhook,
          A.pausedWebhook,
          A.pricingDraft,
          A.draftDevis,
        ),
      ).toBe(0);

      // The same references by their owner work (the route works; only the cabinet differs).
      const bOwn = await enqueueAs(keyB.key, tarification({ callback_webhook_id: B.webhook, client_id: B.client }));
      const aOwn = ownA(await enqueueAs(keyA.key, tarification({ devis_id: A.pricingDraft, callback_webhook_id: A.webhook })));
      await robots().idle();
      expect(row('jobs', bOwn)).toMatchObject({ cabinet_id: cabinetB, callback_webhook_id: B.webhook, status: 'completed' });
      expect(row('devis', String(row('jobs', bOwn)?.devis_id))).toMatchObject({
        cabinet_id: cabinetB,
        client_id: B.client,
        status: 'priced',
      });
      expect(row('jobs', aOwn)).toMatchObject({
        cabinet_id: cabinetA,
        devis_id: A.pricingDraft,
        callback_webhook_id: A.webhook,
        status: 'completed',
      });
      expect(row('devis', A.pricingDraft)).toMatchObject({ status: 'priced', job_id: aOwn });

      // 2. One request and one Idempotency-Key, used by A then B: two jobs, one per cabinet. The
      // replay guard then answers each cabinet with its own job.
      const body = tarification();
      const key = randomUUID();
      clock.advance(1000);
      const fromA = ownA(await enqueueAs(keyA.key, body, { 'Idempotency-Key': key }));
      const b = await call(keyB.key, enqueueTarification, { body, headers: { 'Idempotency-Key': key } });
      expect(b.status, b.text).toBe(202);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      const fromB = enqueuedSchema.strict().parse(b.body).job_id;
      expect(fromB).not.toBe(fromA);
      expect(row('jobs', fromA)?.cabinet_id).toBe(cabinetA);
      expect(row('jobs', fromB)?.cabinet_id).toBe(cabinetB);
      expect(row('jobs', fromB)?.request_hash).toBe(row('jobs', fromA)?.request_hash); // the very same request
      expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(2);
      expect(ledgerRows(cabinetB).filter((e) => e.job_id !== null && [fromA, fromB].includes(e.job_id))).toMatchObject([
        { kind: 'debit', amount: -10, job_id: fromB },
      ]);
      for (const [k, own, other] of [
        [keyA.key, fromA, fromB],
        [keyB.key, fromB, fromA],
      ] as const) {
        const replay = await call(k, enqueueTarification, { body, headers: { 'Idempotency-Key': key } });
        expect(replay.status, replay.text).toBe(200);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(enqueuedSchema.parse(replay.body).job_id).toBe(own);
        const again = await call(k, enqueueTarification, { body, headers: { 'Idempotency-Key': randomUUID() } });
        expect(expectError(again, 429, 'rpa_replay_detected').details).toEqual({ retry_after_seconds: 600, job_id: own });
        expect(again.text).not.toContain(other);
      }
      await robots().idle();

      // 3. Credentials are per cabinet: A's otherco login does not let B enqueue at otherco...
      const atOtherco = () => tarification({ compagnie: 'otherco' });
      const bBefore = [cabinetRowCounts(cabinetB), await walletAs(keyB.key)];
      for (const headers of withAndWithoutIdempotencyKey()) {
        const res = await call(keyB.key, enqueueTarification, { body: atOtherco(), headers });
        expectError(res, 409, 'insurer_credentials_missing');
        expect(res.text).not.toContain(LOGINS.A.otherco.login);
      }
      expect((await dryRunAs(keyB.key, atOtherco())).validation.credentials_configured).toBe(false);
      expect((await dryRunAs(keyA.key, atOtherco())).validation.credentials_configured).toBe(true);
      expect([cabinetRowCounts(cabinetB), await walletAs(keyB.key)]).toEqual(bBefore);
      expect(otherInsurer.runs).toHaveLength(0);
      // ...and once B has its own, B's robot gets B's login and password, and A's gets A's.
      setInsurerCredentials(server.deps, cabinetB, 'otherco', LOGINS.B.otherco);
      const seen: { login: string; password: string }[] = [];
      otherInsurer.queue(noting(seen), noting(seen));
      const bOther = await enqueueAs(keyB.key, atOtherco());
      await robots().idle();
      const aOther = ownA(await enqueueAs(keyA.key, atOtherco()));
      await robots().idle();
      expect(seen).toEqual([LOGINS.B.otherco, LOGINS.A.otherco]);
      expect(otherInsurer.runs.map((r) => r.login)).toEqual([LOGINS.B.otherco.login, LOGINS.A.otherco.login]);
      expect([row('jobs', bOther)?.status, row('jobs', aOther)?.status]).toEqual(['completed', 'completed']);
      expectOwnLogins();
      await drain();
    },
  },

  [getJob.operationId]: {
    title: "B's GET of A's job (completed or refused) is 404 not_found, never 403, and says no more than for an unknown id",
    async run() {
      expect(await jobAs(keyA.key, A.job)).toMatchObject({ status: 'completed', credits_consumed: 10, result: { tarif_eur: 612.4 } });
      expect(await jobAs(keyA.key, A.failedJob)).toMatchObject({ status: 'failed', error: { code: 'risk_declined' } });
      await expectNotFoundForB(getJob, 'job_id', [A.job, A.failedJob]);
      const nobody = randomUUID();
      const unknown = await call(keyB.key, getJob, { params: { job_id: nobody } });
      for (const id of [A.job, A.failedJob]) {
        const res = await call(keyB.key, getJob, { params: { job_id: id } });
        expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
        expect(res.text).not.toContain(A.jobDevis);
      }
      // B's own job is B's, and A cannot read it either; the quote A's job priced stays A's.
      const own = await jobAs(keyB.key, B.job);
      expect(own).toMatchObject({ job_id: B.job, status: 'completed', result: { tarif_eur: 42 } });
      expect(row('devis', own.devis_id)?.cabinet_id).toBe(cabinetB);
      expectError(await call(keyA.key, getJob, { params: { job_id: B.job } }), 404, 'not_found');
      expectError(await call(keyB.key, getDevis, { params: { devis_id: A.jobDevis } }), 404, 'not_found');
    },
  },

  [listJobs.operationId]: {
    title: "B's job lists never hold A's jobs, whatever the filters, page by page; A's cursors are invalid_cursor for B",
    async run() {
      const aJobs = jobIdsOf(cabinetA);
      expect(aJobs.length).toBeGreaterThanOrEqual(5);
      const all = await jobsAs(keyB.key, { limit: '100' });
      expect(all.data.map((j) => j.job_id)).toContain(B.job);
      expect(all.data.map((j) => j.job_id).sort()).toEqual(jobIdsOf(cabinetB).sort());
      expectOnlyBJobs(all.data);
      const filters: Record<string, string>[] = [
        { status: 'completed' },
        { status: 'failed' },
        { status: 'pending' },
        { status: 'cancelled' },
        { limit: '1' },
        { status: 'completed', limit: '1' },
        { created_after: '2000-01-01T00:00:00Z' },
      ];
      for (const query of filters) expectOnlyBJobs((await jobsAs(keyB.key, query)).data);
      // Only A has a refused job: B's failed filter is empty, not A's.
      expect(await jobsAs(keyB.key, { status: 'failed' })).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      // Walking B's pages one by one never reaches A's jobs.
      let cursor: string | null = null;
      let seen = 0;
      do {
        const page: JobPage = await jobsAs(keyB.key, cursor === null ? { limit: '1' } : { limit: '1', cursor });
        expectOnlyBJobs(page.data);
        seen += page.count;
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toBe(all.count);
      // A's list holds A's jobs (so there was something to leak), and not B's.
      const mine = await jobsAs(keyA.key, { limit: '100' });
      expect(mine.data.map((j) => j.job_id).sort()).toEqual([...aJobs].sort());
      // A's cursors work for A and are refused for B, with the same filters or none.
      for (const query of [{}, { status: 'completed' }] as Record<string, string>[]) {
        const first = await jobsAs(keyA.key, { ...query, limit: '1' });
        expect(first.has_more).toBe(true);
        const aCursor = first.next_cursor ?? '';
        const second = await jobsAs(keyA.key, { ...query, limit: '1', cursor: aCursor });
        expect(second.count).toBe(1);
        expect(second.data[0]?.job_id).not.toBe(first.data[0]?.job_id);
        expectError(await call(keyB.key, listJobs, { query: { ...query, limit: '1', cursor: aCursor } }), 400, 'invalid_cursor');
        expectError(await call(keyB.key, listJobs, { query: { cursor: aCursor } }), 400, 'invalid_cursor');
      }
      // ...and so is a cursor of another of A's lists.
      const clientsCursor = (await listAs(keyA.key, listClients, { limit: '1' })).next_cursor ?? '';
      expect(clientsCursor).not.toBe('');
      expectError(await call(keyB.key, listJobs, { query: { cursor: clientsCursor } }), 400, 'invalid_cursor');
    },
  },

  [cancelJob.operationId]: {
    title:
      "B's cancel of A's job (running, pending or finished) is 404 not_found: nothing is aborted, cancelled or refunded, and A's cancel is never replayed to B",
    async run() {
      await robots().idle();
      const gate = gated();
      insurer.queue(gate.script);
      const running = await enqueueAs(keyA.key, tarification());
      await gate.entered;
      const robot = insurer.runs.at(-1);
      expect(robot?.login).toBe(LOGINS.A.testco.login);
      // A's login is busy, so A's next job waits.
      const pending = await enqueueAs(keyA.key, tarification());
      robots().tick();
      ownA(running);
      ownA(pending);
      expect([row('jobs', running)?.status, row('jobs', pending)?.status]).toEqual(['running', 'pending']);
      await drain();

      const ids = [running, pending, A.job, A.failedJob];
      const statesBefore = ids.map(jobState);
      const ledgerBefore = ledgerRows(cabinetA);
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const nobody = randomUUID();
      const unknown = await call(keyB.key, cancelJob, { params: { job_id: nobody } });
      expectError(unknown, 404, 'not_found');
      clock.advance(1000); // a cancel would change updated_at
      for (const id of ids) {
        for (const headers of withAndWithoutIdempotencyKey()) {
          const res = await call(keyB.key, cancelJob, { params: { job_id: id }, headers });
          // 404, not 409 job_not_cancellable for A's finished jobs: their state is not revealed either.
          expectError(res, 404, 'not_found');
          expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
        }
      }
      expect(robot?.signal.aborted).toBe(false);
      expect(ids.map(jobState)).toEqual(statesBefore);
      expect(ledgerRows(cabinetA)).toEqual(ledgerBefore); // no refund
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);

      // A's busy login does not hold up B's jobs: B's runs meanwhile, on B's own login.
      const bJob = await enqueueAs(keyB.key, tarification());
      await untilStatus(bJob, 'completed');
      expect([row('jobs', running)?.status, row('jobs', pending)?.status]).toEqual(['running', 'pending']);

      // One Idempotency-Key: A's cancel of its pending job is A's, and B's call with it is still a 404.
      const key = randomUUID();
      const mine = await call(keyA.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expect(mine.status, mine.text).toBe(200);
      expect(jobSchema.strict().parse(mine.body)).toMatchObject({ job_id: pending, status: 'cancelled', credits_consumed: 0 });
      const b = await call(keyB.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      const replayA = await call(keyA.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');
      expect(
        ledgerRows(cabinetA)
          .filter((e) => e.job_id === pending)
          .map((e) => e.kind),
      ).toEqual(['debit', 'refund']);
      expect(count('SELECT count(*) AS n FROM wallet_ledger WHERE cabinet_id = ? AND job_id IN (?, ?)', cabinetB, running, pending)).toBe(
        0,
      );

      // A's running robot was never aborted by B: it finishes, and A pays for it.
      gate.open();
      await robots().idle();
      expect(robot?.signal.aborted).toBe(false);
      expect(await jobAs(keyA.key, running)).toMatchObject({ status: 'completed', credits_consumed: 10, result: { tarif_eur: 100 } });
      await drain();
    },
  },

  [answerMfa.operationId]: {
    title:
      "B's code for A's job waiting for MFA is 404 not_found and never reaches A's robot, nor can B cancel it; the job stays waiting and A's own code completes it",
    async run() {
      await robots().idle();
      insurer.queue(withMfa('Code sent by SMS to A'), withMfa('Code sent by SMS to B'));
      const aJob = ownA(await enqueueAs(keyA.key, tarification()));
      await untilStatus(aJob, 'mfa_required');
      const bJob = await enqueueAs(keyB.key, tarification());
      await untilStatus(bJob, 'mfa_required');
      const runsBefore = insurer.runs.length;
      expect(insurer.runs.slice(-2).map((r) => r.login)).toEqual([LOGINS.A.testco.login, LOGINS.B.testco.login]);
      await drain();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const ledgerBefore = [ledgerRows(cabinetA), ledgerRows(cabinetB)];
      const nobody = randomUUID();
      const unknown = await call(keyB.key, answerMfa, { params: { job_id: nobody }, body: { code: '999' } });
      expectError(unknown, 404, 'not_found');
      // A's finished jobs: 404, not 409 job_not_awaiting_mfa (their state is not revealed).
      for (const id of [A.job, A.failedJob]) {
        const res = await call(keyB.key, answerMfa, { params: { job_id: id }, body: { code: '999' } });
        expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
      }

      // In both waiting states: mfa_required, then awaiting_mfa once A's broker opened the prompt.
      for (const state of ['mfa_required', 'awaiting_mfa'] as const) {
        if (state === 'awaiting_mfa') expect(acknowledgeMfaPrompt(server.deps, cabinetA, aJob).status).toBe('awaiting_mfa');
        const stateBefore = jobState(aJob);
        clock.advance(1000); // a resume or cancel would change updated_at
        for (const code of ['999', '0']) {
          for (const headers of withAndWithoutIdempotencyKey()) {
            const res = await call(keyB.key, answerMfa, { params: { job_id: aJob }, body: { code }, headers });
            // 404, not 200 nor 409 job_not_awaiting_mfa.
            expectError(res, 404, 'not_found');
            expect(errorShape(res, aJob)).toEqual(errorShape(unknown, nobody));
            expect(res.text).not.toContain('SMS to A');
          }
        }
        expectError(await call(keyB.key, cancelJob, { params: { job_id: aJob } }), 404, 'not_found');
        expectError(await call(keyB.key, getJob, { params: { job_id: aJob } }), 404, 'not_found');
        expect(jobState(aJob)).toEqual(stateBefore);
        expect(await jobAs(keyA.key, aJob)).toMatchObject({ status: state, mfa: { challenge: 'Code sent by SMS to A' } });
      }
      expect(insurer.runs).toHaveLength(runsBefore);
      expect([ledgerRows(cabinetA), ledgerRows(cabinetB)]).toEqual(ledgerBefore);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // (acknowledging records no event)
      expect(count(`SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND data LIKE '%' || ? || '%'`, cabinetB, aJob)).toBe(0);

      // Each cabinet answers its own job only: A's code for B's job is 404, B's code reaches B's robot
      // alone (A's job keeps waiting), and A's own code then reaches A's.
      expectError(await call(keyA.key, answerMfa, { params: { job_id: bJob }, body: { code: '111' } }), 404, 'not_found');
      const bAnswer = await call(keyB.key, answerMfa, { params: { job_id: bJob }, body: { code: '654' } });
      expect(bAnswer.status, bAnswer.text).toBe(200);
      await untilStatus(bJob, 'completed');
      expect(row('jobs', aJob)?.status).toBe('awaiting_mfa');
      const key = randomUUID();
      const aAnswer = await call(keyA.key, answerMfa, {
        params: { job_id: aJob },
        body: { code: '321' },
        headers: { 'Idempotency-Key': key },
      });
      expect(aAnswer.status, aAnswer.text).toBe(200);
      // A's answer is never replayed to B.
      const b = await call(keyB.key, answerMfa, { params: { job_id: aJob }, body: { code: '321' }, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      await robots().idle();
      expect(await jobAs(keyA.key, aJob)).toMatchObject({
        status: 'completed',
        result: { tarif_eur: 321 },
        mfa: null,
        credits_consumed: 10,
      });
      expect(await jobAs(keyB.key, bJob)).toMatchObject({ status: 'completed', result: { tarif_eur: 654 }, mfa: null });
      expect(
        listEvents(server.deps, cabinetB)
          .filter((e) => e.type === 'job.mfa_required')
          .map((e) => e.data.job_id),
      ).toEqual([bJob]);
      expect(
        listEvents(server.deps, cabinetA)
          .filter((e) => e.type === 'job.mfa_required')
          .map((e) => e.data.job_id),
      ).toEqual([aJob]);
      await drain();
    },
  },

  [getJobArtifact.operationId]: {
    title: "B's GET of the screenshot or trace of A's failed job is 404 not_found, like an unknown job's, and serves none of A's bytes",
    async run() {
      // What a failed robot run leaves beside A's job (written here, as the robot runtime would).
      const files = { 'screenshot.png': Buffer.from('\x89PNG A-only screenshot'), 'trace.zip': Buffer.from('PK A-only trace') };
      const dir = join(server.dataDir, 'artifacts', 'jobs', A.failedJob);
      mkdirSync(dir, { recursive: true });
      for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
      const failedRow = findJob(server.deps.db.orm, cabinetA, A.failedJob);
      if (!failedRow) throw new Error('A.failedJob is missing');
      recordArtifacts(server.deps, failedRow, { screenshot: true, trace: true });
      const links = (await jobAs(keyA.key, A.failedJob)).artifacts;
      expect(links).toEqual({
        screenshot_url: `${pollUrl(A.failedJob)}/artifacts/screenshot.png`,
        trace_url: `${pollUrl(A.failedJob)}/artifacts/trace.zip`,
      });

      const nobody = randomUUID();
      for (const [name, bytes] of Object.entries(files)) {
        // A gets its file (so there is something to leak)...
        const mine = await server.request(`${pollUrl(A.failedJob)}/artifacts/${name}`, { headers: { 'X-API-Key': keyA.key } });
        expect(mine.status).toBe(200);
        expect(Buffer.from(await mine.arrayBuffer())).toEqual(bytes);
        // ...B gets the 404 of a job that does not exist, for GET and HEAD, with none of A's bytes.
        const unknown = await call(keyB.key, getJobArtifact, { params: { job_id: nobody, name } });
        expectError(unknown, 404, 'not_found');
        const res = await call(keyB.key, getJobArtifact, { params: { job_id: A.failedJob, name } });
        expectError(res, 404, 'not_found');
        expect(errorShape(res, A.failedJob)).toEqual(errorShape(unknown, nobody));
        expect(res.headers.get('content-disposition')).toBeNull();
        expect(res.text).not.toContain('A-only');
        expect((await call(keyB.key, getJobArtifact, { params: { job_id: A.failedJob, name }, method: 'HEAD' })).status).toBe(404);
      }
      // B's own job (which has no artifacts) is a 404 of its own; A cannot reach B's job either.
      expectError(await call(keyB.key, getJobArtifact, { params: { job_id: B.job, name: 'screenshot.png' } }), 404, 'not_found');
      expectError(await call(keyA.key, getJobArtifact, { params: { job_id: B.job, name: 'screenshot.png' } }), 404, 'not_found');
    },
  },

  [getWallet.operationId]: {
    title: "each cabinet's wallet shows its own balance and ledger only: none of the other's grants, debits, refunds or job ids",
    async run() {
      await robots().idle();
      for (const [key, cabinet, other] of [
        [keyB.key, cabinetB, cabinetA],
        [keyA.key, cabinetA, cabinetB],
      ] as const) {
        const res = await call(key, getWallet);
        expect(res.status, res.text).toBe(200);
        const wallet = walletSchema.strict().parse(res.body);
        const rows = ledgerRows(cabinet);
        expect(rows.length).toBeLessThan(50);
        expect(wallet.balance).toBe(rows.reduce((total, e) => total + e.amount, 0));
        expect(wallet.ledger.map((e) => [e.id, e.kind, e.amount, e.job_id, e.note])).toEqual(
          rows.map((e) => [e.id, e.kind, e.amount, e.job_id, e.note]).reverse(),
        );
        // Every job of the cabinet was debited, on its own ledger; no job of the other's is there.
        expect(new Set(wallet.ledger.filter((e) => e.kind === 'debit').map((e) => e.job_id))).toEqual(new Set(jobIdsOf(cabinet)));
        for (const entry of wallet.ledger) {
          if (entry.job_id !== null) expect(row('jobs', entry.job_id)?.cabinet_id).toBe(cabinet);
        }
        for (const id of [other, ...jobIdsOf(other)]) expect(res.text).not.toContain(id);
      }
      expect(count('SELECT count(*) AS n FROM wallet_ledger l JOIN jobs j ON j.id = l.job_id WHERE l.cabinet_id <> j.cabinet_id')).toBe(0);
      // A grant to A moves A's balance only.
      const a = await walletAs(keyA.key);
      const b = await walletAs(keyB.key);
      expect(a.balance).not.toBe(b.balance);
      grantCredits(server.deps, cabinetA, 7, 'A-only top-up');
      expect((await walletAs(keyA.key)).balance).toBe(a.balance + 7);
      const after = await call(keyB.key, getWallet);
      expect(walletSchema.parse(after.body)).toEqual(b);
      expect(after.text).not.toContain('A-only top-up');
      expect(after.text).not.toContain('A top-up');
    },
  },

  [getAutomationStatus.operationId]: {
    title:
      "each cabinet's quota counts its own jobs: A using up its hourly quota leaves B's untouched; the install-wide state is the same for both",
    async run() {
      await robots().idle();
      const quotaOf = (cabinetId: string) => {
        const { n, oldest } = server.deps.db.sqlite
          .prepare('SELECT count(*) AS n, min(created_at) AS oldest FROM jobs WHERE cabinet_id = ? AND created_at > ?')
          .get(cabinetId, clock.now() - 3600_000) as { n: number; oldest: number | null };
        return {
          limit: QUOTA_PER_HOUR,
          remaining: Math.max(0, QUOTA_PER_HOUR - n),
          reset_at: oldest === null ? null : new Date(oldest + 3600_000).toISOString(),
        };
      };
      const a = await statusAs(keyA.key);
      const b = await statusAs(keyB.key);
      expect(a.quota).toEqual(quotaOf(cabinetA));
      expect(b.quota).toEqual(quotaOf(cabinetB));
      expect(a.quota.remaining).toBeGreaterThan(0);
      expect(b.quota.remaining).toBeGreaterThan(a.quota.remaining); // so that a shared count would show
      // Kill switch, breakers and workers are the install's: the same for both.
      expect({ ...b, quota: null }).toEqual({ ...a, quota: null });

      // A uses up its quota...
      for (let i = a.quota.remaining; i > 0; i--) ownA(await enqueueAs(keyA.key, tarification()));
      const over = await call(keyA.key, enqueueTarification, { body: tarification() });
      expect(expectError(over, 429, 'rpa_quota_exceeded').details).toEqual({ reset_at: quotaOf(cabinetA).reset_at, limit: QUOTA_PER_HOUR });
      expect((await statusAs(keyA.key)).quota).toEqual({ ...quotaOf(cabinetA), remaining: 0 });
      expect((await dryRunAs(keyA.key, tarification())).validation.quota).toEqual({ remaining: 0, limit: QUOTA_PER_HOUR });
      // ...and B's is untouched: its status, its dry run, and B's enqueue still passes.
      expect((await statusAs(keyB.key)).quota).toEqual(b.quota);
      expect((await dryRunAs(keyB.key, tarification())).validation.quota).toEqual({ remaining: b.quota.remaining, limit: QUOTA_PER_HOUR });
      await enqueueAs(keyB.key, tarification());
      expect((await statusAs(keyB.key)).quota).toEqual({ ...b.quota, remaining: b.quota.remaining - 1 });
      expect((await statusAs(keyA.key)).quota.remaining).toBe(0);
      await robots().idle();
      await drain();
      expectOwnLogins();
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
    expect(
      count(`SELECT count(*) AS n FROM devis_documents WHERE cabinet_id = ? AND devis_id IN (${placeholders})`, cabinetB, ...ids),
    ).toBe(0);
    expect(db.prepare('SELECT cabinet_id FROM devis_documents WHERE devis_id = ?').get(A.pricedDevis)).toEqual({ cabinet_id: cabinetA });
    expect(count(`SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND data LIKE '%' || ? || '%'`, cabinetB, A.pricedDevis)).toBe(0);
  });

  it("every webhook delivery stays in its event's cabinet, in SQLite and on the wire; B's endpoints never got A's events", async () => {
    await drain();
    const deliveries = count('SELECT count(*) AS n FROM webhook_deliveries');
    expect(deliveries).toBeGreaterThan(0);
    expect(
      count(
        'SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE d.cabinet_id = s.cabinet_id',
      ),
    ).toBe(deliveries);
    expect(
      count('SELECT count(*) AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.cabinet_id = e.cabinet_id'),
    ).toBe(deliveries);
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
