import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { CreateApiKeyInput, CreatedApiKey } from '../../shared/api-keys.js';
import { SCOPE_NAMES } from '../../shared/scopes.js';
import { createApiKey } from '../../server/api-keys/service.js';
import { buildApp, type BuildAppOptions } from '../../server/app.js';
import { loadConfig, type Config } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Clock, type Deps } from '../../server/deps.js';
import { createLogger } from '../../server/platform/logging.js';
import { createSharedClock, type SharedClock } from '../../server/platform/shared-clock.js';
import { dispatcherEntry, type DispatcherInputs } from '../../server/webhooks/dispatcher-thread.js';
import type { Insurer } from '../../server/insurers/registry.js';
import { initCabinet } from '../../server/tenancy/service.js';

/** A clock tests move by hand. */
/** A clock the test moves, read by the webhook dispatcher's thread too. */
export interface TestClock extends SharedClock {
  advance(ms: number): void;
}

export function testClock(start = Date.UTC(2026, 10, 22, 9, 0, 0)): TestClock {
  const clock = createSharedClock(start);
  return { ...clock, advance: (ms) => clock.set(clock.now() + ms) };
}

export function tempDir(prefix = 'courtier-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer {
  app: FastifyInstance;
  deps: Deps;
  /** http://127.0.0.1:<port> */
  url: string;
  dataDir: string;
  /** Every log line the server wrote, raw. */
  logs: string[];
  /** Creates a cabinet with an admin user; returns its id. */
  createCabinet(name?: string): Promise<string>;
  createKey(cabinetId: string, input?: Partial<CreateApiKeyInput>): CreatedApiKey;
  /** fetch against the server, with a path relative to its root. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** Runs on another connection to the service's database file, as the CLI (another process) opens it. */
  withOtherConnection<T>(run: (db: Database.Database) => T): T;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<Config>;
  /** A testClock is the webhook dispatcher's too. */
  clock?: Clock | TestClock;
  dataDir?: string;
  /** Called before listen, e.g. to add a throwaway route that exercises a plugin. */
  beforeListen?: (app: FastifyInstance) => void;
  /** The webhook dispatcher's: the receiver's CA, a DNS table (the dispatcher runs on its thread, from dist/). */
  webhooks?: { extraCa?: readonly string[]; entry?: string; hosts?: DispatcherInputs['hosts'] };
  /** Insurer robots (a test adapter). */
  insurers?: Insurer[];
  sandboxMode?: BuildAppOptions['sandboxMode'];
  /** The background sync's options (a fault proxy's fetch, short waits). */
  sync?: BuildAppOptions['sync'];
  /** The machine's host name and addresses as the office LAN mode sees them. */
  network?: BuildAppOptions['network'];
  /** Told every SQL statement the server's connection runs, migrations included: see openDatabase. */
  onStatement?: (sql: string) => void;
  /** The address to listen on (127.0.0.1 unless a test needs a LAN client: 0.0.0.0 with config.host). */
  listenHost?: string;
}

/** Starts the real app on a real port with a real SQLite file in a temp dir. */
export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const config = loadConfig({ dataDir, port: 0, ...options.config }, {});
  const db = openDatabase(databaseFile(dataDir), { onStatement: options.onStatement });
  const deps: Deps = {
    ...defaultDeps(db, config, { insurers: options.insurers ?? [], env: {} }),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const entry = options.webhooks?.entry ?? dispatcherEntry();
  // Without its compiled thread, the dispatcher would fall back to the main thread and the tests would not test the service's path.
  if (!options.webhooks?.entry && !existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first (npm test does).`);
  const app = await buildApp(deps, {
    logger: createLogger({ level: 'info', stream }),
    webhooks: {
      entry,
      extraCa: options.webhooks?.extraCa,
      // Retries at their exact delay, on the test's clock when it has one.
      inputs: {
        noJitter: true,
        hosts: options.webhooks?.hosts,
        clock: options.clock && 'buffer' in options.clock ? options.clock.buffer : undefined,
      },
    },
    sandboxMode: options.sandboxMode,
    sync: options.sync,
    network: options.network,
  });
  options.beforeListen?.(app);
  await app.listen({ host: options.listenHost ?? '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  return {
    app,
    deps,
    url,
    dataDir,
    logs,
    async createCabinet(name = 'Cabinet Test') {
      const email = `admin-${randomUUID()}@example.fr`;
      const { cabinet_id } = await initCabinet(deps, { cabinet: name, email, password: 'correct horse battery' });
      return cabinet_id;
    },
    createKey(cabinetId, input = {}) {
      return createApiKey(deps, cabinetId, {
        name: 'test key',
        environment: 'prod',
        scopes: [...SCOPE_NAMES],
        ...input,
      });
    },
    request(path, init) {
      return fetch(url + path, init);
    },
    withOtherConnection(run) {
      const other = new Database(databaseFile(dataDir));
      try {
        return run(other);
      } finally {
        other.close();
      }
    },
    async close() {
      await app.close();
      db.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
