import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { accountRoutes } from './console/account-routes.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { createKeyAuthenticator } from './api-keys/service.js';
import { isLoopbackHost } from './config.js';
import { automationRoutes } from './automation/routes.js';
import { comparaisonRoutes } from './comparaisons/routes.js';
import { createWorker, type Worker } from './automation/worker.js';
import { createSyncEngine, type SyncEngineOptions } from './sync/engine.js';
import { cabinetsAwaitingHub } from './sync/status.js';
import { syncedRecords } from './sync/records.js';
import { syncConsoleRoutes } from './console/sync-routes.js';
import { createBrowserRuntime, type BrowserRuntime } from './robots/browser.js';
import { sandboxPortalsPlugin, type SandboxMode } from './sandbox-portals/index.js';
import { crmRoutes } from './crm/routes.js';
import { consoleSessionRoutes } from './console/routes.js';
import { consoleRoutes } from './console/static.js';
import { desktopLoginRoutes } from './console/desktop-login.js';
import { adminConsoleRoutes } from './console/admin-routes.js';
import { automationConsoleRoutes } from './console/automation-routes.js';
import { comparisonConsoleRoutes } from './console/comparison-routes.js';
import { importConsoleRoutes } from './console/import-routes.js';
import { recordsConsoleRoutes } from './console/records-routes.js';
import { searchConsoleRoutes } from './console/search-routes.js';
import { webhookConsoleRoutes } from './console/webhook-routes.js';
import { consoleCheck } from './console/guard.js';
import { createLoginThrottle } from './console/service.js';
import { oauthRoutes, OPEN_CORS_PATHS } from './oauth/routes.js';
import { createAccessTokenAuthenticator } from './oauth/access.js';
import { accessTokenCheck } from './mcp/access-check.js';
import { mcpRoutes } from './mcp/routes.js';
import { devisRoutes } from './devis/routes.js';
import type { Dispatcher } from './webhooks/dispatcher.js';
import { createThreadedDispatcher, serviceWebhooks, type WebhookOptions } from './webhooks/dispatcher-thread.js';
import { webhookRoutes } from './webhooks/routes.js';
import { createLanListener, type LanListener } from './lan/listener.js';
import type { MachineNetwork } from './lan/plan.js';
import { lanRoutes } from './console/lan-routes.js';
import { systemNetwork } from './lan/service.js';
import { checkLanAddress } from './lan/blocks.js';
import { createDiscovery } from './lan/discovery.js';
import { auditRoutes } from './console/audit-routes.js';
import { purgeExpiredAudit } from './audit/service.js';
import type { Deps } from './deps.js';
import { healthRoutes } from './health/routes.js';
import { fastifyTrustProxy } from './platform/http/client-address.js';
import { useJsonBodies } from './platform/http/json-body.js';
import { requestLogger } from './platform/logging.js';
import { openApiRoutes } from './openapi/routes.js';
import { packageRoot, packageVersion } from './paths.js';
import { apiKeyCheck, authPlugin } from './plugins/auth.js';
import { ApiError } from './errors.js';
import { clientErrorHandler, errorsPlugin, sendError, toApiError } from './plugins/errors.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { localGuardPlugin } from './plugins/local-guard.js';
import { createRateLimiter } from './plugins/rate-limit.js';
import { zodValidationPlugin } from './plugins/zod-validation.js';
import { holdNextTickShape } from './platform/http/tick-shape.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    webhookDispatcher: Dispatcher;
    robotWorker: Worker;
    lanListener: LanListener;
  }
}

