import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchema } from '../../shared/crm.js';
import { errorBodySchema, validationIssueSchema, type ValidationIssue } from '../../shared/errors.js';
import { MCP_SCOPES } from '../../shared/oauth.js';
import { listEvents } from '../../server/events/service.js';
import { createAccessTokenForUser } from '../../server/oauth/token.js';
import { apiClient } from '../helpers/api.js';
import { consoleClient } from '../helpers/console.js';
import { createUser, type TestUser } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Text the sync cannot carry (U+0000, a surrogate without its pair) is refused at the door of the
 * REST API, the console's API and the MCP tools, with a 400 validation_error naming the field, and
 * nothing is stored: stored, it would be refused by the hub and block the install's sync queue.
 * JSON carries both as escapes (\u0000, \ud800), which JSON.parse turns into such strings.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

interface Cabinet {
  user: TestUser;
  api: ReturnType<typeof apiClient>;
  key: string;
}

async function cabinet(): Promise<Cabinet> {
  const user = await createUser(server, 'Cabinet Texte');
  const key = server.createKey(user.cabinetId).key;
  return { user, key, api: apiClient(server, key) };
}

const VALUE_MESSAGE = 'text must not contain a NUL character (U+0000) or an unpaired surrogate: the sync cannot store it';
const KEY_MESSAGE = 'a key must not contain a NUL character (U+0000) or an unpaired surrogate: the sync cannot store it';

/** The issues of a validation_error answer, checked against the contract. */
function issuesOf(status: number, body: unknown): ValidationIssue[] {
  expect(status, JSON.stringify(body)).toBe(400);
  const error = errorBodySchema.parse(body);
  expect(error.error).toBe('validation_error');
  return validationIssueSchema.array().parse(error.details);
}

/** A POST whose JSON text is given as is, escapes included. */
async function postRaw(path: string, key: string, json: string): Promise<{ status: number; body: unknown }> {
  const res = await server.request(`/api/v1/public${path}`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: json,
  });
  return { status: res.status, body: await res.json() };
}

async function clientCount(cab: Cabinet): Promise<number> {
  const res = await cab.api.get('/clients?limit=100');
  expect(res.status).toBe(200);
  return (res.body.data as unknown[]).length;
}

const ADDRESS = { line1: '1 rue de la Paix', line2: 'Bâtiment B', postcode: '75002', city: 'Paris', country: 'FR' };

/** A person with every text field filled, valid as is. */
const FULL_PERSON = {
  type: 'person',
  last_name: 'Dupont',
  first_name: 'Jeanne',
  company_name: 'Dupont SARL',
  siret: '73282932000074',
  email: 'jd@dupont.fr',
  phone: '+33 6 12 34 56 78',
  address: ADDRESS,
  birth_date: '1980-05-17',
};

