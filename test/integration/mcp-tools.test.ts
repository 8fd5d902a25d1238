import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dryRunResultSchema, enqueuedSchema, JOB_STATUSES, jobSchema } from '../../shared/automation.js';
import { productListSchema, productSchemaDocument } from '../../shared/products.js';
import { comparisonDryRunSchema, comparisonEnqueuedSchema, comparisonSchema, riskSchemaDocument } from '../../shared/comparaisons.js';
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import { clientErasureSchema, clientSchema, OPPORTUNITY_STAGES, opportunitySchema } from '../../shared/crm.js';
import { devisSchema } from '../../shared/devis.js';
import { errorBodySchema } from '../../shared/errors.js';
import { devisPdfLinkSchema, mcpWhoamiSchema } from '../../shared/mcp.js';
import { pageSchema } from '../../shared/pagination.js';
import { MCP_SCOPES, type McpScope } from '../../shared/oauth.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { createAccessTokenForUser } from '../../server/oauth/token.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { initCabinet, setLlmDataSharing } from '../../server/tenancy/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { toolsCall } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer, gated, succeed, TEST_AUTO_LINE, withHumanStep, type TestInsurer } from '../helpers/test-insurer.js';

const CONSOLE_ORIGIN = 'http://console.example';
const ALL_TOOLS = [
  'whoami',
  'list_products',
  'get_product_schema',
  'list_opportunities',
  'get_opportunity',
  'create_opportunity',
  'update_opportunity_stage',
  'list_clients',
  'create_client',
  'update_client',
  'erase_client',
  'create_devis',
  'get_devis',
  'price_quote',
  'get_job',
  'answer_job_step',
  'cancel_job',
  'get_risk_schema',
  'compare_quotes',
  'get_comparison',
  'get_devis_pdf_link',
];

/** What each tool answers, as the REST API's schemas (shared/) say: every successful call's structuredContent must parse. */
const RESULT_SCHEMAS: Record<string, z.ZodType> = {
  whoami: mcpWhoamiSchema,
  list_products: productListSchema,
  get_product_schema: productSchemaDocument,
  list_opportunities: pageSchema(opportunitySchema, 'OpportunityPage'),
  get_opportunity: opportunitySchema,
  create_opportunity: opportunitySchema,
  update_opportunity_stage: opportunitySchema,
  list_clients: pageSchema(clientSchema, 'ClientPage'),
  create_client: clientSchema,
  update_client: clientSchema,
  erase_client: clientErasureSchema,
  create_devis: devisSchema,
  get_devis: devisSchema,
  price_quote: z.union([dryRunResultSchema, enqueuedSchema]),
  get_job: jobSchema,
  answer_job_step: jobSchema,
  cancel_job: jobSchema,
  get_risk_schema: riskSchemaDocument,
  compare_quotes: z.union([comparisonDryRunSchema, comparisonEnqueuedSchema]),
  get_comparison: comparisonSchema,
  get_devis_pdf_link: devisPdfLinkSchema,
};

let server: TestServer;
let testco: TestInsurer;

beforeAll(async () => {
  // It prices the car line from the common risk too: compare_quotes can name it.
  testco = Object.assign(createTestInsurer(), { risks: TEST_AUTO_LINE });
  let portal = '';
  const sandbox = sandboxInsurer({ portalUrl: () => portal });
  server = await startTestServer({
    insurers: [sandbox, testco],
    // One robot at a time: a gated test job holds the slot, so a sandbox job stays pending (no browser starts).
    config: { corsOrigins: [CONSOLE_ORIGIN], workerConcurrency: 1, tarificationQuotaPerHour: 1000 },
  });
  portal = `${server.url}/sandbox/insurer`;
});
afterAll(() => server?.close());

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

interface Cabinet {
  id: string;
  userId: string;
  email: string;
  api: ReturnType<typeof apiClient>;
  token(scopes?: readonly McpScope[], clientName?: string): string;
}

async function cabinet(name = 'Cabinet MCP'): Promise<Cabinet> {
  const email = `admin-${randomUUID()}@example.fr`;
  const { cabinet_id, user_id } = await initCabinet(server.deps, { cabinet: name, email, password: 'correct horse battery' });
  return {
    id: cabinet_id,
    userId: user_id,
    email,
    api: apiClient(server, server.createKey(cabinet_id).key),
    token: (scopes = MCP_SCOPES, clientName = 'Test Assistant') =>
      createAccessTokenForUser(server.deps, { cabinetId: cabinet_id, userId: user_id, clientName, scopes }).access_token,
  };
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'courtier-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolOutcome {
  isError: boolean;
  json: Record<string, unknown>;
  structured: unknown;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]?.type).toBe('text');
  const json = JSON.parse(content[0]?.text ?? 'null') as Record<string, unknown>;
  // An error's body is its text only: structuredContent would have to match the tool's outputSchema.
  if (result.isError === true) expect(result.structuredContent).toBeUndefined();
  return { isError: result.isError === true, json, structured: result.structuredContent };
}

async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const outcome = await call(client, name, args);
  expect(outcome.isError, JSON.stringify(outcome.json)).toBe(false);
  expect(outcome.structured).toEqual(outcome.json);
  const schema = RESULT_SCHEMAS[name];
  if (!schema) throw new Error(`No result schema for ${name} in this test`);
  schema.parse(outcome.structured);
  return outcome.json;
}

