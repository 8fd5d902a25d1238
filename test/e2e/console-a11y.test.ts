// @module-tag browser
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { sandboxInsurer } from '../helpers/sandbox-insurer.js';
import { SANDBOX_PRODUCTS } from '../../insurers/sandbox/src/products.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { audit } from '../helpers/axe.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';
import { consoleClient, openConsole, saveScreenshot } from '../helpers/console.js';
import { authorizeOverHttp, createUser, openConsent, pkcePair, registerClient, signIn, type TestUser } from '../helpers/oauth.js';
import { tempDir } from '../helpers/server.js';

/**
 * An accessibility pass with axe-core over every page of the built console in real Chromium,
 * English and French, 1280×800 and 390×844: no serious or critical violation anywhere. The pages
 * show real data (clients, opportunities, a quote priced by the sandbox robot, a key, a webhook, a
 * connected app, a broker) and their forms opened. The Sync page linked, with changes set aside
 * and its dialogs, is audited by console-sync.test.ts.
 */

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

type Lang = 'en' | 'fr';
type Viewport = typeof DESKTOP;

const WORDS = {
  en: {
    locale: 'en-GB',
    loading: 'Loading…',
    createCabinet: 'Create the cabinet',
    signIn: 'Sign in',
    email: 'Email',
    password: 'Password',
    insurer: 'Insurer',
    product: 'Product',
    check: 'Check (dry run)',
    newClient: 'New client',
    createClient: 'Create the client',
    newKey: 'New key',
    keyName: 'Name',
    newWebhook: 'New webhook',
    changePassword: 'Change the password',
    menu: 'Menu',
  },
  fr: {
    locale: 'fr-FR',
    loading: 'Chargement…',
    createCabinet: 'Créer le cabinet',
    signIn: 'Se connecter',
    email: 'Courriel',
    password: 'Mot de passe',
    insurer: 'Assureur',
    product: 'Produit',
    check: 'Vérifier (simulation)',
    newClient: 'Nouveau client',
    createClient: 'Créer le client',
    newKey: 'Nouvelle clé',
    keyName: 'Nom',
    newWebhook: 'Nouveau webhook',
    changePassword: 'Changer le mot de passe',
    menu: 'Menu',
  },
} as const;
/** The browser logs a refused sign-in (401) or form (400) as a failed load: the answers the test provokes. */
const EXPECTED_NETWORK_ERROR = /Failed to load resource: the server responded with a status of 40[01]/;

/** No IT policy file: the machine's own, if any, stays out of the test. */
const policyDir = tempDir();
afterAll(() => rmSync(policyDir, { recursive: true, force: true }));
/** Every page visited, watched for script errors, console errors and CSP violations, kept open to the end. */
const ui = useConsoleBrowser({
  server: {
    insurers: [sandboxInsurer({ portalUrl: () => `${ui.server.url}/sandbox/insurer` })],
    config: { tarificationQuotaPerHour: 1000, policyFile: join(policyDir, 'policy.json'), lanCheckIntervalMs: 600_000 },
  },
  expected: (text) => EXPECTED_NETWORK_ERROR.test(text),
  closeTabs: 'afterAll',
});

/** A fresh browser with no session, in a language and a window size. */
function signedOutPage(lang: Lang, viewport: Viewport): Promise<Page> {
  return ui.newPage({ locale: WORDS[lang].locale, viewport });
}

/** The page's heading is drawn and nothing says "Loading…" any more. */
async function settled(page: Page, lang: Lang): Promise<void> {
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  await expect.poll(() => page.getByText(WORDS[lang].loading, { exact: true }).count(), { timeout: 15_000 }).toBe(0);
}

