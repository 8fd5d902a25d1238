import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../server/platform/logging.js';
import { buildHubApp } from '../../server/hub/app.js';
import { openHubDatabase, type HubDatabase } from '../../server/hub/database.js';
import { hubDeps, type HubDeps, type HubLimits } from '../../server/hub/deps.js';
import { createInvite, type InviteTarget } from '../../server/hub/pairing.js';
import type { Clock } from '../../server/deps.js';

export interface ListeningHub {
  app: FastifyInstance;
  deps: HubDeps;
  database: HubDatabase;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Its PostgreSQL database, for the hub's commands (--database-url). */
  databaseUrl: string;
  /** A pairing code: to register a cabinet (null) or to join one. */
  invite(target: InviteTarget): Promise<string>;
  close(): Promise<void>;
}

/** A hub app on a real port over a real PostgreSQL database (see test/helpers/postgres.ts). */
export async function startListeningHub(
  databaseUrl: string,
  options: { clock?: Clock; port?: number; limits?: Partial<HubLimits> } = {},
): Promise<ListeningHub> {
  const database = await openHubDatabase(databaseUrl);
  const deps = hubDeps(database, 'test', {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const app = await buildHubApp(deps, { logger: createLogger({ level: 'warn' }) });
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    deps,
    database,
    url: `http://127.0.0.1:${port}`,
    databaseUrl,
    invite: async (target) => (await createInvite(deps, target)).code,
    async close() {
      // Keep-alive sockets of this process's fetch (installs' long polls among them) would hold the close for their timeout.
      app.server.closeAllConnections();
      await app.close();
      await database.close();
    },
  };
}
