import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoRiskSchema, homeRiskSchema } from '@courtier/adapter-kit';
import { riskSchemaDocument } from '../../shared/comparaisons.js';
import { errorBodySchema } from '../../shared/errors.js';
import { apiClient } from '../helpers/api.js';
import { horizonInsurer } from '../helpers/horizon-insurer.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { traditionInsurer } from '../helpers/tradition-insurer.js';

/** GET /automation/risques/{ligne}/schema: the common risk model an integrator builds one form from. */
let server: TestServer;
let api: ReturnType<typeof apiClient>;
beforeAll(async () => {
  const portalUrl = () => 'http://127.0.0.1:9';
  server = await startTestServer({
    insurers: [sandboxInsurer({ portalUrl }), horizonInsurer({ portalUrl }), traditionInsurer({ portalUrl })],
  });
  const cabinetId = await server.createCabinet();
  api = apiClient(server, server.createKey(cabinetId, { scopes: ['automation:read'] }).key);
});
afterAll(() => server.close());

describe('the common risk model of a line', () => {
  it('car: the risk as JSON Schema with French and English labels, its example, its guarantees and the insurers that price it', async () => {
    const res = await api.get('/automation/risques/auto/schema');
    expect(res.status).toBe(200);
    const doc = riskSchemaDocument.strict().parse(res.body);
    expect(doc.label).toEqual({ fr: 'Assurance automobile', en: 'Car insurance' });
    expect(autoRiskSchema.parse(doc.example)).toEqual(doc.example);
    const schema = doc.json_schema as { required: string[]; properties: Record<string, { title: string; 'x-title-en': string }> };
    expect(schema.required).toEqual(['conducteur', 'vehicule', 'usage', 'couverture']);
    expect(schema.properties.vehicule).toMatchObject({ title: 'Véhicule', 'x-title-en': 'Vehicle' });
    expect(doc.garanties).toContainEqual({ code: 'bris_de_glace', label: { fr: 'Bris de glace', en: 'Glass breakage' } });
    expect(doc.compagnies).toEqual([
      { compagnie: 'sandbox', name: 'Sandbox Assurances', produit: 'auto' },
      { compagnie: 'horizon', name: 'Horizon Direct', produit: 'voiture' },
      { compagnie: 'tradition', name: 'Mutuelle Tradition', produit: 'automobile' },
    ]);
  });

  it('home: its own model and products', async () => {
    const doc = riskSchemaDocument.parse((await api.get('/automation/risques/mrh/schema')).body);
    expect(homeRiskSchema.parse(doc.example)).toEqual(doc.example);
    expect(doc.compagnies.map((c) => c.produit)).toEqual(['mrh', 'logement', 'habitation']);
    expect(doc.garanties.map((g) => g.code)).toContain('degats_des_eaux');
  });

  it('refuses an unknown line with a stable code, and a key without automation:read', async () => {
    const res = await api.get('/automation/risques/moto/schema');
    expect(res.status).toBe(404);
    expect(errorBodySchema.parse(res.body)).toMatchObject({ error: 'unknown_line' });
    const cabinetId = await server.createCabinet('Autre cabinet');
    const crmOnly = apiClient(server, server.createKey(cabinetId, { scopes: ['crm:read'] }).key);
    expect((await crmOnly.get('/automation/risques/auto/schema')).status).toBe(403);
  });
});
