import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { horizonPortalPlugin } from '../../server/sandbox-portals/horizon/index.js';
import { testClock } from '../helpers/server.js';

const PREFIX = '/sandbox/horizon';
const clock = testClock(); // 2026-11-22T09:00:00Z: ages are taken on this day
let mode: SandboxMode = 'normal';
let latency = 0;
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  await app.register(horizonPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => latency });
  await app.ready();
});
afterAll(() => app.close());
beforeEach(() => {
  mode = 'normal';
  latency = 0;
});

const CAR = {
  conducteur: {
    prenom: 'Léa',
    nom: 'Martin',
    date_naissance_conducteur: '1985-02-10',
    annee_permis: 2004,
    crm: 0.72,
    sinistres_36_mois: 0,
    code_postal_garage: '33000',
  },
  vehicule: {
    marque: 'Renault',
    modele: 'Clio',
    date_mec: '2022-04-01',
    kilometrage_annuel: 'de_5000_a_10000',
    stationnement: 'garage_ferme',
  },
};
const HOME = {
  bien: { prenom: 'Hugo', nom: 'Bernard', type_bien: 'appartement', qualite: 'locataire', code_postal: '69007' },
  pieces: { surface: 48, nb_pieces_principales: 2, etage: 3, valeur_mobilier: 12_000, alarme: false },
};

const cookieOf = (res: LightMyRequestResponse) => String(res.headers['set-cookie']).split(';')[0]!;