describe.each([
  ['en', DESKTOP],
  ['en', PHONE],
  ['fr', DESKTOP],
  ['fr', PHONE],
] as [Lang, Viewport][])('before first-run setup, in %s at %o', (lang, viewport) => {
  it('the setup page and the login page, as shown and with their alerts, have no serious or critical violation', async () => {
    const w = WORDS[lang];
    const page = await signedOutPage(lang, viewport);
    const found: string[] = [];
    await page.goto(`${ui.server.url}/console/setup`);
    await page.locator('#setup-title').waitFor();
    await settled(page, lang);
    found.push(...(await audit(page, 'setup')));
    await saveScreenshot(page, `a11y-setup-${lang}-${viewport.width}`);
    await page.getByRole('button', { name: w.createCabinet }).click();
    await page.getByRole('alert').waitFor();
    found.push(...(await audit(page, 'setup, sent empty')));

    await page.goto(`${ui.server.url}/console/login`);
    await page.locator('#login-title').waitFor();
    found.push(...(await audit(page, 'login')));
    await saveScreenshot(page, `a11y-login-${lang}-${viewport.width}`);
    await page.getByLabel(w.email).fill('nobody@example.fr');
    await page.getByLabel(w.password).fill('not a password');
    const answer = page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/session` && r.request().method() === 'POST');
    await page.getByRole('button', { name: w.signIn }).click();
    expect((await answer).status()).toBe(401);
    await page.getByRole('alert').waitFor();
    found.push(...(await audit(page, 'login, a wrong password')));
    expect(found, found.join('\n')).toEqual([]);
  });
});

/** One cabinet with data on every page, made once (after the setup pages were seen). */
let user: TestUser;
let clientId = '';
let opportunityId = '';
let jobId = '';

async function seed(): Promise<void> {
  user = await createUser(ui.server, 'Cabinet Accessible & Associés');
  grantCredits(ui.server.deps, user.cabinetId, 100);
  setInsurerCredentials(ui.server.deps, user.cabinetId, 'sandbox', { login: 'demo', password: 'demo' });
  const api = apiClient(ui.server, ui.server.createKey(user.cabinetId, { name: 'Site web' }).key);
  const dupont = await api.post('/clients', {
    last_name: 'Dupont',
    first_name: 'Jean',
    email: 'jean.dupont@example.fr',
    phone: '06 12 34 56 78',
    address: { line1: '12 rue de la République', postcode: '69002', city: 'Lyon' },
  });
  expect(dupont.status).toBe(201);
  clientId = String(dupont.body.id);
  expect(
    (
      await api.post('/clients', {
        type: 'company',
        company_name: 'Garage Martin SARL',
        siret: '73282932000074',
        email: 'contact@garage-martin.fr',
      })
    ).status,
  ).toBe(201);
  for (const [title, stage] of [
    ['Auto Jean Dupont', 'new'],
    ['Flotte Garage Martin', 'qualified'],
    ['Habitation Durand', 'won'],
  ] as const) {
    const created = await api.post('/opportunities', {
      title,
      product: 'auto',
      stage,
      expected_value_eur: 850,
      contact: { last_name: title.split(' ').at(-1) ?? 'X' },
      ...(title === 'Auto Jean Dupont' ? { client_id: clientId } : {}),
    });
    expect(created.status).toBe(201);
    if (title === 'Auto Jean Dupont') opportunityId = String(created.body.id);
  }
  expect((await api.post(`/opportunities/${opportunityId}/notes`, { body: 'Rappeler lundi.', author: 'Léa' })).status).toBe(201);
  // A webhook to an event nothing here fires: the page shows a subscription, nothing is delivered.
  expect(
    (await api.post('/webhooks', { url: 'https://hooks.example.com/courtier', events: ['devis.signed'], description: 'CRM' })).status,
  ).toBe(201);
  // A connected app (an MCP client that was allowed).
  await authorizeOverHttp(ui.server, user);

  const admin = await consoleClient(ui.server, user);
  expect(
    (
      await admin.request('/api/v1/console/users', {
        method: 'POST',
        json: { email: 'broker@cabinet-accessible.fr', password: 'correct horse battery', role: 'broker' },
      })
    ).status,
  ).toBe(201);

  // A quote priced by the sandbox insurer's robot, for Dupont: a job with its steps and a PDF.
  const priced = await admin.request('/api/v1/console/tarifications', {
    method: 'POST',
    json: { compagnie: 'sandbox', produit: 'auto', client_id: clientId, dicData: SANDBOX_PRODUCTS[0].example },
  });
  expect(priced.status).toBe(202);
  jobId = ((await priced.json()) as { job_id: string }).job_id;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = (await (await admin.request(`/api/v1/console/jobs/${jobId}`)).json()) as { status: string };
    if (job.status === 'completed') break;
    if (['failed', 'cancelled', 'partial'].includes(job.status) || Date.now() > deadline)
      throw new Error(`the sandbox job ended ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A page to audit: where it is, what to wait for, and what to open before the audit. */
interface Visit {
  name: string;
  path: () => string | Promise<string>;
  /** After the heading and the end of loading: wait for the data, open a form. */
  prepare?: (page: Page, lang: Lang, viewport: Viewport) => Promise<void>;
}

const VISITS: Visit[] = [
  {
    name: 'home',
    path: () => '/console/',
    prepare: async (page) => {
      await page.getByText(user.email).first().waitFor({ state: 'attached' });
    },
  },
  {
    name: 'home, menu open (phone)',
    path: () => '/console/',
    prepare: async (page, lang, viewport) => {
      if (viewport.width > PHONE.width) return;
      await page.getByRole('button', { name: WORDS[lang].menu }).click();
      await page.getByRole('navigation').getByRole('link').first().waitFor();
    },
  },
  {
    name: 'pricing, a product chosen',
    path: () => '/console/pricing',
    prepare: async (page, lang) => {
      await page.getByLabel(WORDS[lang].insurer, { exact: true }).selectOption('sandbox');
      await page.getByLabel(WORDS[lang].product, { exact: true }).selectOption('auto');
      await page.getByRole('form', { name: 'Assurance auto' }).getByLabel('Nom de l’assuré', { exact: true }).waitFor();
    },
  },
  {
    name: 'pricing, checked with nothing filled',
    path: () => '/console/pricing',
    prepare: async (page, lang) => {
      const w = WORDS[lang];
      await page.getByLabel(w.insurer, { exact: true }).selectOption('sandbox');
      await page.getByLabel(w.product, { exact: true }).selectOption('auto');
      const form = page.getByRole('form', { name: 'Assurance auto' });
      await form.getByRole('button', { name: w.check }).click();
      await form.locator('[aria-invalid="true"]').first().waitFor();
    },
  },
  {
    name: 'jobs',
    path: () => '/console/jobs',
    prepare: async (page) => {
      await page.getByRole('progressbar').first().waitFor();
    },
  },
  { name: 'a job', path: () => `/console/jobs/${jobId}` },
  {
    name: 'clients',
    path: () => '/console/clients',
    prepare: async (page) => {
      await page.getByRole('link', { name: 'Jean Dupont' }).waitFor();
    },
  },
  {
    name: 'clients, a new client sent empty',
    path: () => '/console/clients',
    prepare: async (page, lang) => {
      await page.getByRole('button', { name: WORDS[lang].newClient }).click();
      await page.getByRole('button', { name: WORDS[lang].createClient }).click();
      await page.locator('[aria-invalid="true"], [role="alert"]').first().waitFor();
    },
  },
  {
    name: 'clients import, a file previewed',
    path: () => '/console/clients/import',
    prepare: async (page) => {
      // A new client, one refused (its email), and Dupont, already there.
      const csv = 'Nom;Prénom;Courriel\nMartin;Léa;lea@exemple.fr\nPetit;Paul;pas-un-courriel\nDupont;Jean;x@exemple.fr\n';
      await page.locator('input[type="file"]').setInputFiles({ name: 'clients.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.locator('.import-counts').waitFor();
    },
  },
  {
    name: 'a client',
    path: () => `/console/clients/${clientId}`,
    prepare: async (page) => {
      await page.getByRole('heading', { level: 1, name: 'Jean Dupont' }).waitFor();
      await page.getByText(/€/).first().waitFor();
    },
  },
  {
    name: 'opportunities',
    path: () => '/console/opportunities',
    prepare: async (page) => {
      await page.getByText('Flotte Garage Martin').first().waitFor();
    },
  },
  {
    name: 'an opportunity',
    path: () => `/console/opportunities/${opportunityId}`,
    prepare: async (page) => {
      await page.getByRole('heading', { level: 1, name: 'Auto Jean Dupont' }).waitFor();
      await page.getByText('Rappeler lundi.').waitFor();
    },
  },
  {
    name: 'quotes',
    path: () => '/console/quotes',
    prepare: async (page) => {
      await page.getByText(/€/).first().waitFor();
    },
  },
  {
    name: 'insurers',
    path: () => '/console/insurers',
    prepare: async (page) => {
      await page.getByRole('region', { name: /Sandbox Assurances/ }).waitFor();
    },
  },
  {
    name: 'API keys, the form open',
    path: () => '/console/keys',
    prepare: async (page, lang) => {
      await page.getByText('Site web').first().waitFor();
      await page.getByRole('button', { name: WORDS[lang].newKey }).click();
      await page.getByLabel(WORDS[lang].keyName, { exact: true }).waitFor();
    },
  },
  {
    name: 'webhooks, the form open',
    path: () => '/console/webhooks',
    prepare: async (page, lang) => {
      await page.getByText('hooks.example.com').first().waitFor();
      await page.getByRole('button', { name: WORDS[lang].newWebhook }).click();
      await page.locator('#wh-new-title').waitFor();
    },
  },
  {
    name: 'connected apps',
    path: () => '/console/apps',
    prepare: async (page) => {
      await page.getByText('Test assistant').first().waitFor();
    },
  },
  { name: 'wallet', path: () => '/console/wallet' },
  {
    name: 'search results',
    path: () => '/console/search?q=dupont',
    prepare: async (page) => {
      await page
        .getByRole('link', { name: /^Jean Dupont/ })
        .first()
        .waitFor();
    },
  },
  {
    name: 'users',
    path: () => '/console/users',
    prepare: async (page) => {
      await page.getByText('broker@cabinet-accessible.fr').first().waitFor();
    },
  },
  { name: 'settings', path: () => '/console/settings' },
  { name: 'my account', path: () => '/console/account' },
  {
    name: 'my account, sent empty',
    path: () => '/console/account',
    prepare: async (page, lang) => {
      await page.getByRole('button', { name: WORDS[lang].changePassword }).click();
      await page.getByRole('alert').waitFor();
    },
  },
  { name: 'sync', path: () => '/console/sync' },
  { name: 'office network', path: () => '/console/office-network' },
  {
    name: 'audit log',
    path: () => '/console/audit',
    prepare: async (page) => {
      await page.locator('tbody tr').first().waitFor();
    },
  },
  {
    name: 'OAuth consent',
    path: async () => {
      const client = await registerClient(ui.server, { client_name: 'Claude' });
      const requestId = await openConsent(ui.server, await signIn(ui.server, user), {
        clientId: client.client_id,
        challenge: pkcePair().challenge,
        scope: 'crm:read crm:write devis:draft',
      });
      return `/console/consent?request_id=${requestId}`;
    },
    prepare: async (page) => {
      await page.getByRole('listitem').first().waitFor();
    },
  },
];

describe('signed in', () => {
  beforeAll(seed, 90_000);

  describe.each([
    ['en', DESKTOP],
    ['en', PHONE],
    ['fr', DESKTOP],
    ['fr', PHONE],
  ] as [Lang, Viewport][])('in %s at %o', (lang, viewport) => {
    let page: Page;

    beforeAll(async () => {
      page = ui.watch(await openConsole(ui.browser, ui.server, user, '/console/', WORDS[lang].locale));
      await page.setViewportSize(viewport);
    });

    it.each(VISITS.map((v) => [v.name, v] as const))('%s has no serious or critical violation', async (name, visit) => {
      await page.goto(ui.server.url + (await visit.path()));
      await settled(page, lang);
      await visit.prepare?.(page, lang, viewport);
      const found = await audit(page, name);
      await saveScreenshot(page, `a11y-${name.replace(/[^a-z]+/gi, '-')}-${lang}-${viewport.width}`);
      expect(found, found.join('\n')).toEqual([]);
    });
  });
});
