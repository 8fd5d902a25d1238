import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { databaseFile, openDatabase } from '../db/open.js';
import { buildApp } from '../app.js';
import { defaultDeps } from '../deps.js';
import type { InsurerAdapter } from '../robots/adapter.js';
import { builtInInsurers, localPortalUrl } from '../robots/insurers/index.js';
import { createLogger } from '../logging.js';
import { listCabinets } from '../tenancy/service.js';

/** `courtier serve`: runs until SIGINT or SIGTERM, then lets in-flight requests finish and closes the database. */
export async function serve(config: Config, options: { insurers?: readonly InsurerAdapter[]; beforeListen?: (app: FastifyInstance) => void } = {}): Promise<void> {
  const logger = createLogger({ level: config.logLevel });
  const db = openDatabase(databaseFile(config.dataDir));
  // The sandbox adapter reaches this very service; with --port 0 the port is known after listen.
  let listeningPort = config.port;
  const insurers = options.insurers ?? builtInInsurers({ portalUrl: config.sandbox ? () => localPortalUrl(config.host, listeningPort) : undefined });
  const deps = defaultDeps(db, config, { insurers });
  const app = await buildApp(deps, { logger });
  options.beforeListen?.(app);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    db.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  listeningPort = port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info({ url: `http://${host}:${port}`, dataDir: config.dataDir }, `Courtier listening on http://${host}:${port}`);
  if (listCabinets(deps).length === 0) {
    logger.warn(
      `No cabinet yet: open http://127.0.0.1:${port}/console/ on this machine (setup is refused from elsewhere), or create one with \`courtier init --cabinet NAME --email E --password-stdin\` (same --data-dir).`,
    );
  }

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing in-flight requests');
      app
        .close()
        .catch((err: unknown) => logger.error({ err }, 'error while stopping'))
        .finally(() => {
          db.close();
          logger.info('stopped');
          logger.flush(() => resolve());
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
