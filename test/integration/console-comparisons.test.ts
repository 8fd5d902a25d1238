import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import {
  comparisonEnqueuedSchema,
  comparisonSchema,
  conseilSchema,
  riskSchemaDocument,
  type Comparison,
} from '../../shared/comparaisons.js';
import { pathTo } from '../../shared/endpoint.js';
import {
  createConsoleComparison,
  createConsoleConseil,
  getConsoleComparison,
  getConsoleConseilPdf,
  getConsoleRiskSchema,
  listConsoleComparisons,
  listConsoleConseils,
} from '../../shared/console-comparaisons.js';
import { createClient } from '../../server/crm/clients.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { expectErrorResponse } from '../helpers/api.js';
import { signInNewUser, type ConsoleClient } from '../helpers/console.js';
import { pdfText } from '../helpers/pdf-text.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_AUTO_LINE } from '../helpers/test-insurer.js';

/**
 * The Compare page's routes over HTTP with a console session: the cabinet's own logins price, a dry
 * run says the balance, bad input is refused with nothing enqueued, the advice document is made
 * and downloaded, and another cabinet's session sees none of it.
 */
let server: TestServer;
let cabinetId = '';
let broker: ConsoleClient;
let other: ConsoleClient;
let clientId = '';

beforeAll(async () => {
  const testco = Object.assign(createTestInsurer('testco', 'Test Assurances'), { risks: TEST_AUTO_LINE });
  const otherco = Object.assign(createTestInsurer('otherco', 'Other Assurances'), { risks: TEST_AUTO_LINE });
  server = await startTestServer({ insurers: [testco, otherco], config: { tarificationQuotaPerHour: 1000 } });
  cabinetId = await server.createCabinet();
  grantCredits(server.deps, cabinetId, 100);
  setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  broker = (await signInNewUser(server, cabinetId, 'broker')).client;
  other = (await signInNewUser(server, await server.createCabinet(), 'broker')).client;
  clientId = createClient(server.deps, cabinetId, { type: 'person', last_name: 'Martin', first_name: 'Léa' }).client_id;
});
afterAll(async () => {
  await server?.close();
});

const post = (c: ConsoleClient, path: string, json: unknown) => c.request(path, { method: 'POST', json });
const jobs = () => server.withOtherConnection((db) => (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n);

async function settled(id: string): Promise<Comparison> {
  for (let i = 0; i < 400; i++) {
    const res = await broker.request(pathTo(getConsoleComparison, { comparaison_id: id }));
    const comparison = comparisonSchema.parse(await res.json());
    if (!['pending', 'running'].includes(comparison.status)) return comparison;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`comparison ${id} never ended`);
}

describe('the console’s comparisons', () => {
  it('the risk model, a dry run with the balance, a comparison with the cabinet’s logins, its advice document', async () => {
    const schema = riskSchemaDocument.parse(await (await broker.request(pathTo(getConsoleRiskSchema, { ligne: 'auto' }))).json());
    expect(schema.compagnies.map((c) => c.compagnie)).toEqual(['testco', 'otherco']);

    const dry = await post(broker, pathTo(createConsoleComparison), { ligne: 'auto', risque: RISK_EXAMPLES.auto, dry_run: true });
    expect(dry.status).toBe(200);
    const dryRun = (await dry.json()) as {
      balance: number;
      would_cost_credits: number;
      compagnies: { compagnie: string; raison: string | null }[];
    };
    expect(dryRun.balance).toBe(100);
    // The console prices with the cabinet's logins: otherco has none.
    expect(dryRun.compagnies.map((c) => [c.compagnie, c.raison])).toEqual([
      ['testco', null],
      ['otherco', 'insurer_credentials_missing'],
    ]);
    expect(jobs()).toBe(0);

    const res = await post(broker, pathTo(createConsoleComparison), { ligne: 'auto', risque: RISK_EXAMPLES.auto, client_id: clientId });
    expect(res.status).toBe(202);
    const id = comparisonEnqueuedSchema.parse(await res.json()).comparaison_id;
    const done = await settled(id);
    expect(done.status).toBe('completed');
    expect(creditBalance(server.deps, cabinetId)).toBe(100 - done.credits_consumed);

    const listed = await (await broker.request(pathTo(listConsoleComparisons, {}, { client_id: clientId }))).json();
    expect((listed as { data: Comparison[] }).data.map((c) => c.comparaison_id)).toEqual([id]);

    const made = await post(broker, pathTo(createConsoleConseil, { comparaison_id: id }), {
      compagnie: 'testco',
      besoins: 'Une voiture pour le travail.',
      motif: 'Le seul assureur disponible.',
    });
    expect(made.status).toBe(201);
    const conseil = conseilSchema.parse(await made.json());
    const pdf = await broker.request(pathTo(getConsoleConseilPdf, { conseil_id: conseil.conseil_id }));
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = pdfText(Buffer.from(await pdf.arrayBuffer()));
    expect(text).toContain('Léa Martin');
    expect(text).toContain('Le seul assureur disponible.');
    const advices = (await (await broker.request(pathTo(listConsoleConseils, {}, { client_id: clientId }))).json()) as { data: unknown[] };
    expect(advices.data).toHaveLength(1);

    // Another cabinet's session: nothing of it, as for an id that does not exist.
    for (const path of [
      pathTo(getConsoleComparison, { comparaison_id: id }),
      pathTo(getConsoleConseilPdf, { conseil_id: conseil.conseil_id }),
    ]) {
      await expectErrorResponse(await other.request(path), 404, 'not_found');
    }
    const otherConseil = await post(other, pathTo(createConsoleConseil, { comparaison_id: id }), {
      compagnie: 'testco',
      besoins: 'x',
      motif: 'y',
    });
    expect(otherConseil.status).toBe(404);
    expect(((await (await other.request(pathTo(listConsoleComparisons))).json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('refuses bad input with a stable code and the fields named, enqueuing and debiting nothing', async () => {
    const before = { jobs: jobs(), balance: creditBalance(server.deps, cabinetId) };
    const missing = await post(broker, pathTo(createConsoleComparison), { ligne: 'auto', risque: { couverture: 'etendue' } });
    const body = await expectErrorResponse(missing, 400, 'validation_error');
    const paths = (body.details as { path: string }[]).map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['body.risque.conducteur', 'body.risque.vehicule', 'body.risque.usage']));
    const line = await post(broker, pathTo(createConsoleComparison), { ligne: 'moto', risque: {} });
    expect(line.status).toBe(400);
    await expectErrorResponse(await broker.request('/api/v1/console/risks/moto/schema'), 404, 'unknown_line');
    const uncovered = await post(broker, pathTo(createConsoleComparison), {
      ligne: 'auto',
      risque: RISK_EXAMPLES.auto,
      compagnies: ['otherco'],
    });
    await expectErrorResponse(uncovered, 409, 'insurer_credentials_missing');
    // Without the CSRF header, and signed out.
    const noCsrf = await server.request(pathTo(createConsoleComparison), {
      method: 'POST',
      headers: { cookie: broker.cookie, 'Content-Type': 'application/json', Origin: server.url },
      body: JSON.stringify({ ligne: 'auto', risque: RISK_EXAMPLES.auto }),
    });
    expect(noCsrf.status).toBe(403);
    expect((await server.request(pathTo(listConsoleComparisons))).status).toBe(401);
    expect({ jobs: jobs(), balance: creditBalance(server.deps, cabinetId) }).toEqual(before);
  });
});
