import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { buildApp } from './app.js';
import { defaultDeps, type Deps } from './deps.js';
import { toIso } from './platform/iso-time.js';
import { hostWithPort } from './lan/plan.js';
import { checkpointsLoggedTo } from './platform/db/checkpoints.js';
import { databaseFile, openDatabase } from './platform/db/open.js';
import type { Insurer, InsurerRegistry } from './insurers/registry.js';
import { createLoadedRegistry, localServiceUrl, watchInstalledInsurers } from './insurers/service.js';
import { registerRunningService, runningServicesDir } from './running-services.js';
import type { SecretStore } from './secrets/secret-store.js';

/** A service listening on its port, and how to stop it. */
export interface StartedService {
  app: FastifyInstance;
  deps: Deps;
  port: number;
  url: string;
  /** Lets in-flight requests finish, then closes the database and forgets the running service. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The insurers the robots price with; by default the built-in and installed packages, reloaded when an install changes. */
  insurers?: readonly Insurer[];
  /** Where secrets are kept; the data dir's file store by default (the desktop app gives the OS keychain). */
  secrets?: SecretStore;
  /** Called with the app before it listens (tests add routes). */
  beforeListen?: (app: FastifyInstance) => void;
}

/**
 * Opens the data dir's database, builds the app and listens: what `courtier serve` and the desktop
 * app's server both run. A service that cannot listen closes its database and throws the listen's
 * error, for the caller to word.
 */
export async function startService(config: Config, options: ServiceOptions): Promise<StartedService> {
  const { logger, env } = options;
  const db = openDatabase(databaseFile(config.dataDir), { backgroundCheckpoints: checkpointsLoggedTo(logger) });
  // The sandbox adapter reaches this very service; with port 0 the port is known after listen.
  let listeningPort = config.port;
  const loadOptions = { serviceUrl: config.sandbox ? () => localServiceUrl(config.host, listeningPort) : undefined };
  let deps: Deps;
  let app: FastifyInstance | undefined;
  let stopWatching = () => {};
  try {
    let insurers: readonly Insurer[] | InsurerRegistry | undefined = options.insurers;
    if (!insurers) {
      const registry = await createLoadedRegistry(config, loadOptions);
      for (const problem of registry.problems()) logger.warn({ problem }, 'an insurer adapter was not loaded');
      stopWatching = watchInstalledInsurers(config, loadOptions, registry, (event) => {
        if ('error' in event) logger.error({ err: event.error }, 'the insurer adapters could not be reloaded');
        else logger.info({ insurers: event.insurers, problems: event.problems }, 'insurer adapters reloaded');
      });
      insurers = registry;
    }
    deps = defaultDeps(db, config, { insurers, env, ...(options.secrets ? { secrets: options.secrets } : {}) });
    app = await buildApp(deps, { logger });
    options.beforeListen?.(app);
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // What started with the app (its threads, the robots, the sync) stops before the database closes.
    stopWatching();
    await app?.close().catch(() => undefined);
    db.close();
    throw err;
  }
  const address = app.server.address();
  listeningPort = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${hostWithPort(config.host, listeningPort)}`;
  const unregister = registerRunningService(runningServicesDir(env), {
    pid: process.pid,
    url,
    data_dir: config.dataDir,
    started_at: toIso(deps.clock.now()),
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      stopWatching();
      try {
        await app.close();
      } catch (err) {
        logger.error({ err }, 'error while stopping');
      }
      unregister();
      db.close();
    })());
  return { app, deps, port: listeningPort, url, close };
}
