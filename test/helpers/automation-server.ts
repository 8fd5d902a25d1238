import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { sandboxInsurer } from './sandbox-insurer.js';
import { grantCredits } from '../../server/wallet/service.js';
import { consoleClient, type ConsoleClient } from './console.js';
import { createUser, type TestUser } from './oauth.js';
import { startTestServer, type TestServer } from './server.js';
import { createTestInsurer, type TestInsurer } from './test-insurer.js';

/** A cabinet of the automation server: its admin signed in to the console over HTTP. */
export interface AutomationCabinet {
  admin: ConsoleClient;
  user: TestUser;
}

/** What useAutomationServer gives a test file; server once its beforeAll has run. */
export interface AutomationServer {
  readonly server: TestServer;
  /** The scripted insurer "testco", its runs and scripts. */
  readonly insurer: TestInsurer;
  /** A new cabinet with `credits` and, unless told, testco's credentials saved. */
  cabinet(credits?: number, credentials?: boolean): Promise<AutomationCabinet>;
  /** A console pricing request to testco, auto, its postcode new at each call. */
  request(
    extra?: Record<string, unknown>,
    dicData?: Record<string, unknown>,
  ): { compagnie: string; produit: string; dicData: Record<string, unknown> } & Record<string, unknown>;
}

/**
 * The app for the console's automation routes over HTTP: the scripted insurer testco and the
 * sandbox portal's robot (short timeouts), started before the file's tests and closed after.
 */
export function useAutomationServer(): AutomationServer {
  const insurer = createTestInsurer();
  let server: TestServer | undefined;
  let portal = '';
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer({
      insurers: [
        insurer,
        sandboxInsurer({ portalUrl: () => portal, timeouts: { actionMs: 3_000, navigationMs: 8_000, downloadMs: 5_000 } }),
      ],
      config: { tarificationQuotaPerHour: 1000 },
    });
    portal = `${server.url}/sandbox/insurer`;
  });
  afterAll(() => server?.close());

  const app: AutomationServer = {
    get server() {
      if (!server) throw new Error('the app is started in beforeAll');
      return server;
    },
    insurer,
    async cabinet(credits = 100, credentials = true) {
      const user = await createUser(app.server, `Cabinet ${randomUUID().slice(0, 6)}`);
      if (credits > 0) grantCredits(app.server.deps, user.cabinetId, credits);
      if (credentials) setInsurerCredentials(app.server.deps, user.cabinetId, 'testco', { login: 'broker-42', password: 's3cret!' });
      return { admin: await consoleClient(app.server, user), user };
    },
    request(extra = {}, dicData = {}) {
      n += 1;
      return {
        compagnie: 'testco',
        produit: 'auto',
        dicData: { postcode: String(20000 + n), birth_date: '1984-03-09', formula: 'tiers', ...dicData },
        ...extra,
      };
    },
  };
  return app;
}
