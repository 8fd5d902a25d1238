import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productSchemaDocument } from '../../shared/products.js';
import { consoleDryRunSchema } from '../../shared/console-automation.js';
import { errorBodySchema, validationIssueSchema, type ValidationIssue } from '../../shared/errors.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A validation_error's details carry each problem's kind and its limits (not only zod's English
 * message), so that the console words them next to the field; the sandbox's products carry labels
 * for their choices; the OpenAPI documents describe both.
 */

let server: TestServer;
let admin: ConsoleClient;
let cabinetId: string;

beforeAll(async () => {
  server = await startTestServer({ insurers: [sandboxInsurer({ portalUrl: () => `${server.url}/sandbox/insurer` })] });
  const user = await createUser(server, 'Cabinet Messages');
  cabinetId = user.cabinetId;
  grantCredits(server.deps, cabinetId, 100);
  admin = await consoleClient(server, user);
});
afterAll(() => server?.close());

/** The sandbox's auto quote with a bonus-malus over its maximum, a usage not offered, a postcode of four digits, no name. */
const BAD_AUTO = {
  driver_birth_date: '1984-03-09',
  licence_date: '2004-06-01',
  bonus_malus: 4,
  vehicle_make: 'Renault',
  vehicle_model: 'Clio',
  first_registration_date: '2021-02-15',
  postcode: '6900',
  usage: 'leasing',
  formula: 'tiers_etendu',
};

function byPath(issues: readonly ValidationIssue[]): Record<string, ValidationIssue> {
  return Object.fromEntries(issues.map((i) => [i.path, i]));
}

describe('validation details carry the code and the parameters of each problem', () => {
  it('a request validated by its route: the limit broken, in the query', async () => {
    const api = apiClient(server, server.createKey(cabinetId).key);
    const res = await api.get('/clients?limit=lots');
    expect(res.status).toBe(400);
    const body = errorBodySchema.parse(res.body);
    expect(body.error).toBe('validation_error');
    expect(body.details).toEqual([
      { path: 'query.limit', message: 'limit must be a whole number', code: 'invalid_type', expected: 'number', received: 'string' },
    ]);
  });

  it('a body: a missing field says so, a bad email says its format', async () => {
    const res = await admin.request('/api/v1/console/users', { method: 'POST', json: { email: 'not an email', role: 'broker' } });
    expect(res.status).toBe(400);
    const issues = byPath(validationIssueSchema.array().parse(errorBodySchema.parse(await res.json()).details));
    expect(issues['body.email']).toMatchObject({ code: 'invalid_format', format: 'email' });
    expect(issues['body.password']).toMatchObject({ code: 'invalid_type', expected: 'string', received: 'undefined' });
    // The value sent is never echoed back (it may be a password).
    expect(JSON.stringify(issues)).not.toContain('not an email');
  });

  it('the console’s dry run: each dicData problem with its code, limits and allowed values', async () => {
    const res = await admin.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: { compagnie: 'sandbox', produit: 'auto', dry_run: true, dicData: BAD_AUTO },
    });
    expect(res.status).toBe(200);
    const dry = consoleDryRunSchema.parse(await res.json());
    expect(dry.validation.missing_required_fields).toEqual(['insured_name']);
    const fields = Object.fromEntries(dry.invalid_fields.map((i) => [i.field, i]));
    expect(fields.bonus_malus).toMatchObject({
      path: 'body.dicData.bonus_malus',
      code: 'too_big',
      maximum: 3.5,
      inclusive: true,
      origin: 'number',
    });
    expect(fields.usage).toMatchObject({ code: 'invalid_value', values: ['prive', 'professionnel', 'mixte'] });
    expect(fields.postcode).toMatchObject({ code: 'invalid_format', format: 'regex', pattern: expect.stringContaining('\\d{5}') });
    expect(Object.keys(fields).sort()).toEqual(['bonus_malus', 'postcode', 'usage']);
  });

  it('a real pricing with the same dicData: a 400 whose details carry the same', async () => {
    const res = await admin.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: { compagnie: 'sandbox', produit: 'auto', dicData: BAD_AUTO },
    });
    expect(res.status).toBe(400);
    const issues = byPath(validationIssueSchema.array().parse(errorBodySchema.parse(await res.json()).details));
    expect(issues['body.dicData.insured_name']).toMatchObject({ code: 'invalid_type', received: 'undefined' });
    expect(issues['body.dicData.bonus_malus']).toMatchObject({ code: 'too_big', maximum: 3.5 });
    expect(issues['body.dicData.usage']).toMatchObject({ code: 'invalid_value', values: ['prive', 'professionnel', 'mixte'] });
  });
});

describe('product choices carry labels', () => {
  it('in enum_labels and in the JSON Schema (x-enum-labels); dates have no format in their label', async () => {
    const res = await admin.request('/api/v1/console/products/auto/schema?compagnie=sandbox');
    expect(res.status).toBe(200);
    const doc = productSchemaDocument.parse(await res.json());
    expect(doc.enum_labels).toEqual({
      usage: { prive: 'Privé', professionnel: 'Professionnel', mixte: 'Mixte' },
      formula: { tiers: 'Tiers', tiers_etendu: 'Tiers étendu', tous_risques: 'Tous risques' },
    });
    const properties = doc.json_schema.properties as Record<string, Record<string, unknown>>;
    expect(properties.usage).toMatchObject({ enum: ['prive', 'professionnel', 'mixte'], 'x-enum-labels': doc.enum_labels.usage });
    expect(properties.driver_birth_date).toMatchObject({ format: 'date' });
    expect(doc.labels.driver_birth_date).toBe('Date de naissance du conducteur');
    // Every choice of every sandbox product has a label for each of its values.
    for (const produit of ['auto', 'mrh', 'attestation']) {
      const product = productSchemaDocument.parse(
        await (await admin.request(`/api/v1/console/products/${produit}/schema?compagnie=sandbox`)).json(),
      );
      for (const [key, property] of Object.entries(product.json_schema.properties as Record<string, { enum?: string[] }>)) {
        if (!property.enum) continue;
        expect(Object.keys(product.enum_labels[key] ?? {}), `${produit}.${key}`).toEqual(property.enum);
      }
    }
  });
});

describe('the OpenAPI documents describe them', () => {
  it.each(['/api/v1/public/openapi.json', '/api/v1/console/openapi.json'])(
    '%s: Error.details lists ValidationIssue, with code and parameters',
    async (path) => {
      const doc = (await (await server.request(path)).json()) as {
        components: { schemas: Record<string, { properties: Record<string, unknown> }> };
      };
      const schemas = doc.components.schemas;
      const issue = schemas.ValidationIssue;
      expect(issue).toBeDefined();
      for (const name of [
        'path',
        'message',
        'code',
        'expected',
        'received',
        'origin',
        'minimum',
        'maximum',
        'inclusive',
        'format',
        'pattern',
        'values',
        'divisor',
        'keys',
      ]) {
        expect(issue!.properties[name], name).toBeDefined();
      }
      expect(JSON.stringify(schemas.Error!.properties.details)).toContain('#/components/schemas/ValidationIssue');
    },
  );

  it('ProductSchema documents enum_labels', async () => {
    const doc = (await (await server.request('/api/v1/public/openapi.json')).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
    };
    expect(doc.components.schemas.ProductSchema!.properties.enum_labels!.description).toContain('x-enum-labels');
  });
});
