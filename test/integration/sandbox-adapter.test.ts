// @module-tag browser
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { humanSteps, RobotError, type RobotContext, type RobotResult } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';
import { BROWSER_ARGS, browserCandidates } from '../../server/robots/browser.js';
import { loadInsurers } from '../../server/insurers/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { sandboxPortalPlugin } from '../../server/sandbox-portals/sandbox/index.js';
import { autoPremium, homePremium } from '../../server/sandbox-portals/sandbox/pricing.js';
import { testClock } from '../helpers/server.js';

// The browser the robots use here: Debian's headless shell when it is installed (browser.ts).
const target = browserCandidates({ platform: process.platform, headed: false, exists: existsSync })[0];
const CHROMIUM = target && 'executablePath' in target ? target.executablePath : '/usr/bin/chromium';
const PREFIX = '/sandbox/insurer';
const clock = testClock(); // 2026-11-22T09:00:00Z: ages in the premiums are taken on this day
let mode: SandboxMode = 'normal';
let app: FastifyInstance;
let origin: string;
let browser: Browser;
// portalUrl is read at each run, once the server listens.
const adapter: Insurer = sandboxInsurer({
  portalUrl: () => `${origin}${PREFIX}`,
  timeouts: { actionMs: 2_000, navigationMs: 5_000, downloadMs: 2_000 },
});
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = Fastify();
  await app.register(sandboxPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => 0 });
  // A portal whose login form was redesigned: the robot's labels are gone. Its quote, as any page
  // behind the login, sends a browser without a session to that form.
  app.get('/redesigned/devis/auto', async (_request, reply) => reply.redirect('/redesigned/login', 303));
  app.get('/redesigned/login', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><html lang="fr"><title>x</title><h1>Espace courtier – Sandbox Assurances</h1><label for="u">Login</label><input id="u"><button>Connexion</button></html>',
      ),
  );
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: BROWSER_ARGS,
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

beforeEach(() => {
  mode = 'normal';
});

afterEach(async () => {
  // The worker's job: close each run's browser context.
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

interface Harness {
  ctx: RobotContext;
  progress: [string, number][];
  challenges: string[];
  submitted: () => boolean;
}

/** A RobotContext like the worker's: a page in a fresh browser context (or `page`, as resumed), MFA answered by `onMfa`. */
function harness(
  options: {
    page?: Page;
    login?: string;
    password?: string;
    onMfa?: (challenge: string, attempt: number) => Promise<string>;
    signal?: AbortSignal;
    onProgress?: (step: string) => void;
  } = {},
): Harness {
  const progress: [string, number][] = [];
  const challenges: string[] = [];
  let submitted = false;
  const ctx: RobotContext = {
    jobId: 'job-test',
    credentials: () => ({ login: options.login ?? 'demo', password: options.password ?? 'demo', extra: {} }),
    async openPage() {
      if (options.page) return options.page;
      const context = await browser.newContext({ locale: 'fr-FR' });
      contexts.push(context);
      return context.newPage();
    },
    withSecrets: (_secrets, work) => work(),
    progress(step, percent) {
      progress.push([step, percent]);
      options.onProgress?.(step);
    },
    ...humanSteps(undefined, async (step) => {
      challenges.push(step.prompt);
      if (!options.onMfa) throw new Error('no MFA expected');
      return options.onMfa(step.prompt, challenges.length);
    }),
    markSubmitted() {
      submitted = true;
    },
    signal: options.signal ?? new AbortController().signal,
  };
  return { ctx, progress, challenges, submitted: () => submitted };
}

async function phoneCode(): Promise<string> {
  const res = await fetch(`${origin}${PREFIX}/phone?format=json`);
  const body = (await res.json()) as { messages: { code: string }[] };
  const code = body.messages[0]?.code;
  if (!code) throw new Error('no SMS on the sandbox phone');
  return code;
}

const product = (code: string) => {
  const found = adapter.products.find((p) => p.code === code);
  if (!found) throw new Error(code);
  return found;
};
const AUTO = product('auto').example;
const MRH = product('mrh').example;

async function robotError(run: Promise<RobotResult>): Promise<RobotError> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RobotError);
  return err as RobotError;
}

