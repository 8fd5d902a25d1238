import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RISK_EXAMPLES, RobotError } from '@courtier/adapter-kit';
import { comparisonEnqueuedSchema, comparisonSchema, conseilSchema, type Comparison } from '../../shared/comparaisons.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { changeCabinetIdentity } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { pdfText } from '../helpers/pdf-text.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { createTestInsurer, gated, TEST_AUTO_LINE, type Script } from '../helpers/test-insurer.js';

/**
 * A comparison's end, with scripted insurers (no browser): comparaison.completed once every job
 * ended, once, and after a restart for a comparison whose last job ended while the service stopped.
 */
const dataDir = tempDir();
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close().catch(() => undefined);
});

async function start(scripts: Script[] = [], dir = dataDir) {
  const testco = Object.assign(createTestInsurer('testco', 'Test Assurances'), { risks: TEST_AUTO_LINE });
  const otherco = Object.assign(createTestInsurer('otherco', 'Other Assurances'), { risks: TEST_AUTO_LINE });
  otherco.queue(...scripts);
  const server = await startTestServer({ dataDir: dir, insurers: [testco, otherco], config: { tarificationQuotaPerHour: 1000 } });
  servers.push(server);
  return server;
}

async function settled(api: ReturnType<typeof apiClient>, id: string): Promise<Comparison> {
  for (let i = 0; i < 400; i++) {
    const comparison = comparisonSchema.parse((await api.get(`/automation/comparaisons/${id}`)).body);
    if (!['pending', 'running'].includes(comparison.status)) return comparison;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`comparison ${id} never ended`);
}

const completed = (server: TestServer, cabinetId: string) =>
  listEvents(server.deps, cabinetId).filter((e) => e.type === 'comparaison.completed');

describe('a comparison’s end', () => {
  it('records comparaison.completed once, when the last insurer answers; one that refused makes it partial', async () => {
    const refused: Script = () => Promise.reject(new RobotError('business', 'risk_declined', 'Risque refusé par la compagnie.'));
    const server = await start([refused]);
    const cabinetId = await server.createCabinet();
    grantCredits(server.deps, cabinetId, 100);
    for (const code of ['testco', 'otherco']) setInsurerCredentials(server.deps, cabinetId, code, { login: 'broker', password: 'secret' });
    const api = apiClient(server, server.createKey(cabinetId).key);
    const res = await api.post('/automation/comparaisons', { ligne: 'auto', risque: RISK_EXAMPLES.auto });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = comparisonEnqueuedSchema.parse(res.body).comparaison_id;
    const done = await settled(api, id);
    expect(done.status).toBe('partial');
    expect(done.resultats.map((r) => [r.compagnie, r.status, r.error?.code ?? null])).toEqual([
      ['testco', 'completed', null],
      ['otherco', 'failed', 'risk_declined'],
    ]);
    await expect.poll(() => completed(server, cabinetId).length).toBe(1);
    expect(completed(server, cabinetId)[0]?.data).toMatchObject({ comparaison_id: id, status: 'partial' });
    // Nothing more on later job changes.
    await new Promise((r) => setTimeout(r, 100));
    expect(completed(server, cabinetId)).toHaveLength(1);

    // As if the service had stopped between the last job's end and the comparison's: reopened, its event gone.
    server.withOtherConnection((db) => {
      db.prepare("DELETE FROM events WHERE type = 'comparaison.completed'").run();
      db.prepare('UPDATE comparaisons SET completed_at = NULL').run();
    });
    await server.close();
    const again = await start();
    expect(completed(again, cabinetId)).toHaveLength(1);
    expect(completed(again, cabinetId)[0]?.data).toMatchObject({ comparaison_id: id, status: 'partial' });
  });
});

