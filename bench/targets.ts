/**
 * The servers a benchmark can measure, each started inside bench/server-child.ts. Imported by the
 * child only, so that the parent (the load generator) never loads Fastify or the app.
 */
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { CLI_ACTOR } from '../server/audit/service.js';
import type { MachineNetwork } from '../server/lan/plan.js';
import { changeLan } from '../server/lan/service.js';
import type { AddressInfo } from 'node:net';
import { devNull } from 'node:os';
import { SCOPE_NAMES } from '../shared/scopes.js';
import { createApiKey } from '../server/api-keys/service.js';
import { buildApp } from '../server/app.js';
import { loadConfig } from '../server/config.js';
import { databaseFile, openDatabase } from '../server/platform/db/open.js';
import { defaultDeps } from '../server/deps.js';
import { createLogger, logDestination } from '../server/platform/logging.js';
import { initCabinet } from '../server/tenancy/service.js';
import { OPPORTUNITY_STAGES } from '../shared/crm.js';
import { createOpportunity } from '../server/crm/service.js';
import { createWebhook } from '../server/webhooks/service.js';
import { createAccessTokenForUser } from '../server/oauth/token.js';
import { MCP_SCOPES } from '../shared/oauth.js';
import type { Deps } from '../server/deps.js';
import { buildHubApp } from '../server/hub/app.js';
import { openHubDatabase } from '../server/hub/database.js';
import { hubDeps } from '../server/hub/deps.js';
import { createInvite } from '../server/hub/pairing.js';
import { packageVersion } from '../server/paths.js';
import { syncedRecords } from '../server/sync/records.js';
import { sandboxPortalsPlugin } from '../server/sandbox-portals/index.js';
import { connectCabinet } from '../server/sync/service.js';
import { uploadQueue } from '../server/sync/transfer.js';
import { serviceWebhooks } from '../server/webhooks/dispatcher-thread.js';
import { createBareSender } from './lib/bare-sender.js';
import {
  BARE_OPPORTUNITIES_PATH,
  BARE_PATH,
  BARE_SEND_PATH,
  HUB_DATABASE_URL_ENV,
  LAN_BENCH_ADDRESS,
  LAN_CERT_FILE_ENV,
  LAN_KEY_FILE_ENV,
  LAN_PORT_ENV,
  SYNC_HUB_URL_ENV,
  SEEDED_OPPORTUNITIES,
  WEBHOOK_BACKLOG_EVENTS,
  WEBHOOK_RECEIVER_CA_ENV,
  WEBHOOK_RECEIVER_URL_ENV,
  WEBHOOK_SUBSCRIPTIONS,
  type BareSendRequest,
  type TargetName,
} from './lib/protocol.js';

export interface StartedTarget {
  port: number;
  headers: Record<string, string>;
  close(): Promise<void>;
}

/**
 * High enough that the limiter never refuses: /me runs fast enough here to reach configSchema's
 * maximum (1,000,000 a minute) within a minute of a long run. Set after loadConfig, which would
 * refuse it; the limiter does the same work whatever the limit. A 429 would fail the run anyway,
 * since every response must be a 200.
 */
const RATE_LIMIT_PER_MINUTE = 100_000_000;

function portOf(address: AddressInfo | string | null): number {
  if (typeof address === 'object' && address !== null) return address.port;
  throw new Error(`server is not listening on a TCP port (${String(address)})`);
}

/** A Fastify app listening on a free loopback port, as a target; `release` runs once it is closed. */
async function listenOnLoopback(app: FastifyInstance, release: () => void | Promise<void> = () => undefined): Promise<StartedTarget> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    port: portOf(app.server.address()),
    headers: {},
    async close() {
      await app.close();
      await release();
    },
  };
}

/** The baseline: what Fastify alone costs for a small JSON answer, no hooks, no logger. */
async function startBare(): Promise<StartedTarget> {
  const app = Fastify({ logger: false });
  app.get(BARE_PATH, async () => ({ hello: 'world', service: 'bare' }));
  return listenOnLoopback(app);
}

