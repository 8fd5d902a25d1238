// @module-tag browser
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { humanSteps, RobotError, type HumanStep, type RobotContext, type RobotResult } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';
import { BROWSER_ARGS, browserCandidates } from '../../server/robots/browser.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { horizonPortalPlugin } from '../../server/sandbox-portals/horizon/index.js';
import { horizonInsurer } from '../helpers/horizon-insurer.js';
import { testClock } from '../helpers/server.js';

const target = browserCandidates({ platform: process.platform, headed: false, exists: existsSync })[0];
const CHROMIUM = target && 'executablePath' in target ? target.executablePath : '/usr/bin/chromium';
const PREFIX = '/sandbox/horizon';
const clock = testClock(); // 2026-11-22T09:00:00Z
let mode: SandboxMode = 'normal';
let latency = 0;
let app: FastifyInstance;
let origin: string;
let browser: Browser;
const adapter: Insurer = horizonInsurer({
  portalUrl: () => `${origin}${PREFIX}`,
  timeouts: { actionMs: 3_000, navigationMs: 5_000, downloadMs: 3_000 },
});
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = Fastify();
  await app.register(horizonPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => latency });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: BROWSER_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});
beforeEach(() => {
  mode = 'normal';
  latency = 0;
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

async function pendingApprovals(): Promise<{ id: string; status: string; approve_url: string }[]> {
  const res = await fetch(`${origin}${PREFIX}/phone?format=json`);
  return ((await res.json()) as { approvals: { id: string; status: string; approve_url: string }[] }).approvals.filter(
    (a) => a.status === 'pending',
  );
}

/** What the person does on the phone before saying they approved: approve the request, or not. */
async function approveOnPhone(): Promise<void> {
  const [request] = await pendingApprovals();
  if (!request) throw new Error('no approval request on the phone');
  const res = await fetch(`${origin}${request.approve_url}`, { method: 'POST', headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
}

function harness(options: { login?: string; password?: string; present?: boolean; onApproval?: (ask: number) => Promise<void> } = {}) {
  const asked: HumanStep[] = [];
  let submitted = false;
  const progress: [string, number][] = [];
  const ctx: RobotContext = {
    jobId: 'job-test',
    credentials: () => ({ login: options.login ?? 'demo', password: options.password ?? 'demo', extra: {} }),
    async openPage() {
      const context = await browser.newContext({ locale: 'fr-FR', acceptDownloads: true });
      contexts.push(context);
      return context.newPage();
    },
    withSecrets: (_secrets, work) => work(),
    progress: (step, percent) => void progress.push([step, percent]),
    ...humanSteps(
      adapter.humanSteps,
      async (step) => {
        asked.push(step);
        if (!options.onApproval) throw new Error('no human step expected');
        await options.onApproval(asked.length);
        return 'approved';
      },
      options.present ?? true,
    ),
    markSubmitted: () => void (submitted = true),
    signal: new AbortController().signal,
  };
  return { ctx, asked, progress, submitted: () => submitted };
}

const example = (code: string) => adapter.products.find((p) => p.code === code)!.example;

async function robotError(run: Promise<RobotResult>): Promise<RobotError> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RobotError);
  return err as RobotError;
}

describe.skipIf(!existsSync(CHROMIUM))('the Horizon robot against its single-page portal, in Chromium', () => {
  it('prices a car quote with every formula, the chosen one’s premium, its PDF, conditions and IPID', async () => {
    const h = harness();
    const result = await adapter.run(h.ctx, { produit: 'voiture', dicData: example('voiture') });
    expect(result.tarif_eur).toBe(640.12);
    expect(result.outcome).toBe('complete');
    expect(result.offres?.map((o) => [o.formule, o.libelle, o.prime_annuelle_eur, o.prime_mensuelle_eur, o.franchise_eur])).toEqual([
      ['tiers', 'Tiers', 304.82, 26.16, 0],
      ['tiers_plus', 'Tiers+', 426.75, 36.63, 250],
      ['tous_risques', 'Tous risques', 640.12, 54.94, 400],
    ]);
    expect(result.offres?.[2]?.garanties.map((g) => g.code)).toEqual([
      'rc',
      'defense_recours',
      'bris_de_glace',
      'vol',
      'incendie',
      'dommages_tous_accidents',
      'assistance_0km',
    ]);
    expect(result.offres?.[0]?.garanties.find((g) => g.code === 'vol')).toMatchObject({ incluse: false, plafond_eur: null });
    expect(result.pdf?.toString('latin1')).toContain('prime annuelle 640,12 EUR');
    expect(result.documents?.map((d) => [d.kind, d.label, d.pdf.subarray(0, 5).toString('latin1')])).toEqual([
      ['conditions', 'Conditions générales', '%PDF-'],
      ['information', 'Document d’information (IPID)', '%PDF-'],
    ]);
    expect(h.submitted()).toBe(true);
    expect(h.asked).toEqual([]);
    const percents = h.progress.map(([, p]) => p);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(h.progress.map(([s]) => s)).toEqual(expect.arrayContaining(['logging in', 'driver', 'vehicle', 'reading the offers']));
  });

  it('with demo-app, sends the approval, asks again while the phone has not approved, then prices a home quote', async () => {
    const h = harness({
      login: 'demo-app',
      onApproval: async (ask) => {
        if (ask === 2) await approveOnPhone();
      },
    });
    const result = await adapter.run(h.ctx, { produit: 'logement', dicData: example('logement') });
    expect(result.tarif_eur).toBe(205);
    expect(result.offres?.map((o) => o.formule)).toEqual(['essentielle', 'confort', 'premium']);
    expect(h.asked.map((s) => s.kind)).toEqual(['app_approval', 'app_approval']);
    expect(h.asked[0]?.prompt).toMatch(/^Validez la connexion dans l’application Horizon/);
    expect(h.asked[1]?.prompt).toMatch(/pas encore validée/);
  });

  it('gives up after 3 answers without an approval, or once the request expired; never pushes one when nobody is there', async () => {
    const refused = await robotError(
      adapter.run(harness({ login: 'demo-app', onApproval: async () => undefined }).ctx, {
        produit: 'voiture',
        dicData: example('voiture'),
      }),
    );
    expect(refused).toMatchObject({ kind: 'business', code: 'approval_refused' });

    // The person answers after the request expired (2 minutes on the portal's clock).
    const late = harness({ login: 'demo-app', onApproval: async () => clock.advance(2 * 60_000 + 1) });
    const expired = await robotError(adapter.run(late.ctx, { produit: 'voiture', dicData: example('voiture') }));
    expect(expired).toMatchObject({ kind: 'technical', code: 'mfa_timeout' });
    expect(late.asked).toHaveLength(1);

    const before = (await pendingApprovals()).length;
    const absent = harness({ login: 'demo-app', present: false });
    const err = await robotError(adapter.run(absent.ctx, { produit: 'voiture', dicData: example('voiture') }));
    expect(err).toMatchObject({ kind: 'technical', code: 'human_required' });
    expect(await pendingApprovals()).toHaveLength(before);
  });

  it('fails the redesign as portal_changed naming the step, before typing anything', async () => {
    mode = 'changed';
    const car = await robotError(adapter.run(harness().ctx, { produit: 'voiture', dicData: example('voiture') }));
    expect(car).toMatchObject({ kind: 'technical', code: 'portal_changed', details: { step: 'driver' } });
    expect((car.details as { missing: string[] }).missing).toEqual(expect.arrayContaining(['heading "Devis auto – Conducteur principal"']));
    const home = await robotError(adapter.run(harness().ctx, { produit: 'logement', dicData: example('logement') }));
    expect(home).toMatchObject({ code: 'portal_changed', details: { step: 'property' } });
  });

  it('reports the portal’s refusal of the data, a wrong password and an outage; waits out a slow portal', async () => {
    const young = await robotError(
      adapter.run(harness().ctx, {
        produit: 'voiture',
        dicData: { ...example('voiture'), date_naissance_conducteur: '2010-01-01', annee_permis: 2026 },
      }),
    );
    expect(young).toMatchObject({ kind: 'business', code: 'data_refused' });
    expect(young.message).toContain('Date de naissance du conducteur : Le conducteur doit avoir entre 18 et 99 ans.');

    const wrong = await robotError(adapter.run(harness({ password: 'nope' }).ctx, { produit: 'voiture', dicData: example('voiture') }));
    expect(wrong).toMatchObject({ kind: 'business', code: 'invalid_credentials' });

    // Slow: every request of the app waits; the robot waits on the answers, not on a clock.
    mode = 'slow';
    latency = 150;
    expect((await adapter.run(harness().ctx, { produit: 'logement', dicData: example('logement') })).tarif_eur).toBe(205);

    mode = 'down';
    const down = await robotError(adapter.run(harness().ctx, { produit: 'voiture', dicData: example('voiture') }));
    expect(down).toMatchObject({ kind: 'technical', code: 'insurer_unavailable' });
  });

  it('checks a login without pushing an approval', async () => {
    const before = (await pendingApprovals()).length;
    expect(await adapter.verifyLogin!(harness({ login: 'demo-app' }).ctx)).toEqual({ mfa: true });
    expect(await adapter.verifyLogin!(harness().ctx)).toEqual({ mfa: false });
    expect(await pendingApprovals()).toHaveLength(before);
  });
});