/** A raw JSON-RPC POST, as a client without the SDK would send it. */
function post(body: unknown, headers: Record<string, string> = {}, raw?: string): Promise<Response> {
  return server.request('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: raw ?? JSON.stringify(body),
  });
}

const ALL_SCOPES = MCP_SCOPES.join(' ');
const metadataUrl = () => `${server.url}/.well-known/oauth-protected-resource/mcp`;

describe('authentication', () => {
  it('401 missing_credentials without a token, with the challenge that leads to the metadata', async () => {
    const attempts: Record<string, string>[] = [{}, { Authorization: 'Basic dXNlcjpwdw==' }, { 'X-API-Key': 'svc_prod_x' }];
    for (const headers of attempts) {
      const res = await post(toolsCall('whoami'), headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}", scope="${ALL_SCOPES}"`);
      const body = errorBodySchema.parse(await res.json());
      expect(body.error).toBe('missing_credentials');
      expect(body.request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  it('401 invalid_token for an unknown token, with error="invalid_token" in the challenge', async () => {
    const { id } = await cabinet();
    // An API key is not an access token.
    for (const token of ['svc_mcp_at_unknown', server.createKey(id).key]) {
      const res = await post(toolsCall('whoami'), { Authorization: `Bearer ${token}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${metadataUrl()}", scope="${ALL_SCOPES}", error="invalid_token", error_description="The access token is unknown, expired or revoked"`,
      );
      expect(errorBodySchema.parse(await res.json()).error).toBe('invalid_token');
    }
  });

  it('the challenge is readable by an allowed browser origin (CORS exposes WWW-Authenticate)', async () => {
    const res = await post(toolsCall('whoami'), { Origin: CONSOLE_ORIGIN });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    expect(res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('names the public base URL the client used in resource_metadata', async () => {
    const port = new URL(server.url).port;
    const res = await fetch(`http://localhost:${port}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(
      `resource_metadata="http://localhost:${port}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});

describe('HTTP rules', () => {
  it('GET, DELETE and other methods are 405 with Allow: POST and our error body', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS']) {
      const res = await server.request('/mcp', { method, headers: { Accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      if (method === 'HEAD') continue;
      const body = errorBodySchema.parse(await res.json());
      expect(body).toMatchObject({ error: 'method_not_allowed', request_id: res.headers.get('x-request-id') });
    }
  });

  it('answers the CORS preflight of an allowed origin', async () => {
    const res = await server.request('/mcp', {
      method: 'OPTIONS',
      headers: {
        Origin: CONSOLE_ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    expect(res.headers.get('access-control-allow-headers')).toContain('MCP-Protocol-Version');
  });

  it('refuses a browser request from another origin: 403 origin_not_allowed', async () => {
    const { token } = await cabinet();
    const res = await post(toolsCall('whoami'), { Authorization: `Bearer ${token()}`, Origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(errorBodySchema.parse(await res.json()).error).toBe('origin_not_allowed');
  });

  it('answers a malformed or missing body with a clean 4xx, never 500', async () => {
    const auth = { Authorization: `Bearer ${(await cabinet()).token()}` };
    const bad = await post(undefined, auth, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(bad.status).toBe(400);
    expect(errorBodySchema.parse(await bad.json()).error).toBe('invalid_json');
    const empty = await post(undefined, auth, '');
    expect(empty.status).toBe(400);
    expect(errorBodySchema.parse(await empty.json()).error).toBe('invalid_json');
    const scalar = await post(42, auth);
    expect(scalar.status).toBe(400);
    const text = await server.request('/mcp', { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'hello' });
    expect(text.status).toBe(415);
    expect(errorBodySchema.parse(await text.json()).error).toBe('unsupported_media_type');
    // Valid JSON that is not JSON-RPC: the SDK's own 400, as JSON-RPC.
    const notRpc = await post({ hello: 'world' }, auth);
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('keeps the Streamable HTTP transport’s checks: Accept with both types (406), notifications 202 with no body', async () => {
    const auth = { Authorization: `Bearer ${(await cabinet()).token()}` };
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      const res = await post(toolsCall('whoami'), { ...auth, Accept: accept });
      expect(res.status, accept).toBe(406);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
      });
    }
    const withParameters = await post(toolsCall('whoami'), { ...auth, Accept: 'application/json;q=0.9, text/event-stream;q=0.8' });
    expect(withParameters.status).toBe(200);
    for (const message of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      { jsonrpc: '2.0', id: 7, result: {} },
    ]) {
      const res = await post(message, auth);
      expect(res.status, JSON.stringify(message)).toBe(202);
      expect(await res.text()).toBe('');
    }
    // A request with an id of either kind gets its answer under that id.
    for (const id of [0, 'a-string-id']) {
      const res = await post(toolsCall('whoami', {}, id as number), auth);
      expect(((await res.json()) as { id: unknown }).id).toBe(id);
    }
  });

  it('answers requests of different connections that share an id, at the same time, each with its own token', async () => {
    // One SDK server answers every request: the transport gives each its own id and gives the client's back.
    const [alpha, beta] = [await cabinet('Cabinet Alpha'), await cabinet('Cabinet Beta')];
    const readOnly = beta.token(['crm:read']);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const mine = i % 2 === 0;
        const message = i % 4 < 2 ? toolsCall('whoami', {}, 1) : { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        return post(message, { Authorization: `Bearer ${mine ? alpha.token() : readOnly}` }).then(async (res) => ({
          mine,
          list: 'method' in message && message.method === 'tools/list',
          status: res.status,
          body: (await res.json()) as { id: unknown; result: Record<string, unknown> },
        }));
      }),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.id).toBe(1);
      if (answer.list) {
        const names = (answer.body.result.tools as { name: string }[]).map((t) => t.name);
        expect(names.includes('create_opportunity')).toBe(answer.mine);
      } else {
        const whoami = JSON.parse((answer.body.result.content as { text: string }[])[0]?.text ?? '') as { cabinet: { name: string } };
        expect(whoami.cabinet.name).toBe(answer.mine ? 'Cabinet Alpha' : 'Cabinet Beta');
      }
    }
  });

  it('keeps X-Request-Id and the per-request log line on MCP responses, and allowed CORS headers', async () => {
    const token = (await cabinet()).token();
    const res = await post(toolsCall('whoami'), { Authorization: `Bearer ${token}`, Origin: CONSOLE_ORIGIN });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('access-control-allow-origin')).toBe(CONSOLE_ORIGIN);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as { result: { content: { text: string }[] } };
    expect(JSON.parse(body.result.content[0]?.text ?? '')).toMatchObject({ cabinet: { name: 'Cabinet MCP' } });
    // The log line is written when the response finishes, which may be just after the client has it.
    const logLine = () =>
      server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === requestId && l.msg === 'request');
    for (let i = 0; i < 100 && !logLine(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(logLine()).toMatchObject({ method: 'POST', url: '/mcp', status: 200 });
    expect(server.logs.join('\n')).not.toContain(token);
  });
});

describe('protocol', () => {
  it('initializes over the official client: stateless, protocol 2025-11-25, tools only', async () => {
    const { token } = await cabinet();
    const client = await connect(token());
    expect(client.getServerVersion()).toMatchObject({ name: 'courtier' });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    expect(client.getInstructions()).toContain('dry_run');
    const raw = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      {
        Authorization: `Bearer ${token()}`,
      },
    );
    expect(raw.headers.get('mcp-session-id')).toBeNull();
    expect(((await raw.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-11-25');
  });

  it('a 2026-07-28 client: initialize negotiates down to 2025-11-25; the SDK refuses the 2026-07-28 header', async () => {
    const auth = { Authorization: `Bearer ${(await cabinet()).token()}` };
    const init = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'future', version: '2' } },
      },
      auth,
    );
    expect(init.status).toBe(200);
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-11-25');
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...auth, 'MCP-Protocol-Version': '2026-07-28' });
    expect(list.status).toBe(400);
    expect(await list.json()).toMatchObject({ error: { message: expect.stringContaining('Unsupported protocol version: 2026-07-28') } });
    const current = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...auth, 'MCP-Protocol-Version': '2025-11-25' });
    expect(current.status).toBe(200);
  });
  it('a 2.x client (2026-07-28 era) in auto mode falls back to 2025-11-25; pinned to 2026-07-28 it cannot connect', async () => {
    const token = (await cabinet()).token();
    const url = new URL(`${server.url}/mcp`);
    const probes: number[] = [];
    const auto = new ClientV2({ name: 'v2-auto', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } });
    const autoTransport = new StreamableHTTPClientTransportV2(url, {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (new Headers(init?.headers).get('mcp-protocol-version') === '2026-07-28') probes.push(res.status);
        return res;
      },
    });
    try {
      await auto.connect(autoTransport);
      // The server/discover probe is refused by the SDK 1.x transport; the client then runs initialize.
      expect(probes).toEqual([400]);
      expect(autoTransport.protocolVersion).toBe('2025-11-25');
      const result = await auto.callTool({ name: 'whoami', arguments: {} });
      expect(result.isError).not.toBe(true);
    } finally {
      await auto.close();
    }
    const pinned = new ClientV2({ name: 'v2-pinned', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const pinnedTransport = new StreamableHTTPClientTransportV2(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await expect(pinned.connect(pinnedTransport)).rejects.toThrow(/2026-07-28/);
    await pinned.close().catch(() => undefined);
  });
});

describe('scopes', () => {
  it('tools/list shows every tool to a full token, with schemas and annotations', async () => {
    const { token } = await cabinet();
    const { tools } = await (await connect(token())).listTools();
    expect(tools.map((t) => t.name)).toEqual(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema).not.toHaveProperty('$ref');
      expect(tool.description?.length).toBeGreaterThan(60);
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
    }
    const create = tools.find((t) => t.name === 'create_opportunity');
    expect(create?.inputSchema.required).toEqual(['title', 'product', 'contact']);
    expect(create?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(tools.find((t) => t.name === 'price_quote')?.annotations).toMatchObject({ openWorldHint: true });
    expect(tools.find((t) => t.name === 'cancel_job')?.annotations).toMatchObject({ destructiveHint: true });
    expect(tools.find((t) => t.name === 'erase_client')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(tools.find((t) => t.name === 'update_client')?.inputSchema.required).toEqual(['client_id']);
  });

  it('tools/list gives every tool an outputSchema made from the REST response schemas, and descriptions list enum values from the contract', async () => {
    const { token } = await cabinet();
    const { tools } = await (await connect(token())).listTools();
    expect(Object.keys(RESULT_SCHEMAS)).toEqual(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.outputSchema, tool.name).not.toHaveProperty('$ref');
    }
    const byName = (name: string) => tools.find((t) => t.name === name);
    const outputOf = (name: string): unknown => byName(name)?.outputSchema;
    const jobOutput = outputOf('get_job') as { properties: { status: { enum: string[] } }; required: string[] };
    expect(jobOutput.properties.status.enum).toEqual([...JOB_STATUSES]);
    expect(jobOutput.required).toEqual(Object.keys(jobSchema.shape));
    expect(outputOf('cancel_job')).toEqual(outputOf('get_job'));
    const page = outputOf('list_opportunities') as {
      required: string[];
      $defs: { Opportunity: { properties: { stage: { enum: string[] } } } };
    };
    expect(page.required).toEqual(['data', 'next_cursor', 'has_more', 'count']);
    expect(page.$defs.Opportunity.properties.stage.enum).toEqual([...OPPORTUNITY_STAGES]);
    // A dry run or an enqueued job: an object either way.
    expect((outputOf('price_quote') as { anyOf: unknown[] }).anyOf).toHaveLength(2);
    for (const status of JOB_STATUSES) expect(byName('get_job')?.description).toContain(status);
    for (const stage of OPPORTUNITY_STAGES) expect(byName('update_opportunity_stage')?.description).toContain(stage);
  });

  it('tools/list shows a crm:read token only whoami and the CRM reading tools', async () => {
    const { token } = await cabinet();
    const { tools } = await (await connect(token(['crm:read']))).listTools();
    expect(tools.map((t) => t.name)).toEqual(['whoami', 'list_opportunities', 'get_opportunity', 'list_clients']);
  });

  it('a tools/call beyond the token’s scopes is 403 insufficient_scope; a batch is refused whatever it holds', async () => {
    const { token } = await cabinet();
    const readOnly = { Authorization: `Bearer ${token(['crm:read'])}` };
    const res = await post(toolsCall('create_opportunity', { title: 'x' }), readOnly);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="crm:write", resource_metadata="${metadataUrl()}"`,
    );
    const body = errorBodySchema.parse(await res.json());
    expect(body).toMatchObject({ error: 'insufficient_scope', details: { required_scope: 'crm:write' } });
    const batch = await post([toolsCall('whoami', {}, 1), toolsCall('price_quote', {}, 2)], readOnly);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    // Changing or erasing a client needs crm:write too.
    for (const name of ['update_client', 'erase_client']) {
      const refused = await post(toolsCall(name, { client_id: randomUUID(), first_name: 'X' }), readOnly);
      expect(refused.status, name).toBe(403);
      expect(errorBodySchema.parse(await refused.json())).toMatchObject({
        error: 'insufficient_scope',
        details: { required_scope: 'crm:write' },
      });
    }
    // What the token may do still works.
    expect((await post(toolsCall('list_clients'), readOnly)).status).toBe(200);
  });

  it('whoami needs no scope beyond a valid token and says who the connection acts for', async () => {
    const { id, userId, email, token } = await cabinet('Cabinet Qui');
    const client = await connect(token(['devis:read'], 'Claude Desktop'));
    const me = await ok(client, 'whoami');
    expect(me).toMatchObject({
      cabinet: { id, name: 'Cabinet Qui' },
      user: { id: userId, email },
      client: { client_name: 'Claude Desktop' },
      scopes: ['devis:read'],
    });
    expect(typeof (me.client as { client_id: unknown }).client_id).toBe('string');
    const expires = Date.parse(String(me.token_expires_at));
    expect(expires).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 61 * 60_000);
  });
});

describe('CRM tools', () => {
  it('create_opportunity, list, get and update_opportunity_stage act through the same services as REST', async () => {
    const { id, api, token } = await cabinet();
    setLlmDataSharing(server.deps, id, true);
    const client = await connect(token());
    const created = opportunitySchema.parse(
      await ok(client, 'create_opportunity', {
        title: 'Flotte auto',
        product: 'auto',
        contact: { last_name: 'Durand', email: 'durand@example.fr' },
        expected_value_eur: 1200.5,
      }),
    );
    expect(created).toMatchObject({ created_via: 'mcp', source: 'mcp', stage: 'new', contact: { last_name: 'Durand' } });

    const rest = await api.get(`/opportunities/${created.id}`);
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual(created);
    expect((await api.get('/opportunities')).body.data).toEqual([created]);

    const listed = await ok(client, 'list_opportunities', { stage: 'new', limit: 10 });
    expect(listed).toMatchObject({ count: 1, has_more: false, next_cursor: null, data: [created] });
    expect(await ok(client, 'get_opportunity', { opportunity_id: created.id })).toEqual(created);

    const won = await ok(client, 'update_opportunity_stage', { opportunity_id: created.id, stage: 'won' });
    expect(won.stage).toBe('won');
    expect((await api.get(`/opportunities/${created.id}`)).body.stage).toBe('won');

    // A service error is a tool result with isError, never an HTTP error.
    const refused = await call(client, 'update_opportunity_stage', { opportunity_id: created.id, stage: 'new' });
    expect(refused).toMatchObject({ isError: true, json: { error: 'invalid_stage_transition', details: { from: 'won', to: 'new' } } });
    expect(String(refused.json.message)).toContain('reopen');
    const reopened = await ok(client, 'update_opportunity_stage', { opportunity_id: created.id, stage: 'qualified', reopen: true });
    expect(reopened.stage).toBe('qualified');

    const missing = await call(client, 'get_opportunity', { opportunity_id: randomUUID() });
    expect(missing).toMatchObject({ isError: true, json: { error: 'not_found' } });
  });

  it('invalid arguments come back as a validation_error result listing each problem', async () => {
    const { api, token } = await cabinet();
    const client = await connect(token());
    const bad = await call(client, 'create_opportunity', { title: '', product: 'auto', contact: {}, colour: 'red' });
    expect(bad.isError).toBe(true);
    expect(bad.json.error).toBe('validation_error');
    const paths = (bad.json.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['arguments', 'arguments.contact.last_name', 'arguments.title']);
    expect((await call(client, 'get_devis', { devis_id: 'nope' })).json.error).toBe('validation_error');
    expect((await api.get('/opportunities')).body.count).toBe(0);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool no_such_tool/);
  });

  it('a tools/call outside CallToolRequestSchema is a JSON-RPC InvalidParams error, and runs nothing', async () => {
    const { api, token } = await cabinet();
    const auth = { Authorization: `Bearer ${token()}` };
    const malformed = [
      undefined,
      { name: 42, arguments: {} },
      { arguments: { title: 'x' } },
      { name: 'create_opportunity', arguments: 'title=x' },
      { name: 'create_opportunity', arguments: ['title', 'Flotte'] },
    ];
    for (const [index, params] of malformed.entries()) {
      const res = await post({ jsonrpc: '2.0', id: index + 1, method: 'tools/call', params }, auth);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
      expect(body.id).toBe(index + 1);
      expect(body.error?.code).toBe(-32602);
      expect(body.error?.message).toMatch(/Invalid tools\/call request/);
    }
    expect((await api.get('/opportunities')).body.count).toBe(0);
  });

  it('create_client and list_clients; personal data is masked unless the cabinet shares it with LLMs', async () => {
    const { id, api, token } = await cabinet();
    const client = await connect(token());
    const person = {
      last_name: 'Martin',
      first_name: 'Claire',
      email: 'claire.martin@example.fr',
      phone: '06 12 34 56 78',
      birth_date: '1985-04-02',
    };

    const masked = clientSchema.parse(await ok(client, 'create_client', person));
    expect(masked).toMatchObject({
      type: 'person',
      last_name: 'M***',
      first_name: 'C***',
      email: 'c***',
      phone: '0***',
      birth_date: '1***',
    });
    // Stored in clear: REST (an API key, not an assistant) sees the real data.
    const rest = await api.get(`/clients/${masked.id}`);
    expect(rest.body).toMatchObject({ ...person, id: masked.id });
    const company = await ok(client, 'create_client', { type: 'company', company_name: 'Boulangerie Martin', siret: '73282932000074' });
    expect(company).toMatchObject({ company_name: 'Boulangerie Martin', siret: '73282932000074' });

    const listedMasked = await ok(client, 'list_clients', { type: 'person' });
    expect(listedMasked.data).toEqual([expect.objectContaining({ id: masked.id, last_name: 'M***' })]);

    // Read at call time: switching it on takes effect on the next call.
    setLlmDataSharing(server.deps, id, true);
    const listedClear = await ok(client, 'list_clients', { type: 'person' });
    expect(listedClear.data).toEqual([rest.body]);
    setLlmDataSharing(server.deps, id, false);
    expect(((await ok(client, 'list_clients', { limit: 1 })).data as { company_name: string }[])[0]?.company_name).toBe(
      'Boulangerie Martin',
    );
    expect(((await ok(client, 'list_clients', { type: 'person' })).data as { last_name: string }[])[0]?.last_name).toBe('M***');
    // Anything stored but 1 reads as off, through the tools too (a privacy switch fails closed).
    for (const stored of [2, 'yes']) {
      server.deps.db.sqlite.prepare('UPDATE cabinets SET llm_data_sharing = ? WHERE id = ?').run(stored, id);
      expect(((await ok(client, 'list_clients', { type: 'person' })).data as { last_name: string }[])[0]?.last_name).toBe('M***');
    }
  });
});

describe('client changes and erasure tools', () => {
  it('update_client changes a client through the same service as PATCH, masked unless the cabinet shares personal data', async () => {
    const { id, api, token } = await cabinet();
    const client = await connect(token());
    const created = await api.post('/clients', { last_name: 'Martin', first_name: 'Claire', email: 'claire.martin@example.fr' });
    const clientId = String(created.body.id);

    const masked = clientSchema.parse(
      await ok(client, 'update_client', { client_id: clientId, email: 'c.martin@example.fr', phone: '06 98 76 54 32', first_name: null }),
    );
    expect(masked).toMatchObject({ id: clientId, last_name: 'M***', first_name: null, email: 'c***', phone: '0***' });
    const rest = await api.get(`/clients/${clientId}`);
    expect(rest.body).toMatchObject({ last_name: 'Martin', first_name: null, email: 'c.martin@example.fr', phone: '06 98 76 54 32' });

    setLlmDataSharing(server.deps, id, true);
    expect(
      await ok(client, 'update_client', { client_id: clientId, address: { line1: '5 rue du Port', postcode: '13002', city: 'Marseille' } }),
    ).toEqual((await api.get(`/clients/${clientId}`)).body);

    // Checked as PATCH is: at least one field, the field rules, the type's rules.
    const none = await call(client, 'update_client', { client_id: clientId });
    expect(none).toMatchObject({ isError: true, json: { error: 'validation_error' } });
    const badEmail = await call(client, 'update_client', { client_id: clientId, email: 'nope' });
    expect((badEmail.json.details as { path: string }[]).map((d) => d.path)).toEqual(['arguments.email']);
    const noName = await call(client, 'update_client', { client_id: clientId, last_name: null });
    expect(noName).toMatchObject({ isError: true, json: { error: 'validation_error', details: [{ path: 'body.last_name' }] } });
    expect((await api.get(`/clients/${clientId}`)).body.last_name).toBe('Martin');
    expect(await call(client, 'update_client', { client_id: randomUUID(), first_name: 'X' })).toMatchObject({
      isError: true,
      json: { error: 'not_found' },
    });
  });

  it('erase_client erases through the same service as DELETE, answers {client_id, erased_at} again when repeated, and the client is gone', async () => {
    const { api, token } = await cabinet();
    const client = await connect(token());
    const customer = clientSchema.parse(await ok(client, 'create_client', { last_name: 'Lefèvre', email: 'lefevre@example.fr' }));
    const draft = await ok(client, 'create_devis', { client_id: customer.id, compagnie: 'sandbox', produit: 'auto' });

    const erased = clientErasureSchema.strict().parse(await ok(client, 'erase_client', { client_id: customer.id }));
    expect(erased.client_id).toBe(customer.id);
    expect(await ok(client, 'erase_client', { client_id: customer.id })).toEqual(erased);

    expect((await api.get(`/clients/${customer.id}`)).status).toBe(404);
    expect((await ok(client, 'list_clients')).data).toEqual([]);
    expect(await call(client, 'update_client', { client_id: customer.id, first_name: 'X' })).toMatchObject({
      isError: true,
      json: { error: 'not_found' },
    });
    const refused = await call(client, 'create_devis', { client_id: customer.id, compagnie: 'sandbox', produit: 'auto' });
    expect(refused).toMatchObject({ isError: true, json: { error: 'validation_error', details: [{ path: 'body.client_id' }] } });
    expect((await ok(client, 'get_devis', { devis_id: draft.id })).client_id).toBe(customer.id);
    expect(await call(client, 'erase_client', { client_id: randomUUID() })).toMatchObject({ isError: true, json: { error: 'not_found' } });
  });
});

describe('quotes and pricing tools', () => {
  it('list_products and get_product_schema give the codes and the dicData a product needs', async () => {
    const { token } = await cabinet();
    const client = await connect(token());
    const products = (await ok(client, 'list_products')).data as { code: string; insurers: { code: string }[] }[];
    expect(products.find((p) => p.code === 'auto')?.insurers.map((i) => i.code)).toEqual(['sandbox', 'testco']);
    const schema = await ok(client, 'get_product_schema', { produit: 'auto', compagnie: 'sandbox' });
    expect(schema).toMatchObject({ produit: 'auto', compagnie: 'sandbox', kind: 'quote', cost_credits: 10 });
    expect(schema.required).toContain('insured_name');
    expect((await call(client, 'get_product_schema', { produit: 'moto', compagnie: 'sandbox' })).json.error).toBe('unknown_product');
  });

  it('create_devis and get_devis; a draft has no PDF link yet', async () => {
    const { id, api, token } = await cabinet();
    setLlmDataSharing(server.deps, id, true);
    const client = await connect(token());
    const customer = await ok(client, 'create_client', { last_name: 'Petit' });
    const draft = devisSchema.parse(
      await ok(client, 'create_devis', { client_id: customer.id, compagnie: 'sandbox', produit: 'auto', dicData: { postcode: '69003' } }),
    );
    expect(draft).toMatchObject({ status: 'draft', client_id: customer.id, compagnie: 'sandbox', produit: 'auto', pdf_available: false });
    expect((await api.get(`/devis/${draft.id}`)).body).toEqual(draft);
    expect(await ok(client, 'get_devis', { devis_id: draft.id })).toEqual(draft);
    expect(await call(client, 'get_devis_pdf_link', { devis_id: draft.id })).toMatchObject({
      isError: true,
      json: { error: 'pdf_not_available' },
    });
  });

  it('price_quote dry_run checks and spends nothing', async () => {
    const { id, api, token } = await cabinet();
    grantCredits(server.deps, id, 100);
    const client = await connect(token());
    const dry = await ok(client, 'price_quote', {
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: { insured_name: 'Jean Dupont' },
      dry_run: true,
    });
    expect(dry).toMatchObject({
      job_id: null,
      status: 'dry_run_ok',
      credits_consumed: 0,
      validation: { schema_ok: false, credentials_configured: false, would_cost_credits: 10 },
    });
    expect((dry.validation as { missing_required_fields: string[] }).missing_required_fields).toContain('driver_birth_date');
    expect(creditBalance(server.deps, id)).toBe(100);
    expect((await api.get('/automation/jobs')).body.count).toBe(0);
    // The real thing needs credentials: a service error, as a result.
    const refused = await call(client, 'price_quote', { compagnie: 'sandbox', produit: 'auto', dicData: { insured_name: 'x' } });
    expect(refused).toMatchObject({ isError: true, json: { error: 'validation_error' } });
  });

  it('price_quote enqueues real jobs (sandbox and a test insurer); get_job follows them and cancel_job stops them', async () => {
    const { id, api, token } = await cabinet();
    grantCredits(server.deps, id, 100);
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo', password: 'demo' });
    setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-42', password: 's3cret!' });
    const client = await connect(token());

    // A test job that holds the only robot slot until cancelled.
    const gate = gated();
    testco.queue(gate.script);
    const held = await ok(client, 'price_quote', {
      compagnie: 'testco',
      produit: 'auto',
      dicData: { postcode: '75001', birth_date: '1984-03-09' },
    });
    expect(held).toMatchObject({ status: 'pending', poll_url: `/api/v1/public/automation/jobs/${String(held.job_id)}` });
    await gate.entered;

    const example = (await ok(client, 'get_product_schema', { produit: 'auto', compagnie: 'sandbox' })).example as Record<string, unknown>;
    const enqueued = await ok(client, 'price_quote', { compagnie: 'sandbox', produit: 'auto', dicData: example });
    expect(enqueued.status).toBe('pending');
    expect(creditBalance(server.deps, id)).toBe(80);

    const sandboxJob = jobSchema.parse(await ok(client, 'get_job', { job_id: enqueued.job_id }));
    expect(sandboxJob).toMatchObject({
      status: 'pending',
      compagnie: 'sandbox',
      environment: 'prod',
      ran_on: 'sandbox',
      credits_consumed: 10,
    });
    expect((await api.get(`/automation/jobs/${sandboxJob.job_id}`)).body).toEqual(sandboxJob);
    expect((await ok(client, 'get_job', { job_id: held.job_id })).status).toBe('running');

    // Pending: cancelled and refunded, no robot to stop.
    expect(await ok(client, 'cancel_job', { job_id: sandboxJob.job_id })).toMatchObject({ status: 'cancelled', credits_consumed: 0 });
    expect((await api.get(`/automation/jobs/${sandboxJob.job_id}`)).body.status).toBe('cancelled');
    // Running: the robot is aborted, as the REST route does.
    expect(await ok(client, 'cancel_job', { job_id: held.job_id })).toMatchObject({ status: 'cancelled' });
    expect(testco.runs.at(-1)?.signal.aborted).toBe(true);
    expect(creditBalance(server.deps, id)).toBe(100);
    // Again: returned as is.
    expect((await ok(client, 'cancel_job', { job_id: held.job_id })).status).toBe('cancelled');
    expect((await call(client, 'get_job', { job_id: randomUUID() })).json.error).toBe('not_found');
    await server.app.robotWorker.idle();
  });

  it('compare_quotes prices one risk at the insurers asked, get_comparison follows it; a risk off the model is a validation error naming the field', async () => {
    const { id, token } = await cabinet();
    grantCredits(server.deps, id, 100);
    setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-7', password: 's3cret!' });
    const client = await connect(token());
    const model = riskSchemaDocument.parse(await ok(client, 'get_risk_schema', { ligne: 'auto' }));
    expect(model.compagnies.map((c) => c.compagnie)).toEqual(['sandbox', 'testco']);

    // A dry run: testco would run; the sandbox, with no login in this cabinet, is left out.
    const dry = comparisonDryRunSchema.parse(await ok(client, 'compare_quotes', { ligne: 'auto', risque: model.example, dry_run: true }));
    expect(dry.compagnies.map((c) => [c.compagnie, c.would_run, c.raison])).toEqual([
      ['testco', true, null],
      ['sandbox', false, 'insurer_credentials_missing'],
    ]);
    const bad = await call(client, 'compare_quotes', { ligne: 'auto', risque: { ...RISK_EXAMPLES.auto, conducteur: { nom: 'Martin' } } });
    expect(bad).toMatchObject({ isError: true, json: { error: 'validation_error' } });
    expect(JSON.stringify(bad.json)).toContain('arguments.risque.conducteur.date_naissance');
    expect(creditBalance(server.deps, id)).toBe(100);

    const started = comparisonEnqueuedSchema.parse(
      await ok(client, 'compare_quotes', { ligne: 'auto', risque: model.example, compagnies: ['testco'], idempotency_key: 'cmp-1' }),
    );
    expect(started.jobs.map((j) => j.compagnie)).toEqual(['testco']);
    await server.app.robotWorker.idle();
    await expect
      .poll(async () => comparisonSchema.parse(await ok(client, 'get_comparison', { comparaison_id: started.comparaison_id })).status)
      .toBe('completed');
    const done = comparisonSchema.parse(await ok(client, 'get_comparison', { comparaison_id: started.comparaison_id }));
    expect(done.resultats[0]).toMatchObject({
      compagnie: 'testco',
      tarif_eur: 432.1,
      offres: [{ formule: 'tarif', prime_annuelle_eur: 432.1 }],
    });
    expect(creditBalance(server.deps, id)).toBe(90);
  });

  it('answer_job_step answers each kind of step a job waits for; an answer that does not fit leaves the job waiting', async () => {
    const { id, token } = await cabinet();
    grantCredits(server.deps, id, 100);
    setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-9', password: 's3cret!' });
    // The robot puts the answer in the pending conditions, which only a cabinet that shares personal data shows.
    setLlmDataSharing(server.deps, id, true);
    const client = await connect(token());
    const choices = [
      { value: 'garage', label: 'Garage' },
      { value: 'street', label: 'Rue' },
    ];
    const cases = [
      {
        step: { kind: 'otp', channel: 'app', prompt: 'Authenticator code' },
        wrong: { approved: true },
        right: { code: '123456' },
        got: '123456',
      },
      { step: { kind: 'app_approval', prompt: 'Approve in the app' }, wrong: { code: '1' }, right: { approved: true }, got: 'true' },
      { step: { kind: 'question', prompt: 'Parking?', choices }, wrong: { answer: 'roof' }, right: { answer: 'street' }, got: 'street' },
    ] as const;
    for (const [index, { step, wrong, right, got }] of cases.entries()) {
      testco.queue(withHumanStep(step));
      const { job_id } = await ok(client, 'price_quote', {
        compagnie: 'testco',
        produit: 'auto',
        dicData: { postcode: String(64000 + index), birth_date: '1984-03-09' },
      });
      server.app.robotWorker.tick();
      let waiting = jobSchema.parse(await ok(client, 'get_job', { job_id }));
      for (let i = 0; i < 500 && waiting.status !== 'mfa_required'; i++) {
        await new Promise((r) => setImmediate(r));
        waiting = jobSchema.parse(await ok(client, 'get_job', { job_id }));
      }
      expect(waiting.mfa?.kind).toBe(step.kind);
      expect((await call(client, 'answer_job_step', { job_id, ...wrong })).json.error).toBe('mfa_answer_mismatch');
      expect((await call(client, 'answer_job_step', { job_id })).json.error).toBe('mfa_answer_mismatch');
      expect(jobSchema.parse(await ok(client, 'get_job', { job_id }))).toEqual(waiting);
      expect((await ok(client, 'answer_job_step', { job_id, ...right })).status).toBe('running');
      await server.app.robotWorker.idle();
      expect(await ok(client, 'get_job', { job_id })).toMatchObject({ status: 'completed', result: { suspens: `answer: ${got}` } });
    }
  });

  it('get_devis_pdf_link gives an absolute signed URL that downloads the priced quote’s PDF (the cabinet shares personal data)', async () => {
    const { id, token } = await cabinet();
    // Without sharing the link is withheld: test/security/personal-data.test.ts.
    setLlmDataSharing(server.deps, id, true);
    grantCredits(server.deps, id, 100);
    setInsurerCredentials(server.deps, id, 'testco', { login: 'broker-7', password: 's3cret!' });
    const client = await connect(token());
    testco.queue(succeed(321.4));
    const { job_id } = await ok(client, 'price_quote', {
      compagnie: 'testco',
      produit: 'auto',
      dicData: { postcode: '13001', birth_date: '1990-01-01' },
    });
    await server.app.robotWorker.idle();
    const job = jobSchema.parse(await ok(client, 'get_job', { job_id }));
    expect(job).toMatchObject({ status: 'completed', result: { tarif_eur: 321.4 } });
    const priced = await ok(client, 'get_devis', { devis_id: job.devis_id });
    expect(priced).toMatchObject({ status: 'priced', pdf_available: true, job_id });

    const link = await ok(client, 'get_devis_pdf_link', { devis_id: job.devis_id });
    expect(String(link.url).startsWith(`${server.url}/api/v1/public/files/devis/${job.devis_id}.pdf?`)).toBe(true);
    expect(Date.parse(String(link.expires_at)) - Date.now()).toBeGreaterThan(4 * 60_000);
    const pdf = await fetch(String(link.url));
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
  });
});

describe('rate limit', () => {
  it('holds an access token’s grant to the API’s per-credential rate, with the RateLimit headers', async () => {
    const limited = await startTestServer({ config: { rateLimitPerMinute: 3 } });
    try {
      const { cabinet_id, user_id } = await initCabinet(limited.deps, {
        cabinet: 'Cabinet limité',
        email: `admin-${randomUUID()}@example.fr`,
        password: 'correct horse battery',
      });
      const token = createAccessTokenForUser(limited.deps, {
        cabinetId: cabinet_id,
        userId: user_id,
        clientName: 'Looping assistant',
        scopes: MCP_SCOPES,
      }).access_token;
      const whoami = () =>
        limited.request('/mcp', {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
        });
      for (let i = 0; i < 3; i++) {
        const response = await whoami();
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-remaining')).toBe(String(2 - i));
      }
      const refused = await whoami();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});