describe('the advice document', () => {
  it('states the client, their needs, every offer (a failed insurer named), the choice and its reason, with the evidence; kept, listed and audited', async () => {
    const refused: Script = () => Promise.reject(new RobotError('business', 'risk_declined', 'Risque refusé par la compagnie.'));
    // Other Assurances holds the first comparison until the test lets it go, then refuses the second's risk.
    const gate = gated();
    const server = await start([gate.script, refused], tempDir());
    const cabinetId = await server.createCabinet('Cabinet Dupré');
    changeCabinetIdentity(server.deps, cabinetId, { orias: '12345678', address: '3 rue de la Paix, 75002 Paris' }, CLI_ACTOR);
    grantCredits(server.deps, cabinetId, 100);
    for (const code of ['testco', 'otherco']) setInsurerCredentials(server.deps, cabinetId, code, { login: 'broker', password: 'secret' });
    const api = apiClient(server, server.createKey(cabinetId).key);
    const client = await api.post('/clients', { last_name: 'Quintavalle', first_name: 'Marie' });
    expect(client.status).toBe(201);
    const clientId = String(client.body.id);

    // Without a client, and before every insurer answered: refused, nothing kept.
    const anonymous = comparisonEnqueuedSchema.parse(
      (await api.post('/automation/comparaisons', { ligne: 'auto', risque: RISK_EXAMPLES.auto })).body,
    );
    const advice = {
      compagnie: 'testco',
      motif: 'Le meilleur prix pour une couverture tous risques.',
      besoins: 'Une voiture neuve à assurer tous risques, trajet travail.',
    };
    await gate.entered;
    const early = await api.post(`/automation/comparaisons/${anonymous.comparaison_id}/conseil`, advice);
    expect(early.status).toBe(409);
    expect(early.body.error).toBe('comparison_not_finished');
    gate.open();
    await settled(api, anonymous.comparaison_id);
    expect((await api.post(`/automation/comparaisons/${anonymous.comparaison_id}/conseil`, advice)).body.error).toBe('client_required');
    const risque = { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: '75011' } };
    const res = await api.post('/automation/comparaisons', { ligne: 'auto', risque, client_id: clientId });
    const id = comparisonEnqueuedSchema.parse(res.body).comparaison_id;
    const done = await settled(api, id);
    expect(done.status).toBe('partial');
    // An insurer that gave no price, or a formula it did not offer, cannot be recommended.
    expect((await api.post(`/automation/comparaisons/${id}/conseil`, { ...advice, compagnie: 'otherco' })).body.error).toBe(
      'offer_not_priced',
    );
    expect((await api.post(`/automation/comparaisons/${id}/conseil`, { ...advice, formule: 'premium' })).body.error).toBe(
      'offer_not_priced',
    );

    const created = await api.post(`/automation/comparaisons/${id}/conseil`, advice);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const conseil = conseilSchema.parse(created.body);
    expect(conseil).toMatchObject({ comparaison_id: id, client_id: clientId, compagnie: 'testco', formule: 'tarif' });
    const pdf = await server.request(conseil.pdf_url, { headers: { 'X-API-Key': server.createKey(cabinetId).key } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(conseil.pdf_sha256);
    const text = pdfText(bytes);
    expect(text).toContain('Document de conseil — assurance automobile');
    expect(text).toContain('Cabinet : Cabinet Dupré, 3 rue de la Paix, 75002 Paris.');
    expect(text).toContain('immatriculé à l’ORIAS sous le n° 12345678');
    expect(text).toContain('Client : Marie Quintavalle.');
    expect(text).toContain(advice.besoins);
    expect(text).toContain('Test Assurances — Tarif du devis : 432,10 € par an.');
    expect(text).toMatch(/Other Assurances : pas de tarif \(Risque refusé par la compagnie\.\)/);
    expect(text).toContain(`Motif : ${advice.motif}`);
    expect(text).toMatch(/Test Assurances : devis [0-9a-f-]{36}, tarifé par l’adaptateur/);
    expect(text).toMatch(/Empreinte SHA-256 des données du risque :\s[0-9a-f]{64}\./);

    const listed = await api.get(`/automation/conseils?client_id=${clientId}`);
    expect((listed.body.data as { conseil_id: string }[]).map((c) => c.conseil_id)).toEqual([conseil.conseil_id]);
    const audit = server.withOtherConnection((db) =>
      db.prepare("SELECT target, action FROM audit_events WHERE action = 'conseil.created'").all(),
    );
    expect(audit).toEqual([{ target: conseil.conseil_id, action: 'conseil.created' }]);

    // The client's erasure empties the risks compared for them (names, birth dates); the advice document stays, the record of the advice given.
    expect((await api.delete(`/clients/${clientId}`)).status).toBe(204);
    const risks = server.withOtherConnection((db) => db.prepare('SELECT id, risque FROM comparaisons WHERE client_id = ?').all(clientId));
    expect(risks).toEqual([{ id, risque: '{}' }]);
    expect(comparisonSchema.parse((await api.get(`/automation/comparaisons/${id}`)).body).status).toBe('partial');
    expect((await server.request(conseil.pdf_url, { headers: { 'X-API-Key': server.createKey(cabinetId).key } })).status).toBe(200);
  });
});