export interface BuildAppOptions {
  logger: Logger;
  /** The webhook dispatcher's thread entry, extra CAs and, in tests, its clock and DNS (dispatcher-thread.ts); the service's by default. */
  webhooks?: WebhookOptions;
  /** The background sync with a hub (tests pass a fetch through a fault proxy, shorter waits). */
  sync?: Omit<SyncEngineOptions, 'logger' | 'records'>;
  /** The robots' browser, shared by several apps in tests; by default one is made (and closed) here. */
  browser?: BrowserRuntime;
  /** The demo portals' behaviour, each by its insurer's code, switchable while running (tests, demos); else COURTIER_SANDBOX_MODE for all. */
  sandboxMode?: (insurer: string) => SandboxMode;
  /** The machine's host name and addresses, as the office LAN mode sees them (tests give their own). */
  network?: MachineNetwork;
}

/**
 * Composes the service from its plugins and modules. No global state: two apps can share a process
 * (the nextTick entry held for the process, see tick-shape.ts, is the process's and held once).
 */
export async function buildApp(deps: Deps, options: BuildAppOptions): Promise<FastifyInstance> {
  holdNextTickShape();
  const { config } = deps;
  const version = packageVersion();
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // One line per request, written by our onResponse hook (with the key id and a redacted URL).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: BODY_LIMIT_BYTES,
    // Only the configured proxies may tell the client's address and protocol (COURTIER_TRUST_PROXY).
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { maxParamLength: 200 },
    // A request without Host reaches the local guard (421 on loopback) instead of Node's bare 400.
    http: { requireHostHeader: false },
    clientErrorHandler: (err, socket) => clientErrorHandler(err, socket, randomUUID),
    // Errors Fastify raises before routing (bad percent-encoding, over-long parameters): our shape too.
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id);
      sendError(request, reply, toApiError(error) ?? new ApiError('bad_request', error.message));
    },
  });

  useJsonBodies(app);

  // The office LAN listener serves this same app over HTTPS, through Fastify's router.
  const network = options.network ?? systemNetwork;
  const lanListener = createLanListener(deps, {
    handler: (request, response) => app.routing(request, response),
    onClientError: (err, socket) => clientErrorHandler(err, socket, randomUUID),
    logger: app.log,
    network,
    intervalMs: config.lanCheckIntervalMs,
    discovery: createDiscovery(app.log),
  });
  app.decorate('lanListener', lanListener);

  // Hooks on every request are callback-style: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  const logRequest = requestLogger(options.logger);
  app.addHook('onResponse', (request, reply, done) => {
    logRequest(request, reply, request.apiKey ? { key_id: request.apiKey.keyId } : undefined);
    done();
  });

  await app.register(errorsPlugin);
  await app.register(zodValidationPlugin, { refuseUnsyncableText: true });
  await app.register(localGuardPlugin, {
    loopbackOnly: isLoopbackHost(config.host),
    extraHostnames: config.publicBaseUrl ? [new URL(config.publicBaseUrl).host.replace(/:\d+$/, '')] : [],
    corsOrigins: config.corsOrigins,
    openCorsPaths: OPEN_CORS_PATHS,
    lanHosts: () => lanListener.allowedHosts(),
    lanAddressCheck: (address) => checkLanAddress(deps, address),
  });
  // One limiter for API keys and MCP access tokens: their ids never collide (UUIDs).
  const rateLimiter = createRateLimiter({ limit: config.rateLimitPerMinute, windowMs: 60_000, clock: deps.clock });
  await app.register(authPlugin, {
    checks: {
      api_key: apiKeyCheck(createKeyAuthenticator(deps), rateLimiter),
      console: consoleCheck(deps),
      console_admin: consoleCheck(deps, { role: 'admin' }),
      access_token: accessTokenCheck(deps, createAccessTokenAuthenticator(deps), rateLimiter),
    },
  });
  app.decorateRequest('consoleUser', null);
  app.decorateRequest('mcpAccess', null);

  await app.register(idempotencyPlugin, { deps });

  if (config.sandbox) {
    // The demo insurers: real web apps of several styles that the robots (and demos, and tests) use.
    await app.register(sandboxPortalsPlugin, {
      clock: deps.clock,
      randomBytes: deps.randomBytes,
      mode: options.sandboxMode ?? (() => config.sandboxMode),
      latencyMs: () => config.sandboxLatencyMs,
    });
  }

  await app.register(healthRoutes, { version });
  await app.register(openApiRoutes, { version });
  await app.register(apiKeyRoutes);
  await app.register(crmRoutes, { deps });
  await app.register(devisRoutes, { deps });
  // One count of failed sign-ins: a wrong current password on a password change counts too.
  const loginThrottle = createLoginThrottle(deps.clock);
  await app.register(consoleSessionRoutes, { deps, throttle: loginThrottle });
  await app.register(desktopLoginRoutes, { deps });
  await app.register(oauthRoutes, { deps });
  await app.register(consoleRoutes, { rootDir: join(packageRoot(), 'dist', 'renderer') });
  await app.register(adminConsoleRoutes, { deps });
  await app.register(accountRoutes, { deps, throttle: loginThrottle });
  await app.register(lanRoutes, { deps, listener: lanListener, network });
  await app.register(auditRoutes, { deps });

  const dispatcher = createThreadedDispatcher(deps, { logger: app.log, ...(options.webhooks ?? serviceWebhooks()) });
  app.decorate('webhookDispatcher', dispatcher);
  await app.register(webhookRoutes, { deps, dispatcher });
  await app.register(webhookConsoleRoutes, { deps, dispatcher });
  app.addHook('onReady', async () => dispatcher.start());
  app.addHook('onClose', async () => dispatcher.stop());

  const runtime =
    options.browser ??
    createBrowserRuntime({
      dataDir: config.dataDir,
      configuredPath: config.browserPath,
      headed: config.robotsHeaded,
      now: () => deps.clock.now(),
    });
  const startedAt = deps.clock.now();
  const worker = createWorker(deps, {
    logger: app.log,
    runtime,
    heldBack: () => ({ cabinetIds: cabinetsAwaitingHub(deps, startedAt), queuedBefore: startedAt }),
  });
  app.decorate('robotWorker', worker);
  await app.register(automationRoutes, { deps, robots: worker, runtime });
  await app.register(comparaisonRoutes, { deps });
  await app.register(automationConsoleRoutes, { deps, worker, runtime });
  await app.register(comparisonConsoleRoutes, { deps });
  await app.register(recordsConsoleRoutes, { deps });
  await app.register(searchConsoleRoutes, { deps });
  await app.register(importConsoleRoutes, { deps });
  await app.register(mcpRoutes, { deps, worker });
  app.addHook('onReady', async () => {
    if (!runtime.hasCandidates()) {
      app.log.warn(
        'No browser found for the robots: install Google Chrome, Microsoft Edge or Chromium, or set COURTIER_BROWSER_PATH. Tarifications will fail with browser_unavailable (refunded).',
      );
    }
    worker.start();
  });
  const records = syncedRecords();
  const syncEngine = createSyncEngine(deps, { logger: app.log, records, ...options.sync });
  await app.register(syncConsoleRoutes, { deps, records, fetch: options.sync?.fetch ?? ((url, init) => globalThis.fetch(url, init)) });
  app.addHook('onReady', async () => syncEngine.start());
  app.addHook('onClose', async () => syncEngine.stop());
  // The audit log keeps one year: purged at start, then daily.
  let auditPurge: NodeJS.Timeout | null = null;
  app.addHook('onReady', async () => {
    purgeExpiredAudit(deps);
    auditPurge = setInterval(() => purgeExpiredAudit(deps), 86_400_000).unref();
    lanListener.start();
  });
  app.addHook('onClose', async () => {
    if (auditPurge) clearInterval(auditPurge);
    await lanListener.stop();
  });
  // Before the server stops listening: running robots still reach the demo portals this app serves,
  // and the browser's open pages (kept sessions of the portals) no longer hold connections it waits for.
  app.addHook('preClose', async () => {
    await worker.stop();
    if (!options.browser) await runtime.close();
  });
  return app;
}