/**
 * The list and create baselines: what this stack costs for the opportunities' essential work with
 * nothing else. Bare Fastify on the same database file as a courtier-100k child (same pragmas as
 * the app), one prepared statement per query, rows sent as JSON by Fastify; the create inserts the
 * same row and its event row in one transaction. No authentication, validation, idempotency,
 * logging or mapping.
 */
async function startBareSqlite(dataDir: string): Promise<StartedTarget> {
  const sqlite = new Database(databaseFile(dataDir));
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const cabinet = sqlite.prepare<[], { id: string }>('SELECT id FROM cabinets LIMIT 1').get();
  if (!cabinet) throw new Error(`bare-sqlite needs a seeded data dir: no cabinet in ${dataDir}`);
  const firstPage = sqlite.prepare('SELECT * FROM opportunities WHERE cabinet_id = ? ORDER BY created_at DESC, id DESC LIMIT ?');
  const pageBefore = sqlite.prepare(
    'SELECT * FROM opportunities WHERE cabinet_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?',
  );
  const insertOpportunity = sqlite.prepare(
    `INSERT INTO opportunities (id, cabinet_id, title, product, stage, expected_value_cents, source, contact, tags, created_via, created_at, updated_at)
     VALUES (@id, @cabinet_id, @title, @product, @stage, @expected_value_cents, @source, @contact, @tags, @created_via, @created_at, @updated_at)`,
  );
  const insertEvent = sqlite.prepare('INSERT INTO events (id, cabinet_id, type, version, created_at, data) VALUES (?, ?, ?, ?, ?, ?)');
  const create = sqlite.transaction((row: Record<string, string | number>) => {
    insertOpportunity.run(row);
    insertEvent.run(
      randomUUID(),
      cabinet.id,
      'opportunity.created',
      'v1',
      row.created_at,
      JSON.stringify({ opportunity_id: row.id, title: row.title, stage: row.stage }),
    );
  });

  const app = Fastify({ logger: false });
  app.get<{ Querystring: { limit?: string; before_created_at?: string; before_id?: string } }>(BARE_OPPORTUNITIES_PATH, async (request) => {
    const limit = Number(request.query.limit ?? 50) + 1;
    const { before_created_at: createdAt, before_id: id } = request.query;
    return createdAt && id ? pageBefore.all(cabinet.id, Number(createdAt), id, limit) : firstPage.all(cabinet.id, limit);
  });
  app.post<{ Body: { title: string; product: string; contact: unknown; expected_value_eur: number; tags: string[] } }>(
    BARE_OPPORTUNITIES_PATH,
    async (request, reply) => {
      const now = Date.now();
      const body = request.body;
      const row = {
        id: randomUUID(),
        cabinet_id: cabinet.id,
        title: body.title,
        product: body.product,
        stage: 'new',
        expected_value_cents: Math.round(body.expected_value_eur * 100),
        source: 'api',
        contact: JSON.stringify(body.contact),
        tags: JSON.stringify(body.tags),
        created_via: 'api',
        created_at: now,
        updated_at: now,
      };
      create(row);
      return reply.code(201).send(row);
    },
  );
  return listenOnLoopback(app, () => void sqlite.close());
}

/**
 * The real app as `courtier serve` builds it (same plugins, logger at info with redaction), on a
 * real SQLite file, with one cabinet and one prod key holding every scope. Only the log
 * destination differs: the null device instead of stdout, written asynchronously as serve writes
 * stdout, without a terminal or a pipe reader in the measurement.
 */
interface CourtierSetup {
  /** Configuration on top of the defaults. */
  config?: { webhookAllowPrivateTargets?: boolean };
  /** Extra CA certificates for the webhook sender. */
  extraCa?: readonly string[];
  /** Runs once the cabinet exists, before listening (seeding, subscriptions); may add request headers. */
  seed?: (deps: Deps, cabinetId: string, userId: string) => void | Record<string, string>;
  /** Runs after seed, before listening (the sync engine starts with the app, once it listens). */
  prepare?: (deps: Deps, cabinetId: string) => Promise<void>;
  /** What the app sees of the machine's network (the LAN listener's addresses). */
  network?: MachineNetwork;
  /** Runs once listening, before the child says it is ready. */
  afterListen?: (app: FastifyInstance) => Promise<void>;
}