describe('the REST API', () => {
  it('refuses a NUL in a name: 400 naming body.last_name, no client and no event stored', async () => {
    const cab = await cabinet();
    const events = listEvents(server.deps, cab.user.cabinetId).length;
    const res = await postRaw('/clients', cab.key, '{"last_name":"Du\\u0000pont","first_name":"Jeanne"}');
    expect(issuesOf(res.status, res.body)).toEqual([{ path: 'body.last_name', message: VALUE_MESSAGE, code: 'custom' }]);
    expect((res.body as { message: string }).message).toContain('body.last_name: text must not contain a NUL character');
    expect(await clientCount(cab)).toBe(0);
    expect(listEvents(server.deps, cab.user.cabinetId)).toHaveLength(events);
  });

  it('refuses a lone surrogate in a nested field, high or low, and names each place', async () => {
    const cab = await cabinet();
    const json = '{"last_name":"Dupont","address":{"line1":"1 rue \\ud800","postcode":"75002","city":"\\udfffParis"}}';
    const res = await postRaw('/clients', cab.key, json);
    expect(issuesOf(res.status, res.body).map((i) => i.path)).toEqual(['body.address.line1', 'body.address.city']);
    expect(await clientCount(cab)).toBe(0);
  });

  it('reports the schema’s problems and the text’s together', async () => {
    const cab = await cabinet();
    const res = await postRaw('/clients', cab.key, '{"last_name":"Dupont","email":"not an email\\u0000"}');
    const issues = issuesOf(res.status, res.body);
    expect(issues.map((i) => [i.path, i.code])).toEqual([
      ['body.email', 'invalid_format'],
      ['body.email', 'custom'],
    ]);
  });

  it('refuses it in a PATCH too, and the client stays as it was', async () => {
    const cab = await cabinet();
    const created = await cab.api.post('/clients', { last_name: 'Dupont', first_name: 'Jeanne' });
    expect(created.status).toBe(201);
    const client = clientSchema.parse(created.body);
    const res = await cab.api.patch(`/clients/${client.client_id}`, {
      first_name: 'Je\ud83danne',
      address: { ...ADDRESS, line2: '\u0000' },
    });
    expect(issuesOf(res.status, res.body).map((i) => i.path)).toEqual(['body.first_name', 'body.address.line2']);
    expect((await cab.api.get(`/clients/${client.client_id}`)).body).toEqual(created.body);
  });

  it('refuses it in a key or a value of free-form JSON (a quote’s dicData)', async () => {
    const cab = await cabinet();
    const client = clientSchema.parse((await cab.api.post('/clients', { last_name: 'Dupont' })).body);
    const json = `{"client_id":"${client.client_id}","compagnie":"sandbox","produit":"auto","dicData":{"ok\\u0000":1,"drivers":[{"name":"\\udc00"}],"fine":"\\ud83d\\ude00"}}`;
    const res = await postRaw('/devis', cab.key, json);
    expect(issuesOf(res.status, res.body)).toEqual([
      { path: 'body.dicData.ok\u0000', message: KEY_MESSAGE, code: 'custom' },
      { path: 'body.dicData.drivers.0.name', message: VALUE_MESSAGE, code: 'custom' },
    ]);
    expect((await cab.api.get('/devis')).body.data).toEqual([]);
  });

  it('refuses it in a query and a path parameter', async () => {
    const cab = await cabinet();
    const query = await cab.api.get('/clients?q=Du%00pont');
    expect(issuesOf(query.status, query.body)).toEqual([{ path: 'query.q', message: VALUE_MESSAGE, code: 'custom' }]);
    const path = await cab.api.get('/clients/ab%00cd');
    expect(issuesOf(path.status, path.body)).toContainEqual({ path: 'path.client_id', message: VALUE_MESSAGE, code: 'custom' });
  });

  it('accepts valid unicode: emoji (surrogate pairs), accents, tabs and newlines', async () => {
    const cab = await cabinet();
    const res = await postRaw(
      '/clients',
      cab.key,
      '{"last_name":"Du\\tpont 😀 \\ud83d\\ude00","first_name":"Zoë\\nAnne","address":{"line1":"1 rue\\r\\nB","postcode":"75002","city":"Paris 🏙️"}}',
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(clientSchema.parse(res.body)).toMatchObject({
      last_name: 'Du\tpont 😀 😀',
      first_name: 'Zoë\nAnne',
      address: { line1: '1 rue\r\nB', city: 'Paris 🏙️' },
    });
  });
});

describe('the console’s API', () => {
  it('refuses it on the console’s own routes: 400 naming the field, nothing stored', async () => {
    const cab = await cabinet();
    const admin = await consoleClient(server, cab.user);
    const res = await admin.request('/api/v1/console/clients', { method: 'POST', json: { type: 'company', company_name: 'Acme\u0000' } });
    expect(issuesOf(res.status, await res.json()).map((i) => i.path)).toEqual(['body.company_name']);
    const list = await admin.request('/api/v1/console/clients');
    expect(((await list.json()) as { data: unknown[] }).data).toEqual([]);
    const webhook = await admin.request('/api/v1/console/webhooks', {
      method: 'POST',
      json: { url: 'https://hooks.example/in', events: ['client.updated'], description: 'CRM\u0000' },
    });
    expect(issuesOf(webhook.status, await webhook.json()).map((i) => i.path)).toEqual(['body.description']);
    expect(((await (await admin.request('/api/v1/console/webhooks')).json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe('the MCP tools', () => {
  it('answer a validation_error naming the argument, and create nothing', async () => {
    const cab = await cabinet();
    const token = createAccessTokenForUser(server.deps, {
      cabinetId: cab.user.cabinetId,
      userId: cab.user.userId,
      clientName: 'Test Assistant',
      scopes: MCP_SCOPES,
    }).access_token;
    const client = new McpClient({ name: 'courtier-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const result = await client.callTool({
        name: 'create_client',
        arguments: { last_name: 'Dupont', address: { ...ADDRESS, city: 'Pa\ud800ris' } },
      });
      expect(result.isError).toBe(true);
      const [content] = result.content as { type: string; text: string }[];
      const body = JSON.parse(content?.text ?? 'null') as unknown;
      const error = errorBodySchema.omit({ request_id: true }).parse(body);
      expect(error.error).toBe('validation_error');
      expect(validationIssueSchema.array().parse(error.details)).toEqual([
        { path: 'arguments.address.city', message: VALUE_MESSAGE, code: 'custom' },
      ]);
      expect(await clientCount(cab)).toBe(0);
    } finally {
      await client.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Properties over the client creation body
// ---------------------------------------------------------------------------------------------

type TextField = { path: readonly string[]; value: string };

/** Every text field of FULL_PERSON, with where it is in the body. */
const TEXT_FIELDS: readonly TextField[] = [
  ...Object.entries(FULL_PERSON)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'type')
    .map(([name, value]) => ({ path: [name], value })),
  ...Object.entries(ADDRESS).map(([name, value]) => ({ path: ['address', name], value })),
];

function withField(path: readonly string[], value: string): Record<string, unknown> {
  const [first, second] = path;
  if (first === undefined) throw new Error('an empty path');
  if (second === undefined) return { ...FULL_PERSON, [first]: value };
  return { ...FULL_PERSON, address: { ...ADDRESS, [second]: value } };
}

const wellFormed = fc.string({ unit: 'grapheme', maxLength: 8 });
const loneSurrogate = fc
  .oneof(fc.integer({ min: 0xd800, max: 0xdbff }), fc.integer({ min: 0xdc00, max: 0xdfff }))
  .map((unit) => String.fromCharCode(unit));
/** Any string holding a NUL or a lone surrogate: well-formed text around one bad unit. */
const unsyncable = fc
  .tuple(wellFormed, fc.oneof(fc.constant('\u0000'), loneSurrogate), wellFormed)
  .map(([before, bad, after]) => before + bad + after);

describe('properties of the client creation body', () => {
  it('any string with a NUL or a lone surrogate, anywhere in any text field, is refused with that field named', async () => {
    const cab = await cabinet();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TEXT_FIELDS), fc.nat(), unsyncable, async (field, at, bad) => {
        const position = at % (field.value.length + 1);
        const value = field.value.slice(0, position) + bad + field.value.slice(position);
        const res = await cab.api.post('/clients', withField(field.path, value));
        const issues = issuesOf(res.status, res.body);
        expect(issues).toContainEqual({ path: ['body', ...field.path].join('.'), message: VALUE_MESSAGE, code: 'custom' });
      }),
      { numRuns: 100 },
    );
    expect(await clientCount(cab)).toBe(0);
  });

  it('well-formed text with emoji, tabs and newlines in the free-text fields is stored as sent (trimmed)', async () => {
    const cab = await cabinet();
    const freeText = fc
      .array(
        fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }), fc.constantFrom('\t', '\n', '\r\n', '😀', '👩‍👩‍👧', 'é', ' ')),
        { maxLength: 12 },
      )
      .map((parts) => `x${parts.join('')}`);
    await fc.assert(
      fc.asyncProperty(freeText, freeText, freeText, freeText, async (lastName, firstName, line1, city) => {
        const res = await cab.api.post('/clients', { last_name: lastName, first_name: firstName, address: { ...ADDRESS, line1, city } });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        const client = clientSchema.parse(res.body);
        expect([client.last_name, client.first_name, client.address?.line1, client.address?.city]).toEqual(
          [lastName, firstName, line1, city].map((t) => t.trim()),
        );
      }),
      { numRuns: 60 },
    );
  });
});
