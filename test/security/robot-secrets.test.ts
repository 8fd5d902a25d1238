// @module-tag browser
/**
 * No insurer password (or other secret a robot types) ever leaves the robot, and a failed run's
 * artifacts are for cabinet admins and keys with the automation:artifacts scope only.
 * Real Chromium, the real worker and browser runtime, the sandbox portal as the insurer.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobSchema, type Job } from '../../shared/automation.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { RobotError } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';
import { MASK_COLOR } from '../../server/robots/job-session.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { readZipEntries } from '../../server/robots/zip-entries.js';
import { sandboxPortalPlugin } from '../../server/sandbox-portals/sandbox/index.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { signInNewUser, type ConsoleClient } from '../helpers/console.js';
import { launchChromium } from '../helpers/oauth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { AUTO_DIC_DATA } from '../helpers/insurance-data.js';

/** A password unlike anything else on the pages, whose plain, URL-encoded and JSON-escaped forms all differ. */
const CANARY = 'Kanari+7f "quote" & <tag> 100% été/secret';
const WRONG_ACCOUNT = 'canary-wrong';
const ACCOUNT = 'canary';
const MFA_ACCOUNT = 'canary-mfa';

/** The forms the issue names, computed here (not with the service's own helper). */
function canaryForms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)];
}

function expectNoCanary(what: string, bytes: Buffer | string): void {
  const haystack = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'utf8');
  for (const form of canaryForms(CANARY))
    expect(haystack.includes(Buffer.from(form, 'utf8')), `${what} holds the password (${form})`).toBe(false);
}

let portal: FastifyInstance;
let portalUrl = '';
let server: TestServer;

/**
 * A robot that types the portal password where no robot should, outside withSecrets, into a plain
 * text field, then fails: the service itself must keep it out of every artifact.
 */
const careless: Insurer = {
  code: 'careless',
  name: 'Careless Assurances',
  version: '1.0.0',
  products: [{ code: 'auto', label: 'Auto', kind: 'quote', schema: z.object({ ref: z.string() }), example: { ref: 'x' } }],
  async run(ctx) {
    const page = await ctx.openPage();
    await page.setContent(
      '<h1>Espace courtier</h1><label for="p">Mot de passe</label>' +
        '<input id="p" type="text" style="position:absolute;left:40px;top:120px;width:600px;height:60px;font-size:40px">',
    );
    await page.getByLabel('Mot de passe').fill(ctx.credentials().password);
    throw new RobotError('technical', 'layout_changed', 'The careless robot gave up.');
  },
};

beforeAll(async () => {
  portal = Fastify();
  await portal.register(sandboxPortalPlugin, {
    prefix: '/sandbox/insurer',
    clock: { now: () => Date.now() },
    randomBytes,
    mode: () => 'normal',
    latencyMs: () => 0,
    accounts: new Map([
      [WRONG_ACCOUNT, { password: 'the real one', mfa: false, displayName: 'Cabinet Canari' }],
      [ACCOUNT, { password: CANARY, mfa: false, displayName: 'Cabinet Canari' }],
      [MFA_ACCOUNT, { password: CANARY, mfa: true, displayName: 'Cabinet Canari' }],
    ]),
  });
  portalUrl = `${await portal.listen({ host: '127.0.0.1', port: 0 })}/sandbox/insurer`;
  server = await startTestServer({
    insurers: [
      sandboxInsurer({ portalUrl: () => portalUrl, timeouts: { actionMs: 3_000, navigationMs: 8_000, downloadMs: 3_000 } }),
      careless,
    ],
    config: { tarificationQuotaPerHour: 1000 },
  });
}, 30_000);
afterAll(async () => {
  await server?.close();
  await portal?.close();
});

async function cabinetWith(login: string, compagnie = 'sandbox') {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 100);
  setInsurerCredentials(server.deps, id, compagnie, { login, password: CANARY });
  return { id, api: apiClient(server, server.createKey(id).key) };
}

function autoData(birthDate: string) {
  return { ...AUTO_DIC_DATA, driver_birth_date: birthDate };
}