async function startCourtierWith(dataDir: string, setup: CourtierSetup): Promise<StartedTarget> {
  const config = {
    ...loadConfig({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'info' }, {}),
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    ...setup.config,
  };
  const db = openDatabase(databaseFile(dataDir), { backgroundCheckpoints: {} });
  // env {} as for loadConfig: the run does not depend on the shell's COURTIER_* variables (a master key, say).
  const deps = defaultDeps(db, config, { env: {} });
  const logger = createLogger({ level: config.logLevel, stream: logDestination(devNull) });
  // As `courtier serve`: webhooks from the dispatcher's thread (bench runs from dist/).
  const app = await buildApp(deps, { logger, network: setup.network, webhooks: serviceWebhooks(setup.extraCa) });
  const { cabinet_id, user_id } = await initCabinet(deps, {
    cabinet: 'Cabinet Bench',
    email: 'bench@example.fr',
    password: 'correct horse battery staple',
  });
  const key = createApiKey(deps, cabinet_id, { name: 'bench', environment: 'prod', scopes: [...SCOPE_NAMES] });
  const extraHeaders = setup.seed?.(deps, cabinet_id, user_id) ?? {};
  await setup.prepare?.(deps, cabinet_id);
  await app.listen({ host: config.host, port: config.port });
  await setup.afterListen?.(app);
  return {
    port: portOf(app.server.address()),
    headers: { 'x-api-key': key.key, ...extraHeaders },
    async close() {
      await app.close();
      db.close();
    },
  };
}

async function startCourtier(dataDir: string): Promise<StartedTarget> {
  return startCourtierWith(dataDir, {});
}

const STAGES = OPPORTUNITY_STAGES;
const PRODUCTS = ['auto', 'mrh', 'sante', 'prevoyance', 'rc-pro'] as const;

/**
 * Writes `count` opportunities through the service (row and opportunity.created event, as the API
 * writes them) inside one transaction: a realistic table, its indexes and the outbox, in seconds.
 * The clock moves 1 s per row up to now, so created_at is spread as real traffic would spread it.
 */
function seedOpportunities(deps: Deps, cabinetId: string, count: number): void {
  const base = deps.clock.now() - count * 1000;
  let i = 0;
  const seedDeps: Deps = { ...deps, clock: { now: () => base + i * 1000 } };
  deps.db.sqlite.transaction(() => {
    for (i = 0; i < count; i++) {
      createOpportunity(
        seedDeps,
        cabinetId,
        {
          title: `Opportunité ${i}`,
          product: PRODUCTS[i % PRODUCTS.length] ?? 'auto',
          stage: STAGES[i % STAGES.length] ?? 'new',
          expected_value_eur: (i % 5000) + 0.5,
          contact: { last_name: `Client ${i}`, email: `client${i}@example.fr` },
          tags: i % 3 === 0 ? ['bench'] : [],
        },
        'api',
      );
    }
  })();
}

/** The real app with SEEDED_OPPORTUNITIES opportunities in its cabinet. */
async function startCourtier100k(dataDir: string): Promise<StartedTarget> {
  return startCourtierWith(dataDir, { seed: (deps, cabinetId) => seedOpportunities(deps, cabinetId, SEEDED_OPPORTUNITIES) });
}

/** Where the parent's HTTPS receiver listens, and its CA (PEM), from the environment. */
function webhookReceiver(target: TargetName): { url: string; ca: string } {
  const url = process.env[WEBHOOK_RECEIVER_URL_ENV];
  const ca = process.env[WEBHOOK_RECEIVER_CA_ENV];
  if (!url || !ca) throw new Error(`${target} needs ${WEBHOOK_RECEIVER_URL_ENV} and ${WEBHOOK_RECEIVER_CA_ENV}`);
  return { url, ca };
}

