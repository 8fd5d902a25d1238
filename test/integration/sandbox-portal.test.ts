import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxMode } from '../../server/sandbox-portals/index.js';
import { sandboxPortalPlugin } from '../../server/sandbox-portals/sandbox/index.js';
import { testClock } from '../helpers/server.js';

const PREFIX = '/sandbox/insurer';
const clock = testClock(); // 2026-11-22T09:00:00Z
let mode: SandboxMode = 'normal';
let latency = 0;
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  // A sibling route outside the plugin: the portal's form parser must not leak to it.
  app.post('/outside', async () => ({ ok: true }));
  await app.register(sandboxPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => mode, latencyMs: () => latency });
  await app.ready();
});
afterAll(() => app.close());
beforeEach(() => {
  mode = 'normal';
  latency = 0;
});

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const decode = (html: string) => html.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
const text = (html: string) =>
  decode(html.replace(/<[^>]+>/g, ' '))
    .replace(/[ \t\n\r]+/g, ' ')
    .trim();

function alertOf(html: string): string | null {
  const match = /<div role="alert">([\s\S]*?)<\/div>/.exec(html);
  return match?.[1] === undefined ? null : text(match[1]);
}
function h1Of(html: string): string | null {
  const all = [...html.matchAll(/<h1>([\s\S]*?)<\/h1>/g)];
  expect(all.length).toBeLessThanOrEqual(1);
  return all[0]?.[1] === undefined ? null : text(all[0][1]);
}
/** The <dd> named by the <dt> with this text. */
function ddOf(html: string, term: string): string | null {
  const dt = new RegExp(`<dt id="([^"]+)">${term}</dt>`).exec(html);
  if (!dt) return null;
  const dd = new RegExp(`<dd aria-labelledby="${dt[1]}">([^<]*)</dd>`).exec(html);
  return dd?.[1] === undefined ? null : decode(dd[1]);
}

