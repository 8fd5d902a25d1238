// @module-tag browser
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RISK_EXAMPLES, type AutoRisk } from '@courtier/adapter-kit';
import { comparisonDryRunSchema, comparisonEnqueuedSchema, comparisonSchema, type Comparison } from '../../shared/comparaisons.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient, expectError } from '../helpers/api.js';
import { horizonInsurer } from '../helpers/horizon-insurer.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { traditionInsurer } from '../helpers/tradition-insurer.js';

/**
 * Comparing insurers through the REST API: one risk, the three demo insurers priced at once by their
 * robots in real Chromium, each on its own demo portal served by the app.
 */
let server: TestServer;
const modes = new Map<string, SandboxMode>();
let origin = '';

beforeAll(async () => {
  server = await startTestServer({
    insurers: [
      sandboxInsurer({ portalUrl: () => `${origin}/sandbox/insurer` }),
      horizonInsurer({ portalUrl: () => `${origin}/sandbox/horizon` }),
      traditionInsurer({ portalUrl: () => `${origin}/sandbox/tradition`, pdf: { maxRefreshes: 5, intervalMs: 100 } }),
      createTestInsurer('testco', 'Test Assurances'),
    ],
    sandboxMode: (insurer) => modes.get(insurer) ?? 'normal',
    config: { sandboxLatencyMs: 0, tarificationQuotaPerHour: 1000, workerConcurrency: 3 },
  });
  origin = server.url;
}, 30_000);
afterAll(async () => {
  await server?.close();
});

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 300);
  return {
    id,
    test: apiClient(server, server.createKey(id, { environment: 'test' }).key),
    prod: apiClient(server, server.createKey(id).key),
  };
}