/**
 * The real app with WEBHOOK_SUBSCRIPTIONS subscriptions to every event, all pointing at the
 * parent's HTTPS receiver (private targets allowed), and a backlog of WEBHOOK_BACKLOG_EVENTS
 * opportunity.created events recorded after them and before listening: the dispatcher, which
 * starts when the app listens, finds every delivery due at once.
 */
async function startCourtierWebhooks(dataDir: string): Promise<StartedTarget> {
  const { url, ca } = webhookReceiver('courtier-webhooks');
  return startCourtierWith(dataDir, {
    config: { webhookAllowPrivateTargets: true },
    extraCa: [ca],
    seed(deps, cabinetId) {
      for (let i = 0; i < WEBHOOK_SUBSCRIPTIONS; i++) {
        createWebhook(deps, cabinetId, { url: `${url}/${i}`, events: ['*'], description: `bench ${i}` });
      }
      seedOpportunities(deps, cabinetId, WEBHOOK_BACKLOG_EVENTS);
    },
  });
}

/**
 * The webhook baseline (bench/lib/bare-sender.ts): signed bodies POSTed with node:https to the
 * same receiver paths as courtier-webhooks, under the service's default limits and timeout (read
 * from loadConfig, so that they follow the service's). POST BARE_SEND_PATH {count} sends and
 * answers once every body has been answered.
 */
async function startBareWebhooks(dataDir: string): Promise<StartedTarget> {
  const { url, ca } = webhookReceiver('bare-webhooks');
  const config = loadConfig({ dataDir }, {});
  const limits = {
    concurrency: config.webhookConcurrency,
    perEndpoint: config.webhookConcurrencyPerEndpoint,
    timeoutMs: config.webhookTimeoutMs,
  };
  const sender = createBareSender({ receiverUrl: url, ca, subscriptions: WEBHOOK_SUBSCRIPTIONS, limits });
  const app = Fastify({ logger: false });
  app.post<{ Body: BareSendRequest }>(BARE_SEND_PATH, async (request) => {
    const { count } = request.body;
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`count must be a positive integer, not ${String(count)}`);
    return sender.send(count);
  });
  return listenOnLoopback(app, () => sender.close());
}

/**
 * The real app with an MCP access token for the bench cabinet's user, sent as Authorization:
 * Bearer. /me still authenticates with X-API-Key, which it reads first, so both routes are
 * measured on one server.
 */
async function startCourtierMcp(dataDir: string): Promise<StartedTarget> {
  return startCourtierWith(dataDir, {
    seed(deps, cabinetId, userId) {
      const tokens = createAccessTokenForUser(deps, { cabinetId, userId, clientName: 'bench', scopes: MCP_SCOPES });
      return { authorization: `Bearer ${tokens.access_token}` };
    },
  });
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`this target needs ${name}`);
  return value;
}

/**
 * A hub as `courtier hub serve` runs it (migrations, then the app with its LISTEN connection and a
 * pool of 10), on the database named by the environment; request lines go to the null device.
 */
async function startHub(): Promise<StartedTarget> {
  const database = await openHubDatabase(requiredEnv(HUB_DATABASE_URL_ENV));
  const deps = hubDeps(database, packageVersion());
  const logger = createLogger({ level: 'info', stream: logDestination(devNull) });
  const app = await buildHubApp(deps, { logger });
  return listenOnLoopback(app, () => database.close());
}

/**
 * The real app whose cabinet syncs: connected to the hub given by the environment (with the code
 * given there) before listening, so that the sync engine, started with the app, pushes every
 * change and long-polls the hub as a syncing install does.
 */
async function startCourtierSync(dataDir: string): Promise<StartedTarget> {
  const hubUrl = requiredEnv(SYNC_HUB_URL_ENV);
  return startCourtierWith(dataDir, {
    async prepare(deps, cabinetId) {
      // The hub's operator's part: a code that registers this very cabinet.
      const hubDatabase = await openHubDatabase(requiredEnv(HUB_DATABASE_URL_ENV));
      const code = await createInvite(hubDeps(hubDatabase, 'bench'), { register: cabinetId })
        .then((invite) => invite.code)
        .finally(() => hubDatabase.close());
      const records = syncedRecords();
      const fetchHub = (url: string, init: RequestInit) => globalThis.fetch(url, init);
      await connectCabinet(deps, { cabinetId, hubUrl, code, deviceName: 'bench' }, { fetch: fetchHub, records }, CLI_ACTOR);
      await uploadQueue(deps, records, cabinetId, fetchHub, () => undefined);
    },
  });
}

