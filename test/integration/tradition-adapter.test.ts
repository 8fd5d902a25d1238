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
import { traditionPortalPlugin } from '../../server/sandbox-portals/tradition/index.js';
import { testClock } from '../helpers/server.js';
import { traditionInsurer } from '../helpers/tradition-insurer.js';

const target = browserCandidates({ platform: process.platform, headed: false, exists: existsSync })[0];
const CHROMIUM = target && 'executablePath' in target ? target.executablePath : '/usr/bin/chromium';
const PREFIX = '/sandbox/tradition';
const clock = testClock(); // 2026-11-22T09:00:00Z
let mode: SandboxMode = 'normal';
let app: FastifyInstance;
let origin: string;
let browser: Browser;
const timeouts = { actionMs: 2_000, navigationMs: 5_000, downloadMs: 3_000 };
const adapter: Insurer = traditionInsurer({ portalUrl: () => `${origin}${PREFIX}`, timeouts, pdf: { intervalMs: 0 } });
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = Fastify();
  await app.register(traditionPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => 0 });
  origin = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: BROWSER_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});
beforeEach(() => {
  mode = 'normal';
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});

/** A RobotContext like the worker's: a fresh browser context, a person answering with `answer`. */
function harness(
  options: {
    login?: string;
    password?: string;
    answer?: (step: HumanStep) => Promise<string>;
    present?: boolean;
    onProgress?: (step: string) => void;
  } = {},
) {
  const progress: string[] = [];
  const asked: HumanStep[] = [];
  let submitted = false;
  const ctx: RobotContext = {
    jobId: 'job-test',
    credentials: () => ({ login: options.login ?? 'demo', password: options.password ?? 'demo', extra: {} }),
    async openPage() {
      const context = await browser.newContext({ locale: 'fr-FR' });
      contexts.push(context);
      return context.newPage();
    },
    withSecrets: (_secrets, work) => work(),
    progress(step) {
      progress.push(step);
      options.onProgress?.(step);
    },
    ...humanSteps(
      ['captcha'],
      async (step) => {
        asked.push(step);
        if (!options.answer) throw new Error('nobody asked');
        return options.answer(step);
      },
      options.present ?? true,
    ),
    markSubmitted() {
      submitted = true;
    },
    signal: new AbortController().signal,
  };
  return { ctx, progress, asked, submitted: () => submitted };
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

async function lastCaptcha(): Promise<string> {
  const res = await fetch(`${origin}${PREFIX}/phone?format=json`);
  return ((await res.json()) as { captchas: { text: string }[] }).captchas[0]?.text ?? '';
}

describe('the Tradition adapter', () => {
  it('has examples that pass their schemas, product codes of its own, and declares the captcha', () => {
    expect(adapter.products.map((p) => p.code)).toEqual(['automobile', 'habitation', 'rc_pro']);
    for (const p of adapter.products) expect(p.schema.safeParse(p.example).success).toBe(true);
    expect(adapter.humanSteps).toEqual(['captcha']);
  });
});

describe.skipIf(!existsSync(CHROMIUM))('the Tradition robot against its portal, in Chromium', () => {
  it('prices an automobile quote inside the frames, waits for the PDF to be prepared, and downloads it', async () => {
    const h = harness();
    const result = await adapter.run(h.ctx, { produit: 'automobile', dicData: example('automobile') });
    expect(result).toMatchObject({ tarif_eur: 530.56, outcome: 'complete' });
    expect(result.pdf?.toString('latin1')).toContain('prime annuelle 530,56 EUR');
    expect(h.submitted()).toBe(true);
    expect(h.progress).toEqual(expect.arrayContaining(['souscripteur', 'vehicule', 'garanties', 'pricing', 'waiting for the PDF']));
  });

  it('prices a home quote and an RC Pro quote at the portal’s formulas', async () => {
    expect(await adapter.run(harness().ctx, { produit: 'habitation', dicData: example('habitation') })).toMatchObject({
      tarif_eur: 283.13,
      outcome: 'complete',
    });
    const rc = { ...example('rc_pro'), annee_creation: 2025, sinistres_3_ans: 1, code_activite: '7111Z' };
    // max(250, 216) × 2 × 1.04 × 1.25 × 1.2 = 780
    expect(await adapter.run(harness().ctx, { produit: 'rc_pro', dicData: rc })).toMatchObject({ tarif_eur: 780, outcome: 'complete' });
  });

  it('asks a person for the captcha of demo-captcha (the PNG), again with the portal’s message after a wrong answer', async () => {
    let answers = 0;
    const h = harness({
      login: 'demo-captcha',
      answer: async () => (++answers === 1 ? 'ZZZZZ' : lastCaptcha()),
    });
    const result = await adapter.run(h.ctx, { produit: 'habitation', dicData: example('habitation') });
    expect(result.tarif_eur).toBe(283.13);
    expect(h.asked).toHaveLength(2);
    const [first, second] = h.asked;
    expect(first).toMatchObject({ kind: 'captcha', image: { mime: 'image/png' } });
    expect(first?.kind === 'captcha' && Buffer.from(first.image.base64, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(second?.prompt).toMatch(/^Code de sécurité incorrect\. Un nouveau code vous est proposé \(2 essai\(s\) restant\(s\)\)\./);
  });

  it('stops at once with human_required when nobody is there to read the captcha', async () => {
    const err = await robotError(
      adapter.run(harness({ login: 'demo-captcha', present: false }).ctx, { produit: 'rc_pro', dicData: example('rc_pro') }),
    );
    expect(err).toMatchObject({ kind: 'technical', code: 'human_required' });
  });

  it('logs in again and resumes its draft when the portal’s session expires mid-wizard', async () => {
    let expired = false;
    const h = harness({
      onProgress: (step) => {
        // 3 idle minutes pass on the portal's clock while the robot is at the second step.
        if (step === 'biens' && !expired) {
          expired = true;
          clock.advance(3 * 60_000 + 1_000);
        }
      },
    });
    const result = await adapter.run(h.ctx, { produit: 'habitation', dicData: example('habitation') });
    expect(result).toMatchObject({ tarif_eur: 283.13, outcome: 'complete' });
    expect(h.progress.filter((s) => s === 'session expired: logging in again')).toHaveLength(1);
    expect(h.progress.filter((s) => s === 'biens')).toHaveLength(2);
  });

  it('returns a partial result (priced, no PDF) when the PDF is not ready within its refreshes', async () => {
    const impatient = traditionInsurer({ portalUrl: () => `${origin}${PREFIX}`, timeouts, pdf: { maxRefreshes: 1, intervalMs: 0 } });
    const result = await impatient.run(harness().ctx, { produit: 'rc_pro', dicData: example('rc_pro') });
    expect(result).toEqual({ tarif_eur: 260, outcome: 'partial' });
  });

  it('passes the portal’s refusal on as business data_refused', async () => {
    const young = { ...example('automobile'), date_naissance: '2012-01-01' };
    const err = await robotError(adapter.run(harness().ctx, { produit: 'automobile', dicData: young }));
    expect(err).toMatchObject({
      kind: 'business',
      code: 'data_refused',
      message: '« Date de naissance » : entre 18 et 99 ans avant ce jour.',
    });
  });

  it('reports a wrong password as business invalid_credentials, and a portal down as insurer_unavailable', async () => {
    const wrong = await robotError(adapter.run(harness({ password: 'nope' }).ctx, { produit: 'rc_pro', dicData: example('rc_pro') }));
    expect(wrong).toMatchObject({ kind: 'business', code: 'invalid_credentials' });
    mode = 'down';
    const down = await robotError(adapter.run(harness().ctx, { produit: 'rc_pro', dicData: example('rc_pro') }));
    expect(down).toMatchObject({ kind: 'technical', code: 'insurer_unavailable' });
  });

  it('on the redesign (mode changed), fails as portal_changed naming the step, before typing anything', async () => {
    mode = 'changed';
    const err = await robotError(adapter.run(harness().ctx, { produit: 'automobile', dicData: example('automobile') }));
    expect(err).toMatchObject({ kind: 'technical', code: 'portal_changed', details: { step: 'souscripteur' } });
    expect((err.details as { missing: string[] }).missing).toContain('heading "Devis Automobile — Étape 1/3 — Souscripteur"');
  });

  it('checks a login without answering the captcha', async () => {
    expect(await adapter.verifyLogin!(harness().ctx)).toEqual({ mfa: false });
    expect(await adapter.verifyLogin!(harness({ login: 'demo-captcha' }).ctx)).toEqual({ mfa: true });
  });
});