describe('the sandbox adapter', () => {
  it('is loaded from its package only when the service serves its portal', async () => {
    const config = { dataDir: '/nonexistent', policyFile: '/nonexistent' };
    expect((await loadInsurers(config, { serviceUrl: undefined })).insurers).toEqual([]);
    const sandbox = (await loadInsurers(config, { serviceUrl: () => 'http://127.0.0.1:1' })).insurers.find((i) => i.code === 'sandbox');
    expect(sandbox?.code).toBe('sandbox');
    expect(sandbox?.name).toBe('Sandbox Assurances');
    expect(sandbox?.products.map((p) => [p.code, p.kind])).toEqual([
      ['auto', 'quote'],
      ['mrh', 'quote'],
      ['attestation', 'routine'],
    ]);
  });

  it('has examples that pass their schemas, and labels on every field', () => {
    for (const p of adapter.products) {
      expect(p.schema.safeParse(p.example).success).toBe(true);
      const json = z.toJSONSchema(p.schema, { io: 'input' }) as { properties: Record<string, { description?: string }> };
      for (const [key, property] of Object.entries(json.properties)) expect(property.description, key).toBeTruthy();
    }
    const auto = product('auto').schema;
    expect(auto.safeParse({ ...AUTO, vehicle_model: undefined }).success).toBe(false);
    expect(auto.safeParse({ ...AUTO, vehicle_make: undefined, vehicle_model: undefined, registration: 'AB-123-CD' }).success).toBe(true);
  });
});