async function settled(api: ReturnType<typeof apiClient>, id: string): Promise<Comparison> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const comparison = comparisonSchema.parse((await api.get(`/automation/comparaisons/${id}`)).body);
    if (!['pending', 'running'].includes(comparison.status)) return comparison;
    if (Date.now() > deadline) throw new Error(`comparison ${id} stuck: ${JSON.stringify(comparison.resultats.map((r) => r.status))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const balance = async (api: ReturnType<typeof apiClient>) => Number((await api.get('/wallet')).body.balance);
const jobCount = async (api: ReturnType<typeof apiClient>) => ((await api.get('/automation/jobs')).body.data as unknown[]).length;

describe('comparing insurers for one client (REST, real Chromium, the three demo portals)', () => {
  it('a dry run says what would run and cost, and enqueues nothing', async () => {
    const { test } = await cabinet();
    const res = await test.post('/automation/comparaisons', { ligne: 'auto', risque: RISK_EXAMPLES.auto, dry_run: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const dry = comparisonDryRunSchema.parse(res.body);
    expect(dry.compagnies.map((c) => [c.compagnie, c.produit, c.would_run, c.cost_credits])).toEqual([
      ['sandbox', 'auto', true, 10],
      ['horizon', 'voiture', true, 10],
      ['tradition', 'automobile', true, 10],
    ]);
    expect(dry.would_cost_credits).toBe(30);
    // A risk that leaves insurers' own questions open: named per insurer, with their words.
    const bare: AutoRisk = {
      ...RISK_EXAMPLES.auto,
      vehicule: { marque: 'Renault', modele: 'Clio', date_mise_circulation: '2022-04-01' },
      usage: { usage: 'prive', code_postal: '33000' },
    };
    const open = comparisonDryRunSchema.parse(
      (await test.post('/automation/comparaisons', { ligne: 'auto', risque: bare, dry_run: true })).body,
    );
    expect(open.compagnies.map((c) => [c.compagnie, c.would_run, c.missing_answers.map((q) => q.code)])).toEqual([
      ['sandbox', true, []],
      ['horizon', false, ['kilometrage_annuel', 'stationnement']],
      ['tradition', false, ['puissance_fiscale']],
    ]);
    expect(await jobCount(test)).toBe(0);
    expect(await balance(test)).toBe(300);
  });

  it('prices a car at the three insurers at once: offers side by side, guarantees under the line’s codes, quotes attached to the client', async () => {
    const { test, id } = await cabinet();
    const client = await test.post('/clients', { last_name: 'Martin', first_name: 'Léa', email: 'lea.martin@example.fr' });
    expect(client.status).toBe(201);
    const res = await test.post(
      '/automation/comparaisons',
      { ligne: 'auto', risque: RISK_EXAMPLES.auto, client_id: client.body.id },
      { 'Idempotency-Key': 'cmp-auto-1' },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const enqueued = comparisonEnqueuedSchema.parse(res.body);
    expect(enqueued.jobs.map((j) => [j.compagnie, j.produit])).toEqual([
      ['sandbox', 'auto'],
      ['horizon', 'voiture'],
      ['tradition', 'automobile'],
    ]);
    expect(enqueued.credits_consumed).toBe(30);
    // The same Idempotency-Key answers the same comparison, and enqueues nothing more.
    const again = await test.post(
      '/automation/comparaisons',
      { ligne: 'auto', risque: RISK_EXAMPLES.auto, client_id: client.body.id },
      { 'Idempotency-Key': 'cmp-auto-1' },
    );
    expect(again.body).toEqual(res.body);

    const done = await settled(test, enqueued.comparaison_id);
    expect(done.status, JSON.stringify(done.resultats.map((r) => r.error))).toBe('completed');
    expect(done.client_id).toBe(client.body.id);
    const [sandbox, horizon, tradition] = done.resultats;
    expect(sandbox).toMatchObject({ compagnie: 'sandbox', status: 'completed', pdf_url: expect.stringMatching(/\/pdf$/) as string });
    expect(sandbox?.offres).toEqual([expect.objectContaining({ formule: 'tarif', prime_annuelle_eur: sandbox?.tarif_eur })]);
    expect(horizon?.offres.map((o) => o.formule)).toEqual(['tiers', 'tiers_plus', 'tous_risques']);
    const comprehensive = horizon?.offres[2];
    expect(comprehensive?.prime_annuelle_eur).toBe(horizon?.tarif_eur);
    expect(comprehensive?.garanties.map((g) => [g.code, g.incluse])).toEqual([
      ['responsabilite_civile', true],
      ['defense_recours', true],
      ['bris_de_glace', true],
      ['vol_incendie', true],
      ['dommages_tous_accidents', true],
      ['assistance', true],
    ]);
    expect(tradition).toMatchObject({ status: 'completed', tarif_eur: expect.any(Number) as number });
    expect(done.credits_consumed).toBe(30);
    for (const resultat of done.resultats)
      expect((await test.get(`/devis/${resultat.devis_id}`)).body).toMatchObject({ client_id: client.body.id });

    // Once every insurer answered, comparaison.completed, once, with no personal data.
    const completedEvents = async () => listEvents(server.deps, id).filter((e) => e.type === 'comparaison.completed');
    await expect.poll(async () => (await completedEvents()).length).toBe(1);
    expect((await completedEvents())[0]?.data).toMatchObject({
      comparaison_id: enqueued.comparaison_id,
      status: 'completed',
      client_id: client.body.id,
      resultats: done.resultats.map((r) => ({ compagnie: r.compagnie, job_id: r.job_id, tarif_eur: r.tarif_eur })),
    });
    expect(JSON.stringify((await completedEvents())[0]?.data)).not.toContain('Martin');

    const listed = await test.get(`/automation/comparaisons?client_id=${String(client.body.id)}`);
    expect((listed.body.data as Comparison[]).map((c) => c.comparaison_id)).toEqual([enqueued.comparaison_id]);
  }, 120_000);

  it('one insurer down: partial, the others’ offers intact, its credits refunded', async () => {
    const { test } = await cabinet();
    modes.set('tradition', 'down');
    try {
      const res = await test.post('/automation/comparaisons', { ligne: 'mrh', risque: RISK_EXAMPLES.mrh });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const done = await settled(test, String(res.body.comparaison_id));
      expect(done.status).toBe('partial');
      expect(done.resultats.map((r) => [r.compagnie, r.status, r.error?.code ?? null])).toEqual([
        ['sandbox', 'completed', null],
        ['horizon', 'completed', null],
        ['tradition', 'failed', 'insurer_unavailable'],
      ]);
      expect(done.resultats[1]?.offres.map((o) => o.formule)).toEqual(['essentielle', 'confort', 'premium']);
      expect(done.credits_consumed).toBe(20);
      expect(await balance(test)).toBe(280);
    } finally {
      modes.delete('tradition');
    }
  }, 120_000);

  it('a code asked by one insurer does not hold up the others: they finish while it waits for the person', async () => {
    const { id, prod } = await cabinet();
    setInsurerCredentials(server.deps, id, 'sandbox', { login: 'demo-mfa', password: 'demo' });
    setInsurerCredentials(server.deps, id, 'horizon', { login: 'demo', password: 'demo' });
    setInsurerCredentials(server.deps, id, 'tradition', { login: 'demo', password: 'demo' });
    const res = await prod.post('/automation/comparaisons', { ligne: 'auto', risque: RISK_EXAMPLES.auto });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const comparisonId = String(res.body.comparaison_id);
    const read = async () => comparisonSchema.parse((await prod.get(`/automation/comparaisons/${comparisonId}`)).body);
    // Horizon and Tradition price while the sandbox waits for its SMS code.
    await expect
      .poll(async () => (await read()).resultats.map((r) => r.status), { timeout: 90_000, interval: 100 })
      .toEqual(['mfa_required', 'completed', 'completed']);
    expect((await read()).status).toBe('running');
    const phone = await server.request('/sandbox/insurer/phone?format=json');
    const code = ((await phone.json()) as { messages: { code: string }[] }).messages[0]?.code;
    const sandboxJob = (await read()).resultats[0]!.job_id;
    expect((await prod.post(`/automation/jobs/${sandboxJob}/mfa`, { code })).status).toBe(200);
    const done = await settled(prod, comparisonId);
    expect(done.status).toBe('completed');
    expect(done.resultats.every((r) => r.tarif_eur !== null)).toBe(true);
  }, 120_000);

  it('refuses bad input with a stable code, enqueuing and debiting nothing', async () => {
    const { test, prod, id } = await cabinet();
    const post = (api: typeof test, body: Record<string, unknown>) => api.post('/automation/comparaisons', body);
    expectError(await post(test, { ligne: 'moto', risque: {} }), 400, 'validation_error');
    // Every missing field of the risk is named.
    const missing = expectError(
      await post(test, { ligne: 'auto', risque: { ...RISK_EXAMPLES.auto, conducteur: { nom: 'Martin' } } }),
      400,
      'validation_error',
    );
    expect(JSON.stringify(missing.details)).toContain('body.risque.conducteur.date_naissance');
    expect(JSON.stringify(missing.details)).toContain('body.risque.conducteur.crm');
    expectError(await post(test, { ligne: 'auto', risque: RISK_EXAMPLES.auto, compagnies: ['nobody'] }), 404, 'unknown_insurer');
    // A live key: an insurer that does not price the line, and one whose login the cabinet did not set.
    expectError(await post(prod, { ligne: 'auto', risque: RISK_EXAMPLES.auto, compagnies: ['testco'] }), 422, 'line_not_priced');
    expectError(
      await post(prod, { ligne: 'auto', risque: RISK_EXAMPLES.auto, compagnies: ['horizon'] }),
      409,
      'insurer_credentials_missing',
    );
    expectError(await post(prod, { ligne: 'auto', risque: RISK_EXAMPLES.auto }), 422, 'no_insurer_available');
    // Open questions, and an answer of the wrong kind.
    const bare = { ...RISK_EXAMPLES.auto, vehicule: { marque: 'Renault', modele: 'Clio', date_mise_circulation: '2022-04-01' } };
    const open = expectError(await post(test, { ligne: 'auto', risque: bare }), 422, 'answers_missing');
    expect(open).toMatchObject({ error: 'answers_missing', details: { questions: { tradition: [{ code: 'puissance_fiscale' }] } } });
    const wrong = expectError(
      await post(test, { ligne: 'auto', risque: bare, reponses: { tradition: { puissance_fiscale: 'beaucoup' } } }),
      400,
      'validation_error',
    );
    expect(JSON.stringify(wrong.details)).toContain('body.reponses.tradition.puissance_fiscale');
    // A home the named insurer declines.
    const landlord = { ...RISK_EXAMPLES.mrh, occupation: 'proprietaire_non_occupant' };
    expect(
      expectError(await post(test, { ligne: 'mrh', risque: landlord, compagnies: ['sandbox'] }), 422, 'risk_not_accepted').message,
    ).toBe('Sandbox Assurances n’assure pas les propriétaires non occupants.');
    expect(await jobCount(test)).toBe(0);
    expect(await balance(test)).toBe(300);
    // Asked of every insurer, the one that declines is left out, and said so.
    setInsurerCredentials(server.deps, id, 'horizon', { login: 'demo', password: 'demo' });
    const dry = comparisonDryRunSchema.parse((await post(test, { ligne: 'mrh', risque: landlord, dry_run: true })).body);
    expect(dry.compagnies.map((c) => [c.compagnie, c.would_run, c.raison])).toEqual([
      ['horizon', true, null],
      ['tradition', true, null],
      ['sandbox', false, 'risk_declined'],
    ]);
  });
});
