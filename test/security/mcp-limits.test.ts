import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenResponseSchema } from '../../shared/oauth.js';
import { apiClient } from '../helpers/api.js';
import { postMcp, toolsCall } from '../helpers/mcp.js';
import { authorizeOverHttp, createUser, tokenRequest } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const LIMIT = 3;
// The limiter's windows follow the injected clock: nothing here depends on where the wall clock is in its minute.
const clock = testClock();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ clock, config: { rateLimitPerMinute: LIMIT } });
});
afterAll(() => server.close());

const whoami = (token: string) => postMcp(server, token, toolsCall('whoami'));

async function refresh(clientId: string, refreshToken: string) {
  const response = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  expect(response.status).toBe(200);
  return tokenResponseSchema.parse(await response.json());
}

describe('CWE-770 Allocation of resources without limits: the MCP endpoint’s limits cannot be multiplied', () => {
  it('counts requests per grant: refreshing the access token does not give a fresh budget', async () => {
    const user = await createUser(server);
    const { client, tokens } = await authorizeOverHttp(server, user);
    for (let i = 0; i < LIMIT; i++) expect((await whoami(tokens.access_token)).status).toBe(200);
    expect((await whoami(tokens.access_token)).status).toBe(429);

    // Each refresh gives a new access token of the same grant: still the same budget.
    let current = tokens;
    for (let i = 0; i < 3; i++) {
      current = await refresh(client.client_id, current.refresh_token);
      const refused = await whoami(current.access_token);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    }

    // Another consent (another grant) is another budget; the next window gives the grant its budget back.
    const other = await authorizeOverHttp(server, user);
    expect((await whoami(other.tokens.access_token)).status).toBe(200);
    clock.advance(60_000);
    expect((await whoami(current.access_token)).status).toBe(200);
  });

  it('refuses a JSON-RPC batch before any call in it runs, with a JSON-RPC error a client can read', async () => {
    clock.advance(60_000);
    const user = await createUser(server);
    const { tokens } = await authorizeOverHttp(server, user);
    const create = (id: number) =>
      toolsCall('create_opportunity', { title: `Lead ${id}`, product: 'auto', contact: { last_name: 'Batch' } }, id);

    for (const batch of [[create(1), create(2), create(3)], [create(4)]]) {
      clock.advance(60_000);
      const refused = await postMcp(server, tokens.access_token, batch);
      expect(refused.status).toBe(400);
      expect(refused.headers.get('content-type')).toContain('application/json');
      const body = (await refused.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(body.error.message).toMatch(/batches are not supported/);
      expect(body.error.message).toMatch(/one message per request/);
    }

    // Nothing in the batches ran: no opportunity exists.
    const api = apiClient(server, server.createKey(user.cabinetId).key);
    expect((await api.get('/opportunities')).body.count).toBe(0);
    // One message per request still works.
    expect((await postMcp(server, tokens.access_token, create(5))).status).toBe(200);
    expect((await api.get('/opportunities')).body.count).toBe(1);
  });
});
