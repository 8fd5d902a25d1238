/**
 * The servers a benchmark can measure, each started inside bench/server-child.ts. Imported by the
 * child only, so that the parent (the load generator) never loads Fastify or the app.
 */
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { devNull } from 'node:os';
import { pino } from 'pino';
import { SCOPE_NAMES } from '../shared/scopes.js';
import { createApiKey } from '../server/api-keys/service.js';
import { buildApp } from '../server/app.js';
import { loadConfig } from '../server/config.js';
import { databaseFile, openDatabase } from '../server/db/open.js';
import { defaultDeps } from '../server/deps.js';
import { createLogger } from '../server/logging.js';
import { initCabinet } from '../server/tenancy/service.js';
import { BARE_PATH, type TargetName } from './lib/protocol.js';

export interface StartedTarget {
  port: number;
  headers: Record<string, string>;
  close(): Promise<void>;
}

/**
 * High enough that the limiter never refuses: /me runs above 16,700 req/s here, which would reach
 * configSchema's maximum (1,000,000 a minute) within a minute of a long run. Set after loadConfig,
 * which would refuse it; the limiter does the same work whatever the limit. A 429 would fail the
 * run anyway, since every response must be a 200.
 */
const RATE_LIMIT_PER_MINUTE = 100_000_000;

function portOf(address: AddressInfo | string | null): number {
  if (typeof address === 'object' && address !== null) return address.port;
  throw new Error(`server is not listening on a TCP port (${String(address)})`);
}

/** The baseline: what Fastify alone costs for a small JSON answer, no hooks, no logger. */
async function startBare(): Promise<StartedTarget> {
  const app = Fastify({ logger: false });
  app.get(BARE_PATH, async () => ({ hello: 'world', service: 'bare' }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: portOf(app.server.address()), headers: {}, close: () => app.close() };
}

/**
 * The real app as `courtier serve` builds it (same plugins, logger at info with redaction), on a
 * real SQLite file, with one cabinet and one prod key holding every scope. Only the log
 * destination differs: the null device instead of stdout, written asynchronously as serve writes
 * stdout, without a terminal or a pipe reader in the measurement.
 */
async function startCourtier(dataDir: string): Promise<StartedTarget> {
  const config = { ...loadConfig({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'info' }, {}), rateLimitPerMinute: RATE_LIMIT_PER_MINUTE };
  const db = openDatabase(databaseFile(dataDir));
  // env {} as for loadConfig: the run does not depend on the shell's COURTIER_* variables (a master key, say).
  const deps = defaultDeps(db, config, { env: {} });
  const logger = createLogger({ level: config.logLevel, stream: pino.destination({ dest: devNull, sync: false }) });
  const app = await buildApp(deps, { logger });
  const { cabinet_id } = await initCabinet(deps, { cabinet: 'Cabinet Bench', email: 'bench@example.fr', password: 'correct horse battery staple' });
  const key = createApiKey(deps, cabinet_id, { name: 'bench', environment: 'prod', scopes: [...SCOPE_NAMES] });
  await app.listen({ host: config.host, port: config.port });
  return {
    port: portOf(app.server.address()),
    headers: { 'x-api-key': key.key },
    async close() {
      await app.close();
      db.close();
    },
  };
}

export const TARGETS: Record<TargetName, (dataDir: string) => Promise<StartedTarget>> = {
  bare: startBare,
  courtier: startCourtier,
};