function lanBenchFiles(): { certificateFile: string; keyFile: string; port: number } {
  const certificateFile = process.env[LAN_CERT_FILE_ENV];
  const keyFile = process.env[LAN_KEY_FILE_ENV];
  const port = Number(process.env[LAN_PORT_ENV]);
  if (!certificateFile || !keyFile || !Number.isInteger(port))
    throw new Error(`the LAN targets need ${LAN_CERT_FILE_ENV}, ${LAN_KEY_FILE_ENV} and ${LAN_PORT_ENV}`);
  return { certificateFile, keyFile, port };
}

/**
 * The real app with its office LAN listener on, on LAN_BENCH_ADDRESS (which the app is told is
 * this machine's LAN address), serving the parent's certificate as an IT-provided one: the same
 * certificate as bare-tls, so that both pay for the same TLS.
 */
async function startCourtierLan(dataDir: string): Promise<StartedTarget> {
  const files = lanBenchFiles();
  const network: MachineNetwork = {
    hostname: () => 'bench-office',
    interfaces: () => ({
      bench0: [
        {
          address: LAN_BENCH_ADDRESS,
          netmask: '255.255.255.0',
          family: 'IPv4',
          mac: '02:00:00:00:00:01',
          internal: false,
          cidr: `${LAN_BENCH_ADDRESS}/24`,
        },
      ],
    }),
  };
  let lanDeps: Deps | undefined;
  return startCourtierWith(dataDir, {
    network,
    seed(deps) {
      lanDeps = deps;
    },
    async afterListen(app) {
      if (!lanDeps) throw new Error('no deps');
      await changeLan(
        lanDeps,
        { enabled: true, port: files.port, certificateFile: files.certificateFile, keyFile: files.keyFile },
        network,
        CLI_ACTOR,
      );
      await app.lanListener.reconcile();
      if (app.lanListener.listening().length === 0) throw new Error('the LAN listener did not open');
    },
  });
}

/** The TLS baseline: a bare Node https server with the same certificate, answering a small JSON. */
async function startBareTls(): Promise<StartedTarget> {
  const files = lanBenchFiles();
  const server = createHttpsServer(
    { cert: readFileSync(files.certificateFile), key: readFileSync(files.keyFile) },
    (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, LAN_BENCH_ADDRESS, resolve));
  return {
    port: portOf(server.address()),
    headers: {},
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The sandbox insurer's portal alone: the robots benchmark's outside world, in a process of its own
 * so that what its pages cost (sessions, forms, PDFs) is not counted as the service's. No think time.
 */
/** Every demo insurer's portal, each at the path its package declares, as the service serves them. */
async function startSandboxPortal(): Promise<StartedTarget> {
  const app = Fastify({ logger: false });
  await app.register(sandboxPortalsPlugin, {
    clock: { now: () => Date.now() },
    randomBytes,
    mode: () => 'normal',
    latencyMs: () => 0,
  });
  return listenOnLoopback(app);
}

export const TARGETS: Record<TargetName, (dataDir: string) => Promise<StartedTarget>> = {
  bare: startBare,
  'bare-sqlite': startBareSqlite,
  courtier: startCourtier,
  'courtier-100k': startCourtier100k,
  'courtier-webhooks': startCourtierWebhooks,
  'bare-webhooks': startBareWebhooks,
  'courtier-mcp': startCourtierMcp,
  hub: startHub,
  'courtier-sync': startCourtierSync,
  'courtier-lan': startCourtierLan,
  'bare-tls': startBareTls,
  'sandbox-portal': startSandboxPortal,
};
