import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { traditionPortalPlugin } from '../../server/sandbox-portals/tradition/index.js';
import { testClock } from '../helpers/server.js';
import { alertOf, h1Of, textOf, traditionVisitor, viewStateOf } from '../helpers/tradition-visitor.js';

const PREFIX = '/sandbox/tradition';
const clock = testClock(); // 2026-11-22T09:00:00Z
let mode: SandboxMode = 'normal';
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  await app.register(traditionPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => 0 });
  await app.ready();
});
afterAll(() => app.close());
beforeEach(() => {
  mode = 'normal';
});

const visitor = () => traditionVisitor(app, PREFIX);

async function loggedIn() {
  const v = visitor();
  await v.go('login');
  const res = await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' });
  expect(res.body).toContain('name="principal"');
  return v;
}

async function lastCaptcha(): Promise<string> {
  const res = await app.inject({ url: `${PREFIX}/phone?format=json` });
  const text = res.json<{ captchas: { text: string }[] }>().captchas[0]?.text;
  if (text === undefined) throw new Error('no captcha shown');
  return text;
}

const AUTOMOBILE: Record<string, string>[] = [
  { NOM_SOUSC: 'Jean Martin', DT_NAISS: '02/03/1985', DT_PERMIS: '15/06/2004', CRM: '0,72', CP_RISQUE: '33000' },
  { MARQUE: 'Renault', MODELE: 'Clio', PUISS_FISC: '6', DT_MEC: '10/01/2020', USAGE: 'PT' },
  { GARANTIE: 'TR' },
];
const HABITATION: Record<string, string>[] = [
  { NOM_SOUSC: 'Claire Petit', CP_RISQUE: '75011', TYPE_HAB: 'A', QUALITE: 'L' },
  { NB_PIECES: '3', SURF: '65', CAP_MOB: '20000', ALARME: 'N' },
];
const RC_PRO: Record<string, string>[] = [
  { RAISON_SOC: 'Octet Conseil SARL', CODE_ACT: '6201Z', ANNEE_CREA: '2015' },
  { CA: '180000', EFFECTIF: '2', SIN_3ANS: '0' },
];

/** Starts a quote and submits its steps; returns the last page and the draft's path. */
async function quote(v: ReturnType<typeof visitor>, product: string, steps: readonly Record<string, string>[]) {
  let res = await v.go(`devis/nouveau/${product}`);
  const path = /action="([^"]+)"/.exec(res.body)?.[1] ?? '';
  for (const step of steps) res = await v.submit(path, step);
  return { res, path };
}

const cell = (html: string, row: string) => new RegExp(`<th scope="row">${row}</th><td>([^<]*)</td>`).exec(html)?.[1]?.replace(/\s/g, ' ');

