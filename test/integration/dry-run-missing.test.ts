import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRunResultSchema, type DryRunResult } from '../../shared/automation.js';
import { productSchemaDocument, type ProductSchemaDocument } from '../../shared/products.js';
import { createAccessTokenForUser } from '../../server/oauth/token.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * A dry run lists exactly the required fields that dicData lacks, whatever their type (a choice
 * missing is zod's invalid_value, a text missing its invalid_type), for every product of every
 * insurer, through REST and through MCP's price_quote.
 */

let server: TestServer;
let api: ReturnType<typeof apiClient>;
let mcp: Client;
let products: ProductSchemaDocument[];

beforeAll(async () => {
  let portal = '';
  const sandbox = sandboxInsurer({ portalUrl: () => portal });
  server = await startTestServer({ insurers: [sandbox, createTestInsurer()], config: { tarificationQuotaPerHour: 1000 } });
  portal = `${server.url}/sandbox/insurer`;
  const { cabinet_id, user_id } = await initCabinet(server.deps, {
    cabinet: 'Cabinet dry run',
    email: `admin-${randomUUID()}@example.fr`,
    password: 'correct horse battery',
  });
  api = apiClient(server, server.createKey(cabinet_id).key);
  const token = createAccessTokenForUser(server.deps, {
    cabinetId: cabinet_id,
    userId: user_id,
    clientName: 'Dry run tests',
    scopes: ['automation:read', 'automation:enqueue'],
  }).access_token;
  mcp = new Client({ name: 'courtier-tests', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );

  products = [];
  for (const offered of (await api.get('/produits-disponibles')).body.data as { code: string; insurers: { code: string }[] }[]) {
    for (const insurer of offered.insurers) {
      products.push(
        productSchemaDocument.parse((await api.get(`/produits-disponibles/${offered.code}/schema?compagnie=${insurer.code}`)).body),
      );
    }
  }
});
afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

async function dryRunRest(doc: ProductSchemaDocument, dicData: Record<string, unknown>): Promise<DryRunResult> {
  const res = await api.post('/automation/tarifications', { compagnie: doc.compagnie, produit: doc.produit, dicData, dry_run: true });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return dryRunResultSchema.strict().parse(res.body);
}

async function dryRunMcp(doc: ProductSchemaDocument, dicData: Record<string, unknown>): Promise<DryRunResult> {
  const result = await mcp.callTool({
    name: 'price_quote',
    arguments: { compagnie: doc.compagnie, produit: doc.produit, dicData, dry_run: true },
  });
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return dryRunResultSchema.strict().parse(result.structuredContent);
}

const without = (example: Record<string, unknown>, dropped: readonly string[]) =>
  Object.fromEntries(Object.entries(example).filter(([key]) => !dropped.includes(key)));

describe('dry run: missing_required_fields', () => {
  it('covers products whose required fields are choices and texts', () => {
    const home = products.find((p) => p.compagnie === 'sandbox' && p.produit === 'mrh');
    expect(home?.required).toEqual(expect.arrayContaining(['dwelling_type', 'occupant_status', 'insured_name']));
    expect(products.length).toBeGreaterThanOrEqual(5);
  });

  it('a home dry run without its two choices names both (REST and MCP)', async () => {
    const home = products.find((p) => p.compagnie === 'sandbox' && p.produit === 'mrh');
    if (!home) throw new Error('no sandbox mrh');
    const dicData = without(home.example, ['dwelling_type', 'occupant_status']);
    for (const answer of [await dryRunRest(home, dicData), await dryRunMcp(home, dicData)]) {
      expect(answer.validation).toMatchObject({ schema_ok: false, missing_required_fields: ['dwelling_type', 'occupant_status'] });
    }
  });

  it('lists exactly the required fields dropped from a valid example, for every product (REST and MCP)', async () => {
    for (const doc of products) {
      expect(doc.required.length, `${doc.compagnie}/${doc.produit} has required fields`).toBeGreaterThan(0);
      expect((await dryRunRest(doc, doc.example)).validation).toMatchObject({ schema_ok: true, missing_required_fields: [] });
      await fc.assert(
        fc.asyncProperty(fc.subarray(doc.required, { minLength: 1 }), fc.boolean(), async (dropped, viaMcp) => {
          const answer = viaMcp
            ? await dryRunMcp(doc, without(doc.example, dropped))
            : await dryRunRest(doc, without(doc.example, dropped));
          expect(answer.validation.schema_ok).toBe(false);
          expect(answer.validation.missing_required_fields).toEqual(doc.required.filter((field) => dropped.includes(field)));
        }),
        { numRuns: 25 },
      );
    }
  });

  it('a field present but invalid is not missing, nor is an optional one left out', async () => {
    const auto = products.find((p) => p.compagnie === 'sandbox' && p.produit === 'auto');
    if (!auto) throw new Error('no sandbox auto');
    const answer = await dryRunRest(auto, { ...auto.example, usage: 'nautique', postcode: 'x', vehicle_model: undefined });
    expect(answer.validation).toMatchObject({ schema_ok: false, missing_required_fields: [] });
    const optional = Object.keys(auto.json_schema.properties as object).filter((key) => !auto.required.includes(key));
    expect(optional.length).toBeGreaterThan(0);
  });
});
