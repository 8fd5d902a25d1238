import { createLogger } from '../platform/logging.js';
import { packageVersion } from '../paths.js';
import { buildHubApp } from './app.js';
import { startCompaction } from './compaction-runs.js';
import { hubLimitsOf, retentionOf, type HubConfig } from './config.js';
import { openHubDatabase } from './database.js';
import { hubDeps } from './deps.js';

/**
 * `courtier hub serve`: migrates (under the advisory lock, so that processes starting together
 * migrate once), listens, and runs until SIGINT or SIGTERM; then answers waiting long polls, lets
 * in-flight requests finish and closes PostgreSQL.
 */
export async function serveHub(config: HubConfig): Promise<void> {
  const logger = createLogger({ level: config.logLevel });
  const database = await openHubDatabase(config.databaseUrl);
  const deps = hubDeps(database, packageVersion(), { limits: hubLimitsOf(config) });
  const app = await buildHubApp(deps, { logger, trustProxy: config.trustProxy }).catch(async (err: unknown) => {
    await database.close();
    throw err;
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    await database.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url }, `Courtier hub listening on ${url}`);
  const compaction = startCompaction(deps, retentionOf(config), config.compactEveryMinutes * 60_000, logger);

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: answering long polls, finishing in-flight requests');
      compaction
        .stop()
        .then(() => app.close())
        .catch((err: unknown) => logger.error({ err }, 'error while stopping'))
        .then(() => database.close())
        .catch((err: unknown) => logger.error({ err }, 'error while closing PostgreSQL'))
        .finally(() => {
          logger.info('stopped');
          logger.flush(() => resolve());
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