describe('Mutuelle Tradition portal', () => {
  it('logs demo in to the frameset (banner, menu, main frame), framed by itself only', async () => {
    const v = await loggedIn();
    for (const frame of ['bandeau', 'menu', 'principal']) expect(v.page).toContain(`name="${frame}"`);
    const home = await v.go('accueil');
    expect(h1Of(home.body)).toBe('Accueil partenaire');
    expect(home.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    expect(home.headers['content-security-policy']).toContain("default-src 'none'");
    expect(home.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect((await v.go('menu')).body).toContain('target="principal"');
  });

  it('refuses a wrong password, and a login form posted without its view state, or twice', async () => {
    const v = visitor();
    await v.go('login');
    const wrong = await v.submit('login', { CODE_PART: 'demo', MDP: 'nope' });
    expect(wrong.statusCode).toBe(401);
    expect(alertOf(wrong.body)).toBe('Code partenaire ou mot de passe incorrect.');
    const missing = await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' }, null);
    expect(missing.statusCode).toBe(400);
    expect(h1Of(missing.body)).toBe('Session invalide — veuillez recommencer');
    const login = await v.go('login');
    const token = viewStateOf(login.body);
    expect((await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' }, token)).body).toContain('name="principal"');
    expect((await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' }, token)).statusCode).toBe(400);
  });

  it('asks demo-captcha for a captcha (a small PNG; its text on the phone), a new one after a wrong answer, three tries', async () => {
    const v = visitor();
    await v.go('login');
    let res = await v.submit('login', { CODE_PART: 'demo-captcha', MDP: 'demo' });
    expect(h1Of(res.body)).toBe('Contrôle de sécurité');
    const src = /<img src="([^"]+)"/.exec(res.body)?.[1] ?? '';
    const image = await app.inject({ url: src, headers: {} });
    expect(image.statusCode).toBe(404); // another browser (no cookie) does not see it
    const png = await v.go(src);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.rawPayload.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.rawPayload.length).toBeLessThan(20 * 1024);
    const first = await lastCaptcha();
    expect(first).toMatch(/^[A-HJ-NP-Z2-9]{5}$/);
    const phone = await app.inject({ url: `${PREFIX}/phone` });
    expect(textOf(phone.body)).toContain(first);

    res = await v.submit('controle', { CODE_SECU: 'XXXXX' });
    expect(res.statusCode).toBe(401);
    expect(alertOf(res.body)).toBe('Code de sécurité incorrect. Un nouveau code vous est proposé (2 essai(s) restant(s)).');
    const second = await lastCaptcha();
    res = await v.submit('controle', { CODE_SECU: second.toLowerCase() });
    expect(res.body).toContain('name="principal"');

    const w = visitor();
    await w.go('login');
    await w.submit('login', { CODE_PART: 'demo-captcha', MDP: 'demo' });
    for (let i = 0; i < 2; i++) await w.submit('controle', { CODE_SECU: '22222' });
    res = await w.submit('controle', { CODE_SECU: '22222' });
    expect(h1Of(res.body)).toBe('Mutuelle Tradition - Extranet Partenaires');
    expect(alertOf(res.body)).toBe('Trop de tentatives. Veuillez vous identifier à nouveau.');
  });

  it('prices each product at its formula; the PDF is prepared after two refreshes of the quote', async () => {
    const v = await loggedIn();
    const auto = await quote(v, 'automobile', AUTOMOBILE);
    expect(h1Of(auto.res.body)).toBe('Votre devis');
    expect(cell(auto.res.body, 'Prime annuelle TTC')).toBe('530,56 €');
    expect(textOf(auto.res.body)).toContain('Votre devis est en cours de préparation');
    expect((await v.go(`${auto.path}/pdf`)).statusCode).toBe(409);
    expect(auto.res.body).not.toContain('Télécharger le devis (PDF)');
    expect((await v.go(auto.path)).body).not.toContain('Télécharger le devis (PDF)');
    expect((await v.go(auto.path)).body).toContain('Télécharger le devis (PDF)');
    const pdf = await v.go(`${auto.path}/pdf`);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.toString('latin1')).toContain('prime annuelle 530,56 EUR');
    expect((await PDFDocument.load(pdf.rawPayload)).getTitle()).toContain('Devis Automobile');

    const home = await quote(v, 'habitation', HABITATION);
    expect(cell(home.res.body, 'Prime annuelle TTC')).toBe('283,13 €');
    const pro = await quote(v, 'rc_pro', RC_PRO);
    expect(cell(pro.res.body, 'Prime annuelle TTC')).toBe('260,00 €');
    // Or 30 seconds on the portal's clock.
    clock.advance(30_000);
    expect((await v.go(`${pro.path}/pdf`)).headers['content-type']).toBe('application/pdf');
  });

  it('checks every step on the server, naming the fields, and keeps what was typed', async () => {
    const v = await loggedIn();
    let res = await v.go('devis/nouveau/automobile');
    expect(h1Of(res.body)).toBe('Devis Automobile — Étape 1/3 — Souscripteur');
    expect(textOf(res.body)).toMatch(/Devis n°T\d{8}/);
    const path = /action="([^"]+)"/.exec(res.body)?.[1] ?? '';
    res = await v.submit(path, { NOM_SOUSC: 'Jean Martin', DT_NAISS: '1985-03-02', DT_PERMIS: '15/06/2004', CRM: '4', CP_RISQUE: '330' });
    expect(res.statusCode).toBe(422);
    expect(alertOf(res.body)).toBe(
      '« Date de naissance » : date au format JJ/MM/AAAA. « CRM » : de 0,50 à 3,50. « Code postal du risque » : 5 chiffres.',
    );
    expect(res.body).toContain('value="Jean Martin"');
    expect(res.body).toMatch(/id="CRM"[^>]*aria-invalid="true"/);
    // A stale page's form (its view state was used) is refused.
    const stale = viewStateOf(res.body);
    res = await v.submit(path, AUTOMOBILE[0]!);
    expect(h1Of(res.body)).toBe('Devis Automobile — Étape 2/3 — Véhicule');
    res = await v.submit(path, AUTOMOBILE[1]!, stale);
    expect(h1Of(res.body)).toBe('Session invalide — veuillez recommencer');
    res = await v.submit(path, { GARANTIE: 'TR' }, '');
    expect(res.statusCode).toBe(400);
  });

  it('expires a session after 3 idle minutes mid-wizard, keeping the draft to resume from the home page', async () => {
    const v = await loggedIn();
    let res = await v.go('devis/nouveau/habitation');
    const path = /action="([^"]+)"/.exec(res.body)?.[1] ?? '';
    const no = /Devis n°(T\d{8})/.exec(textOf(res.body))?.[1];
    res = await v.submit(path, HABITATION[0]!);
    clock.advance(2 * 60_000 + 59_000);
    expect(h1Of((await v.go(path)).body)).toBe('Devis Habitation — Étape 2/2 — Biens'); // still alive, seen again
    clock.advance(3 * 60_000 + 1_000);
    res = await v.submit(path, HABITATION[1]!);
    expect(h1Of(res.body)).toBe('Mutuelle Tradition - Extranet Partenaires');
    expect(alertOf(res.body)).toBe('Votre session a expiré. Veuillez vous identifier à nouveau.');
    await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' });
    const home = await v.go('accueil');
    expect(textOf(home.body)).toContain(`Reprendre le devis n°${no}`);
    res = await v.go(path);
    expect(h1Of(res.body)).toBe('Devis Habitation — Étape 2/2 — Biens');
    res = await v.submit(path, HABITATION[1]!);
    expect(h1Of(res.body)).toBe('Votre devis');
    expect(textOf((await v.go('accueil')).body)).not.toContain(`Reprendre le devis n°${no}`);
  });

  it('shows each broker only their own drafts', async () => {
    const v = await loggedIn();
    const { path } = await quote(v, 'rc_pro', []);
    const w = visitor();
    await w.go('login');
    await w.submit('login', { CODE_PART: 'demo-captcha', MDP: 'demo' });
    await w.submit('controle', { CODE_SECU: await lastCaptcha() });
    expect((await w.go(path)).statusCode).toBe(404);
  });

  it('shows its redesign in mode changed: a step added, labels renamed, a field moved', async () => {
    mode = 'changed';
    const v = await loggedIn();
    let res = await v.go('devis/nouveau/automobile');
    expect(h1Of(res.body)).toBe('Devis Automobile — Étape 1/4 — Informations préalables');
    const path = /action="([^"]+)"/.exec(res.body)?.[1] ?? '';
    res = await v.submit(path, { DEJA_CLIENT: 'N' });
    expect(h1Of(res.body)).toBe('Devis Automobile — Étape 2/4 — Souscripteur');
    expect(res.body).toContain('Nom et prénom du souscripteur');
    expect(res.body).not.toContain('CP_RISQUE');
    const { CP_RISQUE: _moved, ...first } = AUTOMOBILE[0]!;
    res = await v.submit(path, first);
    expect(h1Of(res.body)).toBe('Devis Automobile — Étape 3/4 — Véhicule');
    expect(res.body).toContain('id="CP_RISQUE"');
  });

  it('is down and flaky on demand; its phone is not', async () => {
    mode = 'down';
    const down = await app.inject({ url: `${PREFIX}/login` });
    expect(down.statusCode).toBe(503);
    expect(h1Of(down.body)).toBe('Service indisponible');
    expect((await app.inject({ url: `${PREFIX}/phone?format=json` })).statusCode).toBe(200);
    mode = 'flaky';
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.inject({ url: `${PREFIX}/login` })).statusCode);
    expect(statuses).toContain(503);
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
  });

  it('answers unknown pages and products with its own 404, and bounds its form bodies', async () => {
    const v = await loggedIn();
    expect((await v.go('devis/nouveau/vie')).statusCode).toBe(404);
    expect((await v.go('nulle-part')).statusCode).toBe(404);
    const big = await app.inject({
      method: 'POST',
      url: `${PREFIX}/login`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `CODE_PART=${'a'.repeat(40_000)}`,
    });
    expect(big.statusCode).toBe(413);
  });

  it('keeps a bounded number of sessions, drafts and login forms, forgetting the oldest', async () => {
    const small = Fastify();
    await small.register(traditionPortalPlugin, {
      prefix: PREFIX,
      clock,
      randomBytes,
      mode: () => 'normal',
      latencyMs: () => 0,
      limits: { sessions: 2, drafts: 2, loginForms: 2 },
    });
    try {
      const login = async () => {
        const v = traditionVisitor(small, PREFIX);
        await v.go('login');
        await v.submit('login', { CODE_PART: 'demo', MDP: 'demo' });
        return v;
      };
      const first = await login();
      const drafts = [];
      for (let i = 0; i < 3; i++) drafts.push(/action="([^"]+)"/.exec((await first.go('devis/nouveau/rc_pro')).body)?.[1] ?? '');
      expect((await first.go(drafts[0]!)).statusCode).toBe(404);
      expect((await first.go(drafts[2]!)).statusCode).toBe(200);
      await login();
      await login();
      expect(h1Of((await first.go('accueil')).body)).toBe('Mutuelle Tradition - Extranet Partenaires');
      // A login form handed out before two others is no longer accepted.
      const old = traditionVisitor(small, PREFIX);
      await old.go('login');
      const stale = viewStateOf(old.page);
      for (let i = 0; i < 2; i++) await traditionVisitor(small, PREFIX).go('login');
      expect((await old.submit('login', { CODE_PART: 'demo', MDP: 'demo' }, stale)).statusCode).toBe(400);
    } finally {
      await small.close();
    }
  });
});