async function runToEnd(api: ReturnType<typeof apiClient>, body: unknown, onMfa?: (job: Job) => Promise<void>): Promise<Job> {
  const enqueued = await api.post('/automation/tarifications', body);
  expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  const id = String(enqueued.body.job_id);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
    if (job.status === 'mfa_required' && onMfa) await onMfa(job);
    else if (['completed', 'partial', 'failed', 'cancelled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every artifact file of a job on disk, the trace's entries uncompressed. */
async function artifactFiles(jobId: string): Promise<{ name: string; data: Buffer }[]> {
  const dir = join(server.dataDir, 'artifacts', 'jobs', jobId);
  if (!existsSync(dir)) return [];
  const files: { name: string; data: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const data = readFileSync(join(dir, name));
    files.push({ name, data });
    if (name.endsWith('.zip'))
      for (const entry of await readZipEntries(data)) files.push({ name: `${name}:${entry.name}`, data: entry.data });
  }
  return files;
}

/** Checks everything a job left: files, the artifact downloads, the job's API answer, its events, the logs. */
async function expectJobHoldsNoCanary(cabinetId: string, job: Job): Promise<void> {
  for (const file of await artifactFiles(job.job_id)) expectNoCanary(file.name, file.data);
  const reader = server.createKey(cabinetId, { scopes: ['automation:read', 'automation:artifacts'] }).key;
  for (const url of [job.artifacts?.screenshot_url, job.artifacts?.trace_url]) {
    if (!url) continue;
    const res = await server.request(url, { headers: { 'X-API-Key': reader } });
    expect(res.status).toBe(200);
    expectNoCanary(url, Buffer.from(await res.arrayBuffer()));
  }
  expectNoCanary('the job', JSON.stringify(job));
  expectNoCanary('the events', JSON.stringify(listEvents(server.deps, cabinetId)));
  expectNoCanary('the logs', server.logs.join(''));
}

/** The trace's actions (JSON lines of trace.trace). */
async function traceActions(jobId: string): Promise<{ method?: string; params?: Record<string, unknown> }[]> {
  const trace = (await artifactFiles(jobId)).find((f) => f.name === 'trace.zip:trace.trace');
  expect(trace, 'the job kept a trace').toBeDefined();
  return (trace?.data.toString('utf8') ?? '')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> });
}

describe('CWE-532 / CWE-312 (a secret in a log or an artifact): the portal password never leaves the robot', () => {
  it('a failed login (wrong password): a screenshot is kept, and no form of the password is in any artifact, answer, event or log', async () => {
    const { id, api } = await cabinetWith(WRONG_ACCOUNT);
    const job = await runToEnd(api, { compagnie: 'sandbox', produit: 'auto', dicData: autoData('1984-03-09') });
    expect(job).toMatchObject({ status: 'failed', error: { code: 'invalid_credentials' } });
    expect(job.artifacts?.screenshot_url).toBeTruthy();
    await expectJobHoldsNoCanary(id, job);
    // The screenshot covers the password field: where a browser of the same size shows it on the
    // same page (the login form after a refusal), the screenshot holds the mask's colour only.
    const box = await passwordFieldAfterRefusal();
    const png = readFileSync(join(server.dataDir, 'artifacts', 'jobs', job.job_id, 'screenshot.png'));
    expect(
      await pixelsIn(png, {
        x: Math.ceil(box.x) + 2,
        y: Math.ceil(box.y) + 2,
        width: Math.floor(box.width) - 4,
        height: Math.floor(box.height) - 4,
      }),
    ).toEqual([MASK_COLOR]);
  });

  it('a step after the login fails: the trace shows the steps after the login, and never the password', async () => {
    const { id, api } = await cabinetWith(ACCOUNT);
    // A driver of 10: the schema takes the date, the portal refuses it on its driver page.
    const job = await runToEnd(api, { compagnie: 'sandbox', produit: 'auto', dicData: autoData('2016-01-01') });
    expect(job).toMatchObject({ status: 'failed', error: { code: 'data_refused' } });
    expect(job.artifacts).toMatchObject({ screenshot_url: expect.any(String), trace_url: expect.any(String) });
    // The trace is there and useful: the driver page's fields were traced.
    const fills = (await traceActions(job.job_id)).filter((a) => a.method === 'fill');
    expect(fills.map((a) => a.params?.value)).toContain('2016-01-01');
    await expectJobHoldsNoCanary(id, job);
  });

  it('an account with an SMS code: neither the password nor the code typed is in the trace', async () => {
    const { id, api } = await cabinetWith(MFA_ACCOUNT);
    let code = '';
    const job = await runToEnd(api, { compagnie: 'sandbox', produit: 'auto', dicData: autoData('2016-01-02') }, async (waiting) => {
      const phone = (await (await fetch(`${portalUrl}/phone?format=json`)).json()) as { messages: { code: string }[] };
      code = phone.messages[0]?.code ?? '';
      expect((await api.post(`/automation/jobs/${waiting.job_id}/mfa`, { code })).status).toBe(200);
    });
    expect(code).toMatch(/^\d{6}$/);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'data_refused' } });
    const actions = await traceActions(job.job_id);
    expect(actions.filter((a) => a.method === 'fill').map((a) => a.params?.value)).not.toContain(code);
    // Nowhere in the trace either (actions, network, DOM snapshots, resources), as a value or a form field.
    for (const file of await artifactFiles(job.job_id)) {
      for (const form of [`"${code}"`, `=${code}`, `'${code}'`])
        expect(file.data.includes(Buffer.from(form)), `${file.name} holds the code (${form})`).toBe(false);
    }
    await expectJobHoldsNoCanary(id, job);
  });

  it('a robot that types the password outside withSecrets: its trace is not kept, and the screenshot masks the field', async () => {
    const { id, api } = await cabinetWith('careless-broker', 'careless');
    const job = await runToEnd(api, { compagnie: 'careless', produit: 'auto', dicData: { ref: 'a' } });
    expect(job).toMatchObject({ status: 'failed', error: { code: 'layout_changed' } });
    expect(job.artifacts).toEqual({ screenshot_url: expect.any(String), trace_url: null, portal_changes_url: null });
    expect(server.logs.join('')).toContain('the browser trace held a secret and was not kept');
    await expectJobHoldsNoCanary(id, job);
    // The field's box is painted over in the screenshot (Playwright's mask), not showing its text.
    const png = readFileSync(join(server.dataDir, 'artifacts', 'jobs', job.job_id, 'screenshot.png'));
    expect(await pixelsIn(png, { x: 60, y: 130, width: 560, height: 40 })).toEqual([MASK_COLOR]);
  });
});