async function logIn(login = 'demo'): Promise<{ cookie: string; res: LightMyRequestResponse }> {
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/api/session`, payload: { login, password: 'demo' } });
  return { cookie: cookieOf(res), res };
}

function api(cookie: string) {
  return {
    get: (path: string) => app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers: { cookie } }),
    post: (path: string, payload?: object) => app.inject({ method: 'POST', url: `${PREFIX}${path}`, headers: { cookie }, payload }),
  };
}

async function quoteThrough(cookie: string, product: string, steps: Record<string, object>) {
  const client = api(cookie);
  const created = await client.post('/api/quotes', { product });
  expect(created.statusCode).toBe(201);
  let quote = created.json<{ id: string; next_step: string; offers: { formule: string; prime_annuelle_eur: number }[] | null }>();
  for (const [step, answers] of Object.entries(steps)) {
    const res = await client.post(`/api/quotes/${quote.id}/steps`, { step, answers });
    expect(res.statusCode, res.body).toBe(200);
    quote = res.json();
  }
  return quote;
}

const phone = async () =>
  (await app.inject({ method: 'GET', url: `${PREFIX}/phone?format=json` })).json<{
    approvals: { id: string; login: string; status: string; approve_url: string }[];
  }>().approvals;

describe('Horizon Direct portal: the shell and the session', () => {
  it('serves one HTML shell for every app address and its script, under a CSP without inline script', async () => {
    for (const path of ['/app/accueil', '/app/devis/0123abcd/conducteur']) {
      const res = await app.inject(`${PREFIX}${path}`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
      expect(res.headers['content-security-policy']).not.toMatch(/unsafe/);
      expect(res.body).toContain(`<script src="${PREFIX}/app.js" defer></script>`);
      expect(res.body).not.toMatch(/<script>/);
    }
    const script = await app.inject(`${PREFIX}/app.js`);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain('history');
    expect(script.body).not.toMatch(/innerHTML|eval\(/);
    expect((await app.inject(`${PREFIX}/`)).headers.location).toBe(`${PREFIX}/app/accueil`);
    expect((await app.inject(`${PREFIX}/api/nothing`)).statusCode).toBe(404);
  });

  it('logs demo in at once, with an HttpOnly SameSite=Strict token; refuses a wrong password', async () => {
    const { res, cookie } = await logIn();
    expect(res.json()).toEqual({ state: 'connected', display_name: 'Cabinet Démo' });
    expect(res.headers['set-cookie']).toMatch(/^hz_token=[\w-]+; Path=\/sandbox\/horizon; HttpOnly; SameSite=Strict$/);
    expect((await api(cookie).get('/api/session')).json()).toMatchObject({ state: 'connected' });
    const wrong = await app.inject({ method: 'POST', url: `${PREFIX}/api/session`, payload: { login: 'demo', password: 'nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'invalid_credentials', message: 'Identifiant ou mot de passe incorrect.' });
    expect((await app.inject(`${PREFIX}/api/session`)).statusCode).toBe(401);
    const out = await app.inject({ method: 'DELETE', url: `${PREFIX}/api/session`, headers: { cookie } });
    expect(out.statusCode).toBe(204);
    expect((await api(cookie).get('/api/session')).statusCode).toBe(401);
  });

  it('makes demo-app wait for an approval on the phone, which expires after 2 minutes', async () => {
    const { res, cookie } = await logIn('demo-app');
    expect(res.json()).toMatchObject({ state: 'approval_required' });
    const client = api(cookie);
    expect((await client.post('/api/quotes', { product: 'voiture' })).statusCode).toBe(403);
    expect((await client.get('/api/session/approval')).json()).toEqual({ status: 'none' });

    expect((await client.post('/api/session/approval')).statusCode).toBe(202);
    expect((await client.get('/api/session/approval')).json()).toEqual({ status: 'pending' });
    const [request] = await phone();
    expect(request).toMatchObject({ login: 'demo-app', status: 'pending' });
    const page = await app.inject(`${PREFIX}/phone`);
    expect(page.body).toContain('<button type="submit">Approuver</button>');

    // The phone's button is a form post back to the phone.
    const approved = await app.inject({
      method: 'POST',
      url: request!.approve_url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(approved.statusCode).toBe(303);
    expect((await client.get('/api/session/approval')).json()).toEqual({ status: 'approved' });
    expect((await client.get('/api/session')).json()).toMatchObject({ state: 'connected' });
    expect((await client.post('/api/quotes', { product: 'voiture' })).statusCode).toBe(201);

    const late = await logIn('demo-app');
    await api(late.cookie).post('/api/session/approval');
    clock.advance(2 * 60_000 + 1);
    expect((await api(late.cookie).get('/api/session/approval')).json()).toEqual({ status: 'expired' });
    const [expired] = await phone();
    expect(expired?.status).toBe('expired');
    const refused = await app.inject({ method: 'POST', url: expired!.approve_url, headers: { accept: 'application/json' } });
    expect(refused.statusCode).toBe(404);
  });
});

describe('Horizon Direct portal: the wizard, its pricing and documents', () => {
  it('prices a car quote at every formula, as the documented formula says', async () => {
    const { cookie } = await logIn();
    const quote = await quoteThrough(cookie, 'voiture', CAR);
    expect(quote.next_step).toBe('formule');
    expect(quote.offers).toEqual([
      expect.objectContaining({
        formule: 'tiers',
        libelle: 'Tiers',
        prime_annuelle_eur: 304.82,
        prime_mensuelle_eur: 26.16,
        franchise_eur: 0,
      }),
      expect.objectContaining({ formule: 'tiers_plus', libelle: 'Tiers+', prime_annuelle_eur: 426.75, prime_mensuelle_eur: 36.63 }),
      expect.objectContaining({ formule: 'tous_risques', prime_annuelle_eur: 640.12, prime_mensuelle_eur: 54.94, franchise_eur: 400 }),
    ]);
    const tiers = quote.offers![0] as unknown as { garanties: { code: string; incluse: boolean }[] };
    expect(tiers.garanties.filter((g) => g.incluse).map((g) => g.code)).toEqual(['rc', 'defense_recours']);
  });

  it('issues the chosen formula’s quote, general conditions and IPID as PDFs', async () => {
    const { cookie } = await logIn();
    const client = api(cookie);
    const quote = await quoteThrough(cookie, 'voiture', CAR);
    expect((await client.get(`/api/quotes/${quote.id}/documents`)).statusCode).toBe(409);
    const chosen = await client.post(`/api/quotes/${quote.id}/steps`, { step: 'formule', answers: { formule: 'tous_risques' } });
    expect(chosen.json()).toMatchObject({ chosen: 'tous_risques', next_step: null });
    const listed = (await client.get(`/api/quotes/${quote.id}/documents`)).json<{
      documents: { id: string; kind: string; url: string }[];
    }>();
    expect(listed.documents.map((d) => [d.id, d.kind])).toEqual([
      ['devis', 'quote'],
      ['conditions-generales', 'conditions'],
      ['ipid', 'information'],
    ]);
    for (const document of listed.documents) {
      const pdf = await app.inject({ method: 'GET', url: document.url, headers: { cookie } });
      expect(pdf.headers['content-type']).toBe('application/pdf');
      expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
      if (document.id === 'devis') expect(pdf.rawPayload.toString('latin1')).toContain('prime annuelle 640,12 EUR');
      expect((await PDFDocument.load(pdf.rawPayload)).getAuthor()).toBe('Horizon Direct');
    }
    // Another broker does not see it.
    const other = await logIn('demo-app');
    expect((await api(other.cookie).get(`/api/quotes/${quote.id}`)).statusCode).toBe(403);
    expect((await client.post(`/api/quotes/${quote.id}/steps`, { step: 'formule', answers: { formule: 'tiers' } })).statusCode).toBe(409);
  });

  it('refuses answers with 422 naming each field: missing, malformed, unknown, and the rules only the server knows', async () => {
    const { cookie } = await logIn();
    const client = api(cookie);
    const { id } = (await client.post('/api/quotes', { product: 'voiture' })).json<{ id: string }>();
    const wrongStep = await client.post(`/api/quotes/${id}/steps`, { step: 'vehicule', answers: CAR.vehicule });
    expect(wrongStep.statusCode).toBe(409);
    expect(wrongStep.json()).toMatchObject({ error: 'wrong_step', expected: 'conducteur' });
    const bad = await client.post(`/api/quotes/${id}/steps`, {
      step: 'conducteur',
      answers: {
        ...CAR.conducteur,
        nom: '',
        crm: 4,
        code_postal_garage: '3300',
        date_naissance_conducteur: '1985-02-30',
        insured_name: 'x',
      },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({
      error: 'invalid_answers',
      message: 'Certaines réponses sont invalides.',
      errors: {
        insured_name: 'Champ inconnu.',
        nom: 'Ce champ est obligatoire.',
        crm: 'Nombre entre 0.5 et 3.5 attendu.',
        code_postal_garage: 'Code postal à 5 chiffres.',
        date_naissance_conducteur: 'Date invalide (JJ/MM/AAAA).',
      },
    });
    const young = await client.post(`/api/quotes/${id}/steps`, {
      step: 'conducteur',
      answers: { ...CAR.conducteur, date_naissance_conducteur: '2010-01-01', annee_permis: 2026 },
    });
    expect(young.json()).toMatchObject({
      errors: {
        date_naissance_conducteur: 'Le conducteur doit avoir entre 18 et 99 ans.',
        annee_permis: 'Année de permis incompatible avec la date de naissance.',
      },
    });
    expect((await client.post(`/api/quotes/${id}/steps`, { step: 'conducteur', answers: CAR.conducteur })).statusCode).toBe(200);
    const future = await client.post(`/api/quotes/${id}/steps`, { step: 'vehicule', answers: { ...CAR.vehicule, date_mec: '2027-01-01' } });
    expect(future.json()).toMatchObject({ errors: { date_mec: 'La date de mise en circulation est dans le futur.' } });
    expect((await client.post('/api/quotes', { product: 'auto' })).statusCode).toBe(422);
  });

  it('prices a home quote at every formula; an appartement needs its floor', async () => {
    const { cookie } = await logIn();
    const quote = await quoteThrough(cookie, 'logement', HOME);
    expect(quote.offers?.map((o) => [o.formule, o.prime_annuelle_eur])).toEqual([
      ['essentielle', 157.7],
      ['confort', 205],
      ['premium', 260.2],
    ]);
    const client = api(cookie);
    const { id } = (await client.post('/api/quotes', { product: 'logement' })).json<{ id: string }>();
    await client.post(`/api/quotes/${id}/steps`, { step: 'bien', answers: HOME.bien });
    const noFloor = await client.post(`/api/quotes/${id}/steps`, { step: 'pieces', answers: { ...HOME.pieces, etage: null } });
    expect(noFloor.json()).toMatchObject({ errors: { etage: 'Indiquez l’étage de l’appartement.' } });
    // A ground floor costs 10 % more; an alarm 5 % less.
    const ground = await quoteThrough(cookie, 'logement', { ...HOME, pieces: { ...HOME.pieces, etage: 0, alarme: true } });
    expect(ground.offers?.[0]?.prime_annuelle_eur).toBe(Math.round(157.696 * 1.1 * 0.95 * 100) / 100);
  });
});

describe('Horizon Direct portal: modes, redesign and caps', () => {
  it('is down (503, JSON for the API, the outage page for the app), flaky one request in three, slow; the phone never', async () => {
    mode = 'down';
    const down = await app.inject({ method: 'POST', url: `${PREFIX}/api/session`, payload: { login: 'demo', password: 'demo' } });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ error: 'unavailable' });
    const shell = await app.inject(`${PREFIX}/app/accueil`);
    expect(shell.statusCode).toBe(503);
    expect(shell.body).toContain('<h1>Horizon Direct est en maintenance</h1>');
    expect((await app.inject(`${PREFIX}/phone?format=json`)).statusCode).toBe(200);

    mode = 'flaky';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await app.inject(`${PREFIX}/app.css`)).statusCode);
    expect(statuses.filter((s) => s === 503)).toHaveLength(2);

    mode = 'slow';
    latency = 60;
    const started = performance.now();
    await app.inject(`${PREFIX}/app.css`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('shows its redesign in mode changed: steps renamed, a field moved, a step added', async () => {
    const { cookie } = await logIn();
    mode = 'changed';
    const car = (await api(cookie).post('/api/quotes', { product: 'voiture' })).json<{
      steps: { name: string; fields: { name: string; label: string }[] }[];
      next_step: string;
    }>();
    expect(car.steps.map((s) => s.name)).toEqual(['profil', 'usage', 'vehicule']);
    expect(car.next_step).toBe('profil');
    expect(car.steps[1]!.fields.map((f) => f.name)).toEqual(['usage', 'code_postal_garage']);
    expect(car.steps[2]!.fields[0]!.label).toBe('Constructeur');
    const home = (await api(cookie).post('/api/quotes', { product: 'logement' })).json<{ steps: { name: string }[] }>();
    expect(home.steps.map((s) => s.name)).toEqual(['occupant', 'logement', 'contenu']);
  });

  it('keeps at most 50 approval requests and 500 sessions, forgetting the oldest', async () => {
    const first = await logIn('demo-app');
    await api(first.cookie).post('/api/session/approval');
    const firstId = (await phone())[0]!.id;
    for (let i = 0; i < 50; i++) await api((await logIn('demo-app')).cookie).post('/api/session/approval');
    const approvals = await phone();
    expect(approvals).toHaveLength(50);
    expect(approvals.map((a) => a.id)).not.toContain(firstId);

    const oldest = await logIn();
    for (let i = 0; i < 500; i++) await logIn();
    expect((await api(oldest.cookie).get('/api/session')).statusCode).toBe(401);
  });
});