describe.skipIf(!existsSync(CHROMIUM))('the sandbox robot against the portal, in Chromium', () => {
  it('prices an auto quote with demo, at the portal’s formula, with its PDF', async () => {
    const h = harness();
    const result = await adapter.run(h.ctx, { produit: 'auto', dicData: AUTO });
    const expected = autoPremium(
      {
        driverBirthDate: '1980-05-14',
        licenceDate: '2000-06-01',
        bonusMalus: 0.85,
        postcode: '69003',
        usage: 'prive',
        formula: 'tous_risques',
      },
      clock.now(),
    );
    expect(expected).toBe(705.76);
    expect(result.tarif_eur).toBe(expected);
    expect(result.outcome).toBe('complete');
    expect(result.suspens).toBe('Relevé d’information');
    expect(result.pdf?.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect((await PDFDocument.load(result.pdf!)).getTitle()).toBe('Devis auto – 705,76\u00a0€ – Jean Dupont');
    expect(result.pdf?.toString('latin1')).toContain('prime annuelle 705,76 EUR');
    expect(h.submitted()).toBe(true);
    const percents = h.progress.map(([, p]) => p);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(h.progress.map(([s]) => s)).toEqual(
      expect.arrayContaining(['logging in', 'driver', 'vehicle', 'formula', 'pricing', 'reading the result', 'downloading the PDF']),
    );
    expect(h.challenges).toEqual([]);
  });

  it('prices an auto quote by registration alone', async () => {
    const dicData = {
      ...AUTO,
      vehicle_make: undefined,
      vehicle_model: undefined,
      registration: 'AB-123-CD',
      formula: 'tiers',
      usage: 'mixte',
    };
    const result = await adapter.run(harness().ctx, { produit: 'auto', dicData });
    // 380 × 0.85 × 1.15 (mixte) × 1 (tiers) × 1.15 (Rhône) = 427.1675
    expect(result.tarif_eur).toBe(427.17);
  });

  it('prices a home quote (mrh)', async () => {
    const h = harness();
    const result = await adapter.run(h.ctx, { produit: 'mrh', dicData: MRH });
    const expected = homePremium({
      dwellingType: 'appartement',
      surfaceM2: 62,
      rooms: 3,
      postcode: '75011',
      occupantStatus: 'locataire',
      contentsCapitalEur: 15000,
    });
    expect(expected).toBe(235.69);
    expect(result).toMatchObject({ tarif_eur: expected, outcome: 'complete' });
    expect(result.suspens).toBeUndefined();
    expect((await PDFDocument.load(result.pdf!)).getTitle()).toBe('Devis habitation – 235,69\u00a0€ – Marie Curie');
    expect(h.submitted()).toBe(true);
  });

  it('logs in with demo-mfa, asking for the code the portal sent by SMS', async () => {
    const h = harness({ login: 'demo-mfa', onMfa: () => phoneCode() });
    const result = await adapter.run(h.ctx, { produit: 'mrh', dicData: MRH });
    expect(result.tarif_eur).toBe(235.69);
    expect(h.challenges).toEqual(['Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.']);
  });

  it('on a page still logged in from the login’s last job, goes straight to the form and types neither password nor code', async () => {
    let page: Page | undefined;
    const first = harness({ login: 'demo-mfa', onMfa: () => phoneCode() });
    const opened = first.ctx.openPage.bind(first.ctx);
    first.ctx.openPage = async () => (page = await opened());
    await adapter.run(first.ctx, { produit: 'auto', dicData: AUTO });
    expect(first.challenges).toHaveLength(1);

    const typed: string[][] = [];
    const visited: string[] = [];
    page?.on(
      'framenavigated',
      (frame) => void (frame === page?.mainFrame() && visited.push(new URL(frame.url()).pathname.slice(PREFIX.length))),
    );
    const resumed = harness({ page, login: 'demo-mfa' });
    resumed.ctx.withSecrets = (secrets, work) => (typed.push([...secrets]), work());
    const result = await adapter.run(resumed.ctx, { produit: 'mrh', dicData: MRH });
    expect(result.tarif_eur).toBe(235.69);
    expect(resumed.challenges).toEqual([]);
    expect(typed).toEqual([]);
    // Neither the login page nor the home page: one navigation less than a fresh job's.
    expect(visited[0]).toBe('/devis/habitation/logement');
    expect(visited.filter((path) => path === '/login' || path === '/accueil')).toEqual([]);
  });

  it('asks again with the portal’s message after a wrong code', async () => {
    const h = harness({
      login: 'demo-mfa',
      onMfa: async (_challenge, attempt) => {
        const code = await phoneCode();
        return attempt === 1 ? (code === '000000' ? '111111' : '000000') : code;
      },
    });
    const result = await adapter.run(h.ctx, { produit: 'mrh', dicData: MRH });
    expect(result.outcome).toBe('complete');
    expect(h.challenges).toHaveLength(2);
    expect(h.challenges[1]).toBe('Code incorrect. Il vous reste 2 essai(s). Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.');
  });

  it('gives up after the portal’s three tries: business mfa_rejected', async () => {
    const h = harness({ login: 'demo-mfa', onMfa: async () => 'abcdef' });
    const err = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['business', 'mfa_rejected']);
    expect(err.message).toContain('Trop d’essais');
    expect(h.challenges).toHaveLength(3);
    expect(h.submitted()).toBe(false);
  });

  it('reports a wrong password as business invalid_credentials (Courtier refunds it; the breaker does not count it)', async () => {
    const h = harness({ password: 'wrong' });
    const err = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['business', 'invalid_credentials']);
    expect(err.message).toContain('Identifiant ou mot de passe incorrect.');
    expect(h.submitted()).toBe(false);
  });

  it('reports a portal that is down as technical insurer_unavailable', async () => {
    mode = 'down';
    const err = await robotError(adapter.run(harness().ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'insurer_unavailable']);
  });

  it('reports a flaky portal (503 in the middle of the form) as technical insurer_unavailable', async () => {
    mode = 'flaky';
    const err = await robotError(adapter.run(harness().ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'insurer_unavailable']);
    expect(err.message).toContain('Service momentanément indisponible');
  });

  it('reports an unreachable portal as technical insurer_unavailable', async () => {
    const closed = Fastify();
    const url = await closed.listen({ host: '127.0.0.1', port: 0 });
    await closed.close();
    const offline = sandboxInsurer({ portalUrl: () => `${url}${PREFIX}`, timeouts: { navigationMs: 3_000 } });
    const err = await robotError(offline.run(harness().ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'insurer_unavailable']);
  });

  it('reports a redesigned page as technical portal_changed, naming the step and what is missing, before typing anything', async () => {
    const redesigned = sandboxInsurer({ portalUrl: () => `${origin}/redesigned`, timeouts: { actionMs: 2_000 } });
    const err = await robotError(redesigned.run(harness().ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'portal_changed']);
    expect(err.message).toMatch(/^The insurer's portal changed at the step "login": textbox "Identifiant courtier"/);
    expect(err.details).toMatchObject({
      step: 'login',
      missing: expect.arrayContaining(['textbox "Identifiant courtier"', 'textbox "Mot de passe"']) as unknown,
      found: { path: '/redesigned/login' },
    });
  });

  it('on the portal’s redesign (mode changed), fails the auto quote at its driver step and the home quote at its dwelling step, as portal_changed', async () => {
    mode = 'changed';
    const h = harness();
    const auto = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: AUTO }));
    expect([auto.kind, auto.code]).toEqual(['technical', 'portal_changed']);
    expect(auto.details).toMatchObject({
      step: 'driver',
      found: {
        path: '/sandbox/insurer/devis/auto/besoins',
        landmarks: expect.arrayContaining(['heading "Devis auto – Vos besoins"']) as unknown,
      },
    });
    expect((auto.details as { missing: string[] }).missing).toEqual(
      expect.arrayContaining(['heading "Devis auto – Conducteur"', 'textbox "Date de naissance du conducteur"']),
    );
    expect(h.submitted()).toBe(false);
    const home = await robotError(adapter.run(harness().ctx, { produit: 'mrh', dicData: product('mrh').example }));
    expect([home.code, (home.details as { step: string }).step]).toEqual(['portal_changed', 'dwelling']);
    expect(home.message).toBe('The insurer\'s portal changed at the step "dwelling": heading "Devis habitation – Logement" not found.');
  });

  it('passes the portal’s validation message on as business data_refused', async () => {
    const h = harness();
    // A licence at 10 years old: the schema cannot know, the portal refuses.
    const err = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: { ...AUTO, licence_date: '1990-06-01' } }));
    expect([err.kind, err.code]).toEqual(['business', 'data_refused']);
    expect(err.message).toBe('Le champ « Date d’obtention du permis » doit être postérieur aux 17 ans du conducteur.');
    expect(h.submitted()).toBe(false);
  });

  it('returns a partial result when the PDF cannot be downloaded', async () => {
    const quick = sandboxInsurer({ portalUrl: () => `${origin}${PREFIX}`, timeouts: { downloadMs: 1_000 } });
    const h = harness({ onProgress: (step) => void (step === 'downloading the PDF' && (mode = 'down')) });
    const result = await quick.run(h.ctx, { produit: 'auto', dicData: AUTO });
    expect(result).toEqual({ tarif_eur: 705.76, suspens: 'Relevé d’information', outcome: 'partial' });
  });

  it('gets an attestation (routine), and says when the contract does not exist', async () => {
    const h = harness();
    const result = await adapter.run(h.ctx, { produit: 'attestation', dicData: { policy_number: 'SBX-123456' } });
    expect(result.outcome).toBe('complete');
    expect(result.tarif_eur).toBe(0);
    expect((await PDFDocument.load(result.pdf!)).getTitle()).toBe('Attestation d’assurance – SBX-123456');
    expect(h.submitted()).toBe(false);
    const err = await robotError(adapter.run(harness().ctx, { produit: 'attestation', dicData: { policy_number: 'POL-999' } }));
    expect([err.kind, err.code]).toEqual(['business', 'policy_not_found']);
    expect(err.message).toContain('Contrat introuvable.');
  });

  it('stops at the next step when the job is cancelled', async () => {
    const controller = new AbortController();
    const h = harness({ signal: controller.signal, onProgress: (step) => step === 'vehicle' && controller.abort() });
    const err = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'cancelled']);
    expect(h.submitted()).toBe(false);
    expect(h.progress.map(([s]) => s)).not.toContain('formula');
  });

  it('stops while waiting for an MFA code when the job is cancelled', async () => {
    const controller = new AbortController();
    const h = harness({
      login: 'demo-mfa',
      signal: controller.signal,
      onMfa: () => {
        setTimeout(() => controller.abort(), 10);
        return new Promise<string>(() => undefined); // nobody answers
      },
    });
    const err = await robotError(adapter.run(h.ctx, { produit: 'auto', dicData: AUTO }));
    expect([err.kind, err.code]).toEqual(['technical', 'cancelled']);
  });
});
