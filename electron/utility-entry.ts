import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { readKillSwitch, setKillSwitch } from '../server/automation/guards.js';
import { listJobsOnRobotsHere } from '../server/automation/jobs.js';
import { ConfigError, isLoopbackHost, loadConfig, type Config } from '../server/config.js';
import type { DesktopLoginTokens } from '../server/console/desktop-login.js';
import type { Deps } from '../server/deps.js';
import { createLogger } from '../server/platform/logging.js';
import type { Insurer } from '../server/insurers/registry.js';
import { openDesktopSecretStore, type KeyringBackend } from '../server/secrets/keychain-store.js';
import { listCabinets } from '../server/tenancy/service.js';
import { startService, type StartedService } from '../server/start-service.js';
import { parentMessageSchema, type ActiveJob, type ChildMessage, type ServerStatus } from './protocol.js';

/**
 * The server inside the Electron utility process: what `courtier serve` does (same config, same
 * app, same data dir layout), with the OS keychain as the secret store, and a message port to the
 * main process instead of signals: `listening` with the port, `status` with jobs and the kill
 * switch, requests (`allow-login`, `set-robots`) answered with `reply`, and `stop`.
 */

/** The utility process's parentPort, reduced to what is used here (tests give a fake). */
export interface ParentPortLike {
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  postMessage(message: ChildMessage): void;
}

export interface UtilityServerOptions {
  port: ParentPortLike;
  env: NodeJS.ProcessEnv;
  /** process.exit in the utility process; tests record it. */
  exit: (code: number) => void;
  /** The OS keychain (tests give an in-memory one). */
  keyring?: KeyringBackend;
  insurers?: readonly Insurer[];
  statusIntervalMs?: number;
}

export interface UtilityServer {
  app: FastifyInstance;
  deps: Deps;
  port: number;
  /** The same as the `stop` message. */
  stop(): Promise<void>;
}

/** Whether nothing listens on host:port right now (the last used port is tried first). */
function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The jobs this install's robots are on, across its cabinets (not those another install of a
 * cabinet runs: their code is asked there), and the kill switch.
 */
function collectStatus(deps: Deps): ServerStatus {
  const jobs: ActiveJob[] = [];
  for (const cabinet of listCabinets(deps)) {
    for (const job of listJobsOnRobotsHere(deps, cabinet.cabinet_id, 150)) {
      jobs.push({
        job_id: job.job_id,
        cabinet_id: cabinet.cabinet_id,
        status: job.status,
        compagnie: job.compagnie,
        produit: job.produit,
        progress_percent: job.progress.percent,
        mfa_challenge: job.mfa?.challenge ?? null,
        mfa_kind: job.mfa?.kind ?? null,
      });
    }
  }
  const killSwitch = readKillSwitch(deps);
  return { robots_enabled: killSwitch === null, kill_switch_reason: killSwitch?.reason ?? null, jobs };
}

export async function runUtilityServer(options: UtilityServerOptions): Promise<UtilityServer | null> {
  const { port: parent, env } = options;
  let config: Config;
  try {
    config = loadConfig({}, env);
  } catch (err) {
    parent.postMessage({ type: 'fatal', message: err instanceof ConfigError ? err.message : String(err) });
    options.exit(1);
    return null;
  }
  const logger = createLogger({ level: config.logLevel });
  // The last used port keeps the console's origin (and its local storage); a free one otherwise.
  if (config.port !== 0 && isLoopbackHost(config.host) && !(await portIsFree(config.host, config.port))) {
    logger.info({ port: config.port }, 'the last used port is taken: using a free one');
    config = { ...config, port: 0 };
  }
  const secrets = openDesktopSecretStore({
    dataDir: config.dataDir,
    env,
    randomBytes,
    service: env.COURTIER_KEYCHAIN_SERVICE || 'Courtier',
    ...(options.keyring ? { backend: options.keyring } : {}),
    onFallback: (operation, err) =>
      logger.warn({ operation, err: String(err) }, 'the OS keychain failed; the encrypted file store was used'),
  });
  if (secrets.warning) logger.warn(secrets.warning);

  let service: StartedService;
  try {
    service = await startService(config, { logger, env, insurers: options.insurers, secrets: secrets.store });
  } catch (err) {
    parent.postMessage({ type: 'fatal', message: `the server could not start: ${(err as Error).message}` });
    logger.flush(() => options.exit(1));
    return null;
  }
  const { app, deps, port: listeningPort } = service;
  logger.info({ port: listeningPort, dataDir: config.dataDir, secretStore: secrets.kind }, 'Courtier desktop server listening');
  parent.postMessage({
    type: 'listening',
    port: listeningPort,
    host: config.host,
    secret_store: secrets.kind,
    secret_store_warning: secrets.warning,
  });

  let lastStatus = '';
  const sendStatus = () => {
    try {
      const status = collectStatus(deps);
      const text = JSON.stringify(status);
      if (text === lastStatus) return;
      lastStatus = text;
      parent.postMessage({ type: 'status', status });
    } catch (err) {
      logger.warn({ err }, 'could not read the jobs for the desktop app');
    }
  };
  sendStatus();
  const statusTimer = setInterval(sendStatus, options.statusIntervalMs ?? 2_000);
  statusTimer.unref();

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(statusTimer);
      logger.info('stopping: finishing in-flight requests');
      await service.close();
      logger.info('stopped');
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      options.exit(0);
    })();
    return stopping;
  };

  const desktopLogin = (app as FastifyInstance & { desktopLogin: DesktopLoginTokens }).desktopLogin;
  parent.on('message', (event) => {
    const parsed = parentMessageSchema.safeParse(event.data);
    if (!parsed.success) {
      logger.warn({ issue: parsed.error.issues[0]?.message }, 'ignored a malformed message from the desktop app');
      return;
    }
    const message = parsed.data;
    if (message.type === 'stop') {
      void stop();
      return;
    }
    try {
      if (message.type === 'allow-login') desktopLogin.allow(message.sha256);
      else if (message.type === 'set-robots') {
        setKillSwitch(deps, message.enabled ? null : (message.reason ?? 'Paused from the desktop app.'));
        sendStatus();
      }
      parent.postMessage({ type: 'reply', request_id: message.request_id, ok: true });
    } catch (err) {
      parent.postMessage({ type: 'reply', request_id: message.request_id, ok: false, error: (err as Error).message });
    }
  });
  return { app, deps, port: listeningPort, stop };
}

/** Run by utility-bootstrap.cjs in the utility process (where process.parentPort exists). */
export function main(): void {
  // Electron's types declare process.parentPort; read it structurally so that Node-only type-checks pass too.
  const parentPort = (process as { parentPort?: ParentPortLike }).parentPort;
  if (!parentPort) {
    process.stderr.write('utility-entry runs inside the Courtier desktop app (an Electron utility process).\n');
    process.exit(2);
  }
  const report = (err: unknown) => {
    try {
      parentPort.postMessage({ type: 'fatal', message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    } finally {
      process.exit(1);
    }
  };
  process.on('uncaughtException', report);
  process.on('unhandledRejection', report);
  runUtilityServer({ port: parentPort, env: process.env, exit: (code) => process.exit(code) }).catch(report);
}
