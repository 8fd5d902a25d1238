import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { HUB_EPOCH_HEADER, HUB_TIME_HEADER } from '../../shared/sync-protocol.js';
import { ApiError } from '../errors.js';
import { fastifyTrustProxy } from '../platform/http/client-address.js';
import { useJsonBodies } from '../platform/http/json-body.js';
import type { TrustProxy } from '../config.js';
import { requestLogger } from '../platform/logging.js';
import { authPlugin } from '../plugins/auth.js';
import { clientErrorHandler, errorsPlugin, sendError, toApiError } from '../plugins/errors.js';
import { zodValidationPlugin } from '../plugins/zod-validation.js';
import { databaseUnavailable } from './database.js';
import type { HubDeps } from './deps.js';
import { deviceConcurrency } from './device-limits.js';
import { deviceCheck } from './devices.js';
import { hubRoutes } from './routes.js';
import { createChangeWaiters, listenForChanges, type ChangeWaiters } from './waiters.js';
import { holdNextTickShape } from '../platform/http/tick-shape.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This hub app's long polls (tests look at how many wait). */
    hubWaiters: ChangeWaiters;
  }
}

/** What a body may weigh on a route of the hub that has no limit of its own. */
const SMALL_BODY_BYTES = 4 * 1024;

export interface HubAppOptions {
  logger: Logger;
  /** Proxies whose X-Forwarded-For is believed: the pairing throttle counts per client address. */
  trustProxy?: TrustProxy;
}

/**
 * The hub's HTTP app. It holds no state of its own but its long polls: any number of hub
 * processes (or apps in one test process) serve the same PostgreSQL, and LISTEN/NOTIFY wakes the
 * pulls of all of them. Never opens SQLite, never loads the agent's Deps.
 */
export async function buildHubApp(deps: HubDeps, options: HubAppOptions): Promise<FastifyInstance> {
  holdNextTickShape();
  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    // Every route a stranger may call (pairing, an unknown path that Fastify still reads) takes a few
    // KiB; a device's push and PDFs have their own limits, and their callers are authenticated before
    // any body is read.
    bodyLimit: SMALL_BODY_BYTES,
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
    routerOptions: { maxParamLength: 200 },
    clientErrorHandler: (err, socket) => clientErrorHandler(err, socket, randomUUID),
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id);
      sendError(request, reply, toApiError(error) ?? new ApiError('bad_request', error.message));
    },
  });
  useJsonBodies(app);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    // Installs compare their clock with the hub's on every answer, errors included.
    reply.header(HUB_TIME_HEADER, String(deps.clock.now()));
    done();
  });
  const logRequest = requestLogger(options.logger);
  app.addHook('onResponse', (request, reply, done) => {
    const device = request.device;
    logRequest(request, reply, device ? { device_id: device.deviceId, cabinet_id: device.cabinetId } : undefined);
    done();
  });

  await app.register(errorsPlugin, { recognise: databaseUnavailable });
  await app.register(zodValidationPlugin);
  await app.register(authPlugin, { checks: { device: deviceCheck(deps) } });
  app.decorateRequest('device', null);
  // After the device check (hooks run in order), before any body is read.
  const concurrency = deviceConcurrency(deps.limits);
  app.addHook('onRequest', concurrency.admit);

  const waiters = createChangeWaiters();
  app.decorate('hubWaiters', waiters);
  const listening = await listenForChanges(deps.sql, waiters);
  // Long polls answer at once when the hub stops, instead of holding the shutdown for their wait,
  // and their connections close after the answer: an idle keep-alive connection would otherwise
  // hold close() for the whole keep-alive timeout.
  let stopping = false;
  app.addHook('preClose', (done) => {
    stopping = true;
    waiters.close();
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (stopping) reply.header('connection', 'close');
    // An install that sees another epoch than it knew starts over with the hub (restored from a backup).
    if (request.device) reply.header(HUB_EPOCH_HEADER, request.device.epoch);
    done(null, payload);
  });
  app.addHook('onClose', async () => listening.unlisten());

  await app.register(hubRoutes, { deps, waiters });
  return app;
}
