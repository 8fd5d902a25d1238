import type { FastifyInstance } from 'fastify';
import { isLoopbackHost, type Config } from '../config.js';
import type { Insurer } from '../insurers/registry.js';
import { createLogger } from '../platform/logging.js';
import { listCabinets } from '../tenancy/service.js';
import { listRunningServices, runningServicesDir } from '../running-services.js';
import { startService, type StartedService } from '../start-service.js';

/** The URL a person at this machine reaches the service at over loopback, or null when it listens on no loopback address. */
function loopbackUrl(host: string, port: number): string | null {
  // A wildcard listener (Node's :: is dual-stack) answers 127.0.0.1 too.
  if (host === '0.0.0.0' || host === '::') return `http://127.0.0.1:${port}`;
  if (!isLoopbackHost(host)) return null;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/**
 * What serve says on a new install (no cabinet yet): where to do the first-run setup. The console's
 * setup is accepted from a loopback peer only, so its URL is given only when the service listens on
 * a loopback address; the CLI works whatever the address.
 */
export function firstRunHint(host: string, port: number): { setupUrl: string | null; message: string } {
  const cli = '`courtier init --cabinet NAME --email E --password-stdin` (same --data-dir)';
  const base = loopbackUrl(host, port);
  if (base === null) {
    return {
      setupUrl: null,
      message: `No cabinet yet: create one with ${cli}. The console's first-run setup is accepted over loopback only, and this service listens on ${host} alone.`,
    };
  }
  const setupUrl = `${base}/console/`;
  return {
    setupUrl,
    message: `No cabinet yet: open ${setupUrl} on this machine for the first-run setup (it is refused from elsewhere), or create one with ${cli}.`,
  };
}

/** Why the port cannot be listened on, in words: the Courtier service that holds it (and its data dir) when one does. */
function portTakenError(config: Config, env: NodeJS.ProcessEnv): Error {
  const holder = listRunningServices(runningServicesDir(env)).find((service) => new URL(service.url).port === String(config.port));
  const by = holder ? `the Courtier service at ${holder.url} (pid ${holder.pid}, data dir ${holder.data_dir})` : 'another program';
  return new Error(
    `port ${config.port} on ${config.host} is taken by ${by}. Stop it (Ctrl-C in its terminal), or choose another port with --port or COURTIER_PORT.`,
  );
}

/** `courtier serve`: runs until SIGINT or SIGTERM, then lets in-flight requests finish and closes the database. */
export async function serve(
  config: Config,
  options: { insurers?: readonly Insurer[]; beforeListen?: (app: FastifyInstance) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const env = options.env ?? process.env;
  const logger = createLogger({ level: config.logLevel });
  let service: StartedService;
  try {
    service = await startService(config, { logger, env, insurers: options.insurers, beforeListen: options.beforeListen });
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portTakenError(config, env) : err;
  }
  const { url, port, deps } = service;
  logger.info({ url, dataDir: config.dataDir }, `Courtier listening on ${url} (data dir ${config.dataDir}; Ctrl-C stops it)`);
  if (listCabinets(deps).length === 0) {
    const { setupUrl, message } = firstRunHint(config.host, port);
    logger.warn({ setupUrl }, message);
  }

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing in-flight requests');
      void service.close().finally(() => {
        logger.info('stopped');
        logger.flush(() => resolve());
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