/** A visitor with a cookie jar, following redirects like a browser would. */
function visitor() {
  let cookie: string | undefined;
  async function send(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<LightMyRequestResponse> {
    const res = await app.inject({
      method,
      url: path.startsWith('/') ? path : `${PREFIX}/${path}`,
      headers: { ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    const setCookie = res.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';');
      cookie = /Max-Age=0/i.test(line) ? undefined : pair;
    }
    return res;
  }
  async function follow(res: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    let current = res;
    for (let i = 0; i < 5 && current.statusCode >= 300 && current.statusCode < 400; i++)
      current = await send('GET', String(current.headers.location));
    return current;
  }
  return {
    get cookie() {
      return cookie;
    },
    get: (path: string) => send('GET', path),
    post: (path: string, form: Record<string, string> = {}) => send('POST', path, form),
    go: async (path: string) => follow(await send('GET', path)),
    submit: async (path: string, form: Record<string, string>) => follow(await send('POST', path, form)),
  };
}

async function loggedIn(user = 'demo') {
  const v = visitor();
  const res = await v.submit('login', { broker_id: user, password: 'demo' });
  expect(h1Of(res.body)).toBe('Accueil');
  return v;
}

async function lastCode(): Promise<string> {
  const res = await app.inject({ url: `${PREFIX}/phone?format=json` });
  const body = res.json<{ messages: { to: string; code: string; sent_at: string }[] }>();
  const code = body.messages[0]?.code;
  if (code === undefined) throw new Error('no SMS');
  return code;
}

const DRIVER = {
  insured_name: 'Jean Dupont',
  birth_date: '1980-05-14',
  licence_date: '2000-06-01',
  bonus_malus: '0,85',
  postcode: '69003',
};
const VEHICLE = { make: 'Peugeot', model: '308', registration: '', first_registration_date: '2021-03-15', usage: 'prive' };

async function autoQuote(v: ReturnType<typeof visitor>, driver = DRIVER, vehicle = VEHICLE, formula = 'tous_risques') {
  expect(h1Of((await v.go('devis/auto')).body)).toBe('Devis auto – Conducteur');
  expect(h1Of((await v.submit('devis/auto/conducteur', driver)).body)).toBe('Devis auto – Véhicule');
  expect(h1Of((await v.submit('devis/auto/vehicule', vehicle)).body)).toBe('Devis auto – Formule');
  const result = await v.submit('devis/auto/formule', { formula });
  expect(h1Of(result.body)).toBe('Votre tarif');
  return result;
}

describe('login', () => {
  it('sends a visitor without a session to the login page', async () => {
    for (const path of [PREFIX, `${PREFIX}/`, `${PREFIX}/accueil`, `${PREFIX}/devis/auto`]) {
      const res = await app.inject({ url: path });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe(`${PREFIX}/login`);
    }
  });

  it('renders an accessible French login form', async () => {
    const res = await app.inject({ url: `${PREFIX}/login` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<html lang="fr">');
    expect(h1Of(res.body)).toBe('Espace courtier – Sandbox Assurances');
    expect(res.body).toContain('<label for="broker_id">Identifiant courtier</label>');
    expect(res.body).toMatch(/<input id="broker_id" name="broker_id" type="text"/);
    expect(res.body).toContain('<label for="password">Mot de passe</label>');
    expect(res.body).toMatch(/<input id="password" name="password" type="password"/);
    expect(res.body).toContain('<button type="submit">Se connecter</button>');
    // Every input and select has a label pointing at it.
    for (const [, id] of res.body.matchAll(/<(?:input|select) id="([^"]+)"/g)) expect(res.body).toContain(`<label for="${id}">`);
  });

  it('refuses a wrong password with 401 and shows the form again', async () => {
    for (const form of [
      { broker_id: 'demo', password: 'nope' },
      { broker_id: 'someone', password: 'demo' },
      { broker_id: '', password: '' },
    ]) {
      const res = await visitor().post('login', form);
      expect(res.statusCode).toBe(401);
      expect(alertOf(res.body)).toBe('Identifiant ou mot de passe incorrect.');
      expect(res.body).toContain('<label for="broker_id">Identifiant courtier</label>');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('logs demo in with an HttpOnly, SameSite=Lax cookie scoped to the portal', async () => {
    const v = visitor();
    const res = await v.post('login', { broker_id: 'demo', password: 'demo' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${PREFIX}/accueil`);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^sbx_session=[A-Za-z0-9_-]{32}; Path=\/sandbox\/insurer; HttpOnly; SameSite=Lax$/);
    const home = await v.get('accueil');
    expect(h1Of(home.body)).toBe('Accueil');
    for (const link of ['Nouveau devis auto', 'Nouveau devis habitation', 'Attestation d’assurance'])
      expect(home.body).toMatch(new RegExp(`<a href="[^"]+">${link}</a>`));
    expect(home.body).toContain('<button type="submit">Se déconnecter</button>');
    expect((await v.get('')).headers.location).toBe(`${PREFIX}/accueil`);
    expect((await v.get('login')).headers.location).toBe(`${PREFIX}/accueil`);
  });

  it('ends the session on logout', async () => {
    const v = await loggedIn();
    const res = await v.post('logout');
    expect(res.statusCode).toBe(303);
    expect(String(res.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await v.get('accueil')).headers.location).toBe(`${PREFIX}/login`);
  });

  it('expires a session after 15 minutes idle, and not before', async () => {
    const v = await loggedIn();
    clock.advance(14 * 60_000);
    expect((await v.get('accueil')).statusCode).toBe(200);
    clock.advance(14 * 60_000); // 28 min since login, 14 since the last page: still alive
    expect((await v.get('accueil')).statusCode).toBe(200);
    clock.advance(15 * 60_000 + 1);
    const res = await v.get('devis/auto');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${PREFIX}/login?raison=expiree`);
    const login = await v.go(String(res.headers.location));
    expect(alertOf(login.body)).toBe('Votre session a expiré. Reconnectez-vous.');
    expect((await v.get('accueil')).headers.location).toBe(`${PREFIX}/login`);
  });
});

describe('two-step verification', () => {
  it('sends a 6-digit code by SMS and lets the right code in', async () => {
    const v = visitor();
    const res = await v.post('login', { broker_id: 'demo-mfa', password: 'demo' });
    expect(res.headers.location).toBe(`${PREFIX}/mfa`);
    const phone = (await app.inject({ url: `${PREFIX}/phone?format=json` })).json<{
      messages: { to: string; code: string; sent_at: string }[];
    }>();
    expect(phone.messages[0]).toEqual({
      to: '+33 6 12 34 56 42',
      code: expect.stringMatching(/^\d{6}$/),
      sent_at: new Date(clock.now()).toISOString(),
    });
    // Logged in with MFA pending: the other pages wait for the code.
    expect((await v.get('accueil')).headers.location).toBe(`${PREFIX}/mfa`);
    const mfa = await v.get('mfa');
    expect(h1Of(mfa.body)).toBe('Vérification en deux étapes');
    expect(text(mfa.body)).toContain('Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.');
    expect(mfa.body).toContain('<label for="code">Code reçu par SMS</label>');
    expect(mfa.body).toContain('<button type="submit">Valider</button>');
    const home = await v.submit('mfa', { code: await lastCode() });
    expect(h1Of(home.body)).toBe('Accueil');
  });

  it('counts wrong codes down, then accepts the right one', async () => {
    const v = visitor();
    await v.post('login', { broker_id: 'demo-mfa', password: 'demo' });
    const code = await lastCode();
    const wrong = code === '000000' ? '111111' : '000000';
    const first = await v.post('mfa', { code: wrong });
    expect(first.statusCode).toBe(401);
    expect(alertOf(first.body)).toBe('Code incorrect. Il vous reste 2 essai(s).');
    const second = await v.post('mfa', { code: 'abc' });
    expect(alertOf(second.body)).toBe('Code incorrect. Il vous reste 1 essai(s).');
    expect(h1Of((await v.submit('mfa', { code })).body)).toBe('Accueil');
  });

  it('drops the session after three wrong codes', async () => {
    const v = visitor();
    await v.post('login', { broker_id: 'demo-mfa', password: 'demo' });
    const code = await lastCode();
    const wrong = code === '000000' ? '111111' : '000000';
    await v.post('mfa', { code: wrong });
    await v.post('mfa', { code: wrong });
    const third = await v.post('mfa', { code: wrong });
    expect(third.headers.location).toBe(`${PREFIX}/login?raison=essais`);
    const login = await v.go(String(third.headers.location));
    expect(h1Of(login.body)).toBe('Espace courtier – Sandbox Assurances');
    expect(alertOf(login.body)).toBe('Trop d’essais. Reconnectez-vous.');
    // The right code no longer helps: the session is gone.
    expect((await v.post('mfa', { code })).headers.location).toBe(`${PREFIX}/login`);
  });

  it('refuses a code older than 5 minutes', async () => {
    const v = visitor();
    await v.post('login', { broker_id: 'demo-mfa', password: 'demo' });
    const code = await lastCode();
    clock.advance(5 * 60_000 + 1);
    const res = await v.post('mfa', { code });
    expect(res.headers.location).toBe(`${PREFIX}/login?raison=code-expire`);
    expect(alertOf((await v.go(String(res.headers.location))).body)).toBe('Le code a expiré. Reconnectez-vous.');
  });

  it('asks for a new code at every login; the phone lists them newest first', async () => {
    const codes: string[] = [];
    for (let i = 0; i < 2; i++) {
      clock.advance(1000);
      await visitor().post('login', { broker_id: 'demo-mfa', password: 'demo' });
      codes.unshift(await lastCode());
    }
    const json = (await app.inject({ url: `${PREFIX}/phone?format=json` })).json<{ messages: { code: string; sent_at: string }[] }>();
    expect(json.messages.slice(0, 2).map((m) => m.code)).toEqual(codes);
    expect(json.messages[0]!.sent_at > json.messages[1]!.sent_at).toBe(true);
    const html = await app.inject({ url: `${PREFIX}/phone` });
    expect(html.statusCode).toBe(200);
    expect(h1Of(html.body)).toBe('Téléphone de démonstration');
    expect(html.body.indexOf(codes[0]!)).toBeLessThan(html.body.indexOf(codes[1]!));
  });
});

describe('auto quote', () => {
  it('validates step 1 on the server, naming the fields and keeping the values', async () => {
    const v = await loggedIn();
    await v.go('devis/auto');
    const res = await v.post('devis/auto/conducteur', { ...DRIVER, bonus_malus: '4', postcode: '6900', insured_name: '' });
    expect(res.statusCode).toBe(422);
    expect(h1Of(res.body)).toBe('Devis auto – Conducteur');
    const alert = alertOf(res.body) ?? '';
    expect(alert).toContain('Le champ « Nom de l’assuré » est obligatoire.');
    expect(alert).toContain('Le champ « Coefficient bonus-malus » doit être compris entre 0,50 et 3,50.');
    expect(alert).toContain('Le champ « Code postal » doit compter 5 chiffres.');
    expect(res.body).toContain('value="4"');
    expect(res.body).toContain('value="1980-05-14"');
    expect(res.body).toMatch(/id="bonus_malus"[^>]*aria-invalid="true"/);
    for (const label of [
      'Nom de l’assuré',
      'Date de naissance du conducteur',
      'Date d’obtention du permis',
      'Coefficient bonus-malus',
      'Code postal',
    ]) {
      expect(res.body).toMatch(new RegExp(`<label for="[a-z_]+">${label}</label>`));
    }
    const future = await v.post('devis/auto/conducteur', { ...DRIVER, licence_date: '2027-01-01' });
    expect(alertOf(future.body)).toBe('Le champ « Date d’obtention du permis » ne peut pas être dans le futur.');
  });

  it('needs make and model, or a registration like AB-123-CD, at step 2', async () => {
    const v = await loggedIn();
    await v.go('devis/auto');
    // Step 2 and 3 are not reachable before step 1.
    expect((await v.get('devis/auto/vehicule')).headers.location).toBe(`${PREFIX}/devis/auto/conducteur`);
    await v.submit('devis/auto/conducteur', DRIVER);
    const vehiclePage = await v.get('devis/auto/vehicule');
    expect(vehiclePage.body).toMatch(/<label for="usage">Usage<\/label><select id="usage" name="usage"/);
    expect(vehiclePage.body).toContain(
      '<option value="prive">privé</option><option value="professionnel">professionnel</option><option value="mixte">mixte</option>',
    );
    const neither = await v.post('devis/auto/vehicule', { ...VEHICLE, make: '', model: '' });
    expect(neither.statusCode).toBe(422);
    expect(alertOf(neither.body)).toBe('Renseignez les champs « Marque » et « Modèle », ou le champ « Immatriculation ».');
    const badPlate = await v.post('devis/auto/vehicule', { ...VEHICLE, registration: 'AB123CD', usage: 'leisure' });
    expect(alertOf(badPlate.body)).toContain('Le champ « Immatriculation » doit avoir la forme AB-123-CD.');
    expect(alertOf(badPlate.body)).toContain('Choisissez une valeur pour « Usage ».');
    expect(badPlate.body).toContain('value="AB123CD"');
    const plateOnly = await v.submit('devis/auto/vehicule', { ...VEHICLE, make: '', model: '', registration: 'ab-123-cd' });
    expect(h1Of(plateOnly.body)).toBe('Devis auto – Formule');
    expect(plateOnly.body).toContain('<fieldset><legend>Formule</legend>');
    for (const [value, label] of [
      ['tiers', 'Tiers'],
      ['tiers_etendu', 'Tiers étendu'],
      ['tous_risques', 'Tous risques'],
    ]) {
      expect(plateOnly.body).toContain(
        `<input type="radio" id="formula-${value}" name="formula" value="${value}"><label for="formula-${value}">${label}</label>`,
      );
    }
    const noFormula = await v.post('devis/auto/formule', {});
    expect(noFormula.statusCode).toBe(422);
    expect(alertOf(noFormula.body)).toBe('Choisissez une valeur pour « Formule ».');
    expect(noFormula.body).toContain('<button type="submit">Calculer le tarif</button>');
  });

  it('prices deterministically: 380 × 0.85 × 1.9 (tous risques) × 1.15 (Rhône) = 705,76 €', async () => {
    const v = await loggedIn();
    const result = await autoQuote(v);
    expect(ddOf(result.body, 'Prime annuelle')).toBe('705,76\u00a0€');
    expect(ddOf(result.body, 'Formule')).toBe('Tous risques');
    expect(ddOf(result.body, 'Référence')).toMatch(/^DEV-[0-9A-F]{8}$/);
    expect(ddOf(result.body, 'Pièces à fournir')).toBe('Relevé d’information');
    expect(result.body).toMatch(/<a href="\/sandbox\/insurer\/devis\/[0-9a-f]{16}\/pdf">Télécharger le devis \(PDF\)<\/a>/);
    const again = await autoQuote(v);
    expect(ddOf(again.body, 'Prime annuelle')).toBe('705,76\u00a0€');
    expect(ddOf(again.body, 'Référence')).not.toBe(ddOf(result.body, 'Référence'));
  });

  it('applies the young-driver, usage and Paris factors', async () => {
    const v = await loggedIn();
    // Licence held 2 years: × 1.6; professionnel × 1.3; tiers étendu × 1.35; Paris × 1.3; bonus-malus 1.
    const young = await autoQuote(
      v,
      { ...DRIVER, licence_date: '2024-12-01', bonus_malus: '1', postcode: '75011' },
      { ...VEHICLE, usage: 'professionnel' },
      'tiers_etendu',
    );
    // 380 × 1 × 1.6 × 1.3 × 1.35 × 1.3 = 1387.152
    expect(ddOf(young.body, 'Prime annuelle')).toBe('1\u00a0387,15\u00a0€');
    expect(ddOf(young.body, 'Formule')).toBe('Tiers étendu');
  });
});

describe('home quote', () => {
  const DWELLING = { insured_name: 'Marie Curie', dwelling_type: 'appartement', surface: '62', rooms: '3', postcode: '75011' };

  it('validates both steps and prices (62 × 1.40 + 3 × 9 + 15000 × 0.45 %) × 1.3 = 235,69 €', async () => {
    const v = await loggedIn();
    expect(h1Of((await v.go('devis/habitation')).body)).toBe('Devis habitation – Logement');
    const bad = await v.post('devis/habitation/logement', { ...DWELLING, surface: 'vingt', dwelling_type: 'chateau' });
    expect(bad.statusCode).toBe(422);
    expect(alertOf(bad.body)).toContain('Choisissez une valeur pour « Type de logement ».');
    expect(alertOf(bad.body)).toContain('Le champ « Surface (m²) » doit être un nombre entier entre 9 et 1\u00a0000.');
    expect(bad.body).toContain('value="vingt"');
    const occupation = await v.submit('devis/habitation/logement', DWELLING);
    expect(h1Of(occupation.body)).toBe('Devis habitation – Occupation');
    expect(occupation.body).toContain('<label for="occupant_status">Statut de l’occupant</label>');
    expect(occupation.body).toContain('<label for="contents_capital">Capital mobilier (€)</label>');
    const badCapital = await v.post('devis/habitation/occupation', { occupant_status: 'locataire', contents_capital: '10' });
    expect(alertOf(badCapital.body)).toBe('Le champ « Capital mobilier (€) » doit être un nombre entier entre 1\u00a0000 et 500\u00a0000.');
    const result = await v.submit('devis/habitation/occupation', { occupant_status: 'locataire', contents_capital: '15000' });
    expect(h1Of(result.body)).toBe('Votre tarif');
    expect(ddOf(result.body, 'Prime annuelle')).toBe('235,69\u00a0€');
    expect(ddOf(result.body, 'Formule')).toBe('Habitation locataire');
  });

  it('charges owners 25 % more: a 120 m² house in the Loiret', async () => {
    const v = await loggedIn();
    await v.go('devis/habitation');
    await v.submit('devis/habitation/logement', { ...DWELLING, dwelling_type: 'maison', surface: '120', rooms: '5', postcode: '45000' });
    const result = await v.submit('devis/habitation/occupation', { occupant_status: 'proprietaire', contents_capital: '30000' });
    // (120 × 1.90 + 5 × 9 + 30000 × 0.0045) × 1.25 × 1 = (228 + 45 + 135) × 1.25 = 510
    expect(ddOf(result.body, 'Prime annuelle')).toBe('510,00\u00a0€');
  });
});

/** pdf-lib writes Info strings as <FEFF…>: the hex of their UTF-16BE encoding. */
function pdfInfoHex(value: string): string {
  const utf16le = Buffer.from(value, 'utf16le');
  return `FEFF${Buffer.from(utf16le.swap16()).toString('hex').toUpperCase()}`;
}

describe('PDFs', () => {
  it('serves the quote as an attachment whose title carries the premium', async () => {
    const v = await loggedIn();
    const result = await autoQuote(v);
    const href = /href="([^"]+\/pdf)"/.exec(result.body)?.[1] ?? '';
    const pdf = await v.get(href);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toMatch(/^attachment; filename="devis-DEV-[0-9A-F]{8}\.pdf"$/);
    expect(pdf.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const doc = await PDFDocument.load(pdf.rawPayload);
    expect(doc.getTitle()).toBe('Devis auto – 705,76\u00a0€ – Jean Dupont');
    expect(doc.getSubject()).toContain(
      'Sandbox Assurances – Assurance auto – formule Tous risques – prime annuelle 705,76\u00a0€ – Jean Dupont',
    );
    expect(doc.getAuthor()).toBe('Sandbox Assurances');
    // Without a PDF library: the Info dictionary is in clear (no object streams).
    const raw = pdf.rawPayload.toString('latin1');
    expect(raw).toContain(`/Title <${pdfInfoHex('Devis auto – 705,76\u00a0€ – Jean Dupont')}>`);
    expect(raw).toMatch(
      /\/Keywords \(Sandbox Assurances; devis auto; prime annuelle 705,76 EUR; formule Tous risques; assure Jean Dupont; reference DEV-[0-9A-F]{8}\)/,
    );
    expect(doc.getKeywords()).toContain('prime annuelle 705,76 EUR');
  });

  it('keeps quotes private to their broker account', async () => {
    const v = await loggedIn();
    const result = await autoQuote(v);
    const href = /href="([^"]+\/pdf)"/.exec(result.body)?.[1] ?? '';
    const w = visitor();
    await w.post('login', { broker_id: 'demo-mfa', password: 'demo' });
    await w.submit('mfa', { code: await lastCode() });
    expect((await w.get(href)).statusCode).toBe(404);
    expect((await w.get(href.replace(/\/pdf$/, ''))).statusCode).toBe(404);
  });

  it('survives names the PDF font cannot draw', async () => {
    const v = await loggedIn();
    const result = await autoQuote(v, { ...DRIVER, insured_name: 'Łukasz 🚗 Żak' });
    const href = /href="([^"]+\/pdf)"/.exec(result.body)?.[1] ?? '';
    const pdf = await v.get(href);
    expect(pdf.statusCode).toBe(200);
    const doc = await PDFDocument.load(pdf.rawPayload);
    expect(doc.getTitle()).toBe('Devis auto – 705,76\u00a0€ – Łukasz 🚗 Żak');
    expect(doc.getKeywords()).toContain('assure ?ukasz ? Zak;'); // Ł has no ASCII decomposition
  });
});

describe('attestation', () => {
  it('finds contracts numbered SBX-123456 and serves their attestation', async () => {
    const v = await loggedIn();
    const form = await v.go('attestation');
    expect(form.body).toContain('<label for="policy_number">Numéro de contrat</label>');
    const missing = await v.post('attestation', { policy_number: 'ABC-42' });
    expect(missing.statusCode).toBe(404);
    expect(alertOf(missing.body)).toBe('Contrat introuvable.');
    expect(missing.body).toContain('value="ABC-42"');
    const page = await v.submit('attestation', { policy_number: 'sbx-123456' });
    expect(h1Of(page.body)).toBe('Attestation d’assurance');
    expect(ddOf(page.body, 'Période de validité')).toBe('du 01/01/2026 au 31/12/2026');
    const href = /<a href="([^"]+)">Télécharger l’attestation \(PDF\)<\/a>/.exec(page.body)?.[1] ?? '';
    expect(href).toBe(`${PREFIX}/attestation/SBX-123456/pdf`);
    const pdf = await v.get(href);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toBe('attachment; filename="attestation-SBX-123456.pdf"');
    expect((await PDFDocument.load(pdf.rawPayload)).getTitle()).toBe('Attestation d’assurance – SBX-123456');
  });
});

describe('modes', () => {
  it('down: every portal page is a 503 "Service momentanément indisponible"; the phone still answers', async () => {
    const v = await loggedIn();
    mode = 'down';
    for (const path of ['login', 'accueil', 'devis/auto', '']) {
      const res = await v.get(path);
      expect(res.statusCode).toBe(503);
      expect(h1Of(res.body)).toBe('Service momentanément indisponible');
    }
    expect((await v.post('login', { broker_id: 'demo', password: 'demo' })).statusCode).toBe(503);
    expect((await app.inject({ url: `${PREFIX}/phone?format=json` })).statusCode).toBe(200);
    mode = 'normal';
    expect((await v.get('accueil')).statusCode).toBe(200);
  });

  it('flaky: every third page request is a 503', async () => {
    const v = await loggedIn();
    mode = 'flaky';
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await v.get('accueil')).statusCode);
    // The counter runs across requests in flaky mode: wherever it starts, one in three fails.
    expect(statuses.filter((s) => s === 503)).toHaveLength(3);
    const first = statuses.indexOf(503);
    expect(statuses.map((s, i) => (s === 503) === ((i - first) % 3 === 0))).toEqual(Array(9).fill(true));
    // The phone is not counted.
    for (let i = 0; i < 3; i++) expect((await app.inject({ url: `${PREFIX}/phone` })).statusCode).toBe(200);
  });

  it('changed: the redesign adds a first step to the auto quote and renames its driver page, and a broker can still price through it', async () => {
    const v = await loggedIn();
    mode = 'changed';
    const needs = await v.go('devis/auto');
    expect(h1Of(needs.body)).toBe('Devis auto – Vos besoins');
    expect(needs.body).toContain('Étape 1 sur 4');
    const driverPage = await v.submit('devis/auto/besoins', {});
    expect(h1Of(driverPage.body)).toBe('Devis auto – Conducteur principal');
    expect(driverPage.body).toContain('>Date de naissance<');
    expect(driverPage.body).not.toContain('Date de naissance du conducteur');
    // The postcode moved first.
    expect(driverPage.body.indexOf('id="postcode"')).toBeLessThan(driverPage.body.indexOf('id="insured_name"'));
    expect(h1Of((await v.submit('devis/auto/conducteur', DRIVER)).body)).toBe('Devis auto – Véhicule');
    expect(h1Of((await v.submit('devis/auto/vehicule', VEHICLE)).body)).toBe('Devis auto – Formule');
    expect(h1Of((await v.submit('devis/auto/formule', { formula: 'tous_risques' })).body)).toBe('Votre tarif');
    expect(h1Of((await v.go('devis/habitation')).body)).toBe('Devis habitation – Votre logement');
    mode = 'normal';
    expect(h1Of((await v.go('devis/auto')).body)).toBe('Devis auto – Conducteur');
  });

  it('slow: every page waits for the latency', async () => {
    const v = await loggedIn();
    mode = 'slow';
    latency = 150;
    const started = performance.now();
    expect((await v.get('accueil')).statusCode).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const phoneStarted = performance.now();
    await app.inject({ url: `${PREFIX}/phone` });
    expect(performance.now() - phoneStarted).toBeLessThan(140);
  });
});

describe('encapsulation', () => {
  it('checks the session before every signed-in page, GET and POST: no session → login, a code still due → mfa', async () => {
    const signedInPages: ['GET' | 'POST', string][] = [
      ['GET', 'accueil'],
      ...[
        'devis/auto',
        'devis/habitation',
        'devis/0123456789abcdef',
        'devis/0123456789abcdef/pdf',
        'attestation/SBX-123456',
        'attestation/SBX-123456/pdf',
      ].map((path) => ['GET', path] as ['GET', string]),
      ...[
        'devis/auto/conducteur',
        'devis/auto/vehicule',
        'devis/auto/formule',
        'devis/habitation/logement',
        'devis/habitation/occupation',
        'attestation',
      ].flatMap(
        (path) =>
          [
            ['GET', path],
            ['POST', path],
          ] as ['GET' | 'POST', string][],
      ),
    ];
    const awaitingCode = visitor();
    expect((await awaitingCode.post('login', { broker_id: 'demo-mfa', password: 'demo' })).headers.location).toBe(`${PREFIX}/mfa`);
    for (const [method, path] of signedInPages) {
      const stranger = method === 'GET' ? await visitor().get(path) : await visitor().post(path, { policy_number: 'SBX-123456' });
      expect([path, stranger.statusCode, stranger.headers.location]).toEqual([path, 303, `${PREFIX}/login`]);
      const halfway = method === 'GET' ? await awaitingCode.get(path) : await awaitingCode.post(path, { policy_number: 'SBX-123456' });
      expect([path, halfway.statusCode, halfway.headers.location]).toEqual([path, 303, `${PREFIX}/mfa`]);
    }
    for (const path of ['login', 'phone']) expect((await visitor().get(path)).statusCode).toBe(200);
  });

  it('parses urlencoded forms only inside the portal', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/outside',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'a=1',
    });
    expect(res.statusCode).toBe(415);
  });

  it('answers unknown portal paths with an HTML 404', async () => {
    const res = await app.inject({ url: `${PREFIX}/nowhere` });
    expect(res.statusCode).toBe(404);
    expect(h1Of(res.body)).toBe('Page introuvable');
  });

  it('keeps state per plugin instance', async () => {
    const other = Fastify();
    await other.register(sandboxPortalPlugin, { prefix: PREFIX, clock, randomBytes, mode: () => 'normal', latencyMs: () => 0 });
    const res = await other.inject({ url: `${PREFIX}/phone?format=json` });
    expect(res.json()).toEqual({ messages: [] });
    await other.close();
  });
});