/** Where the login page shows "Mot de passe" once the portal has refused a password, at the robots' window size. */
async function passwordFieldAfterRefusal(): Promise<{ x: number; y: number; width: number; height: number }> {
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ locale: 'fr-FR', viewport: { width: 1280, height: 720 } })).newPage();
    await page.goto(`${portalUrl}/login`);
    await page.getByLabel('Identifiant courtier').fill(WRONG_ACCOUNT);
    await page.getByLabel('Mot de passe').fill('not the password');
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.getByRole('alert').waitFor();
    const box = await page.getByLabel('Mot de passe').boundingBox();
    if (!box) throw new Error('no password field on the page');
    return box;
  } finally {
    await browser.close();
  }
}

/** The distinct colours of a rectangle of a PNG, decoded by Chromium itself (no image library needed). */
async function pixelsIn(png: Buffer, box: { x: number; y: number; width: number; height: number }): Promise<string[]> {
  const browser: Browser = await launchChromium();
  try {
    const page = await browser.newPage();
    return await page.evaluate(
      async ({ data, box }) => {
        // The root tsconfig has no DOM types: the page's globals, typed as far as used here.
        type Context2d = {
          drawImage(image: unknown, x: number, y: number): void;
          getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
        };
        const g = globalThis as unknown as {
          Image: new () => { src: string; width: number; height: number; decode(): Promise<void> };
          document: { createElement(tag: 'canvas'): { width: number; height: number; getContext(kind: '2d'): Context2d | null } };
        };
        const image = new g.Image();
        image.src = `data:image/png;base64,${data}`;
        await image.decode();
        const canvas = g.document.createElement('canvas');
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext('2d');
        if (!context) throw new Error('no 2d context');
        context.drawImage(image, 0, 0);
        const { data: rgba } = context.getImageData(box.x, box.y, box.width, box.height);
        const colours = new Set<string>();
        for (let i = 0; i < rgba.length; i += 4)
          colours.add(`#${[rgba[i], rgba[i + 1], rgba[i + 2]].map((c) => (c ?? 0).toString(16).padStart(2, '0')).join('')}`);
        return [...colours];
      },
      { data: png.toString('base64'), box },
    );
  } finally {
    await browser.close();
  }
}

describe('CWE-284 (improper access control): artifacts are for cabinet admins and keys with automation:artifacts', () => {
  let cabinetId = '';
  let job: Job;
  let admin: ConsoleClient;
  let broker: ConsoleClient;

  beforeAll(async () => {
    const cabinet = await cabinetWith(WRONG_ACCOUNT);
    cabinetId = cabinet.id;
    job = await runToEnd(cabinet.api, { compagnie: 'sandbox', produit: 'auto', dicData: autoData('1984-03-10') });
    expect(job.artifacts?.screenshot_url).toBeTruthy();
    admin = (await signInNewUser(server, cabinetId, 'admin')).client;
    broker = (await signInNewUser(server, cabinetId, 'broker')).client;
  });

  it('a key with automation:read only is refused (403 insufficient_scope naming automation:artifacts); with automation:artifacts it downloads', async () => {
    for (const url of [job.artifacts?.screenshot_url ?? '', job.artifacts?.trace_url ?? '']) {
      const readOnly = await server.request(url, {
        headers: { 'X-API-Key': server.createKey(cabinetId, { scopes: ['automation:read'] }).key },
      });
      expect(readOnly.status).toBe(403);
      expect(await readOnly.json()).toMatchObject({ error: 'insufficient_scope', details: { required_scope: 'automation:artifacts' } });
      const allowed = await server.request(url, {
        headers: { 'X-API-Key': server.createKey(cabinetId, { scopes: ['automation:artifacts'] }).key },
      });
      expect(allowed.status).toBe(200);
      expect((await allowed.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it('in the console, a broker is refused (403 admin_only) and an admin downloads', async () => {
    const path = `/api/v1/console/jobs/${job.job_id}/artifacts/screenshot.png`;
    const refused = await broker.request(path);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'admin_only' });
    const allowed = await admin.request(path);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('content-type')).toBe('image/png');
    expect((await allowed.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });
});
