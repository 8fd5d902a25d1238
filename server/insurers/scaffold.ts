import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTER_API_VERSION, ADAPTER_KEYWORD, productJsonSchema, z } from '@courtier/adapter-kit';
import type { Cassette } from './cassette.js';

/**
 * `courtier insurers new`: a package that passes its own test at once. Its robot drives a small
 * made-up portal (a login, a quote form, a result) whose recorded session is its cassette, so that an
 * author starts from working code and replaces the portal's pages with their insurer's, then records.
 */

/** The starter product's dicData: the scaffold's JavaScript declares the same (the loader compares them). */
const starterSchema = z.object({
  insured_name: z.string().trim().min(2).max(80).describe('Nom de l’assuré'),
  postcode: z
    .string()
    .regex(/^\d{5}$/, 'five digits')
    .describe('Code postal'),
});
const starterExample = { insured_name: 'Jeanne Exemple', postcode: '75011' };

function html(title: string, body: string): string {
  return `<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
}

/** The made-up portal's session, as a cassette records it. */
function starterCassette(code: string, origin: string): Cassette {
  const page = (path: string, title: string, body: string) => ({
    method: 'GET',
    origin,
    path,
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: { encoding: 'utf8' as const, text: html(title, body) },
  });
  const redirect = (path: string, to: string) => ({
    method: 'POST',
    origin,
    path,
    status: 303,
    headers: { location: to },
    body: { encoding: 'base64' as const, text: '' },
  });
  const field = (id: string, label: string, type = 'text') =>
    `<p><label for="${id}">${label}</label><input id="${id}" name="${id}" type="${type}"></p>`;
  return {
    format: 1,
    insurer: code,
    adapter_version: '0.1.0',
    produit: 'auto',
    recorded_at: '2026-01-01T00:00:00.000Z',
    origin,
    dicData: starterExample,
    codes: 0,
    exchanges: [
      page(
        '/login',
        'Connexion',
        `<form method="post" action="/login">${field('login', 'Identifiant')}${field('password', 'Mot de passe', 'password')}<button>Se connecter</button></form>`,
      ),
      redirect('/login', '/devis'),
      page(
        '/devis',
        'Devis auto',
        `<form method="post" action="/devis">${field('insured_name', 'Nom de l’assuré')}${field('postcode', 'Code postal')}<button>Calculer</button></form>`,
      ),
      redirect('/devis', '/resultat'),
      page('/resultat', 'Votre tarif', '<p>Prime annuelle : <strong data-testid="prime">412,50 €</strong></p>'),
    ],
    result: { tarif_eur: 412.5, outcome: 'partial', suspens: null, pdf: false },
  };
}

const PAGES_JS = `// @ts-check
import { parseEuros } from '@courtier/adapter-kit';

/**
 * One page object per portal page: what the step expects of the page (checked before anything is
 * typed: a redesign fails as portal_changed, naming the step), and what the robot does there, by
 * role and label as a person finds it. Each acts through the kit's PortalDriver: an element not
 * found becomes layout_changed, a portal that does not answer insurer_unavailable.
 */

/** @typedef {import('@courtier/adapter-kit').PortalDriver} PortalDriver */

/** @param {string} role @param {string} name */
const landmark = (role, name) => ({ role, name });

export class LoginPage {
  static expected = {
    step: 'login',
    path: /\\/login$/,
    landmarks: [landmark('heading', 'Connexion'), landmark('textbox', 'Identifiant'), landmark('textbox', 'Mot de passe'), landmark('button', 'Se connecter')],
  };

  /** @param {PortalDriver} portal */
  constructor(portal) {
    this.portal = portal;
  }

  /** @param {{ login: string, password: string }} credentials */
  async logIn({ login, password }) {
    const { portal } = this;
    await portal.goto('/login');
    await portal.expectPage(LoginPage.expected);
    await portal.act('the field "Identifiant"', (o) => portal.page.getByLabel('Identifiant', { exact: true }).fill(login, o));
    // The password is typed and submitted with the trace paused: no artifact ever holds it.
    await portal.withSecrets([password], async () => {
      await portal.act('the field "Mot de passe"', (o) => portal.page.getByLabel('Mot de passe', { exact: true }).fill(password, o));
      await Promise.all([
        portal.page.waitForURL(/\\/devis$/, { timeout: portal.timeouts.navigationMs }),
        portal.act('the button "Se connecter"', (o) => portal.page.getByRole('button', { name: 'Se connecter', exact: true }).click(o)),
      ]);
    });
  }
}

export class QuoteForm {
  static expected = {
    step: 'quote',
    path: /\\/devis$/,
    landmarks: [landmark('heading', 'Devis auto'), landmark('textbox', 'Nom de l’assuré'), landmark('textbox', 'Code postal'), landmark('button', 'Calculer')],
  };

  /** @param {PortalDriver} portal @param {import('@courtier/adapter-kit').RobotContext} ctx */
  constructor(portal, ctx) {
    this.portal = portal;
    this.ctx = ctx;
  }

  /** @param {{ insured_name: string, postcode: string }} data */
  async price(data) {
    const { portal } = this;
    await portal.expectPage(QuoteForm.expected);
    await portal.act('the field "Nom de l’assuré"', (o) => portal.page.getByLabel('Nom de l’assuré', { exact: true }).fill(data.insured_name, o));
    await portal.act('the field "Code postal"', (o) => portal.page.getByLabel('Code postal', { exact: true }).fill(data.postcode, o));
    // From the click on, the insurer may have priced: a crash must not price twice.
    this.ctx.markSubmitted();
    await Promise.all([
      portal.page.waitForURL(/\\/resultat$/, { timeout: portal.timeouts.navigationMs }),
      portal.act('the button "Calculer"', (o) => portal.page.getByRole('button', { name: 'Calculer', exact: true }).click(o)),
    ]);
  }
}

export class ResultPage {
  static expected = { step: 'result', path: /\\/resultat$/, landmarks: [landmark('heading', 'Votre tarif')] };

  /** @param {PortalDriver} portal */
  constructor(portal) {
    this.portal = portal;
  }

  /** The annual premium, "412,50 €" read as 412.5 (null when it is not an amount). */
  async premium() {
    const { portal } = this;
    await portal.expectPage(ResultPage.expected);
    return parseEuros(await portal.act('the premium', (o) => portal.page.getByTestId('prime').innerText(o)));
  }
}
`;

function indexJs(portal: string): string {
  return `// @ts-check
import { defineInsurer, PortalDriver, RobotError, z } from '@courtier/adapter-kit';
import { LoginPage, QuoteForm, ResultPage } from './pages.js';

/** The portal this robot drives: replace it with the insurer's extranet, and list its origin in package.json. */
const PORTAL = ${JSON.stringify(portal)};

/** The product's dicData: the manifest in package.json lists the same as JSON Schema (the loader compares them). */
const auto = z.object({
  insured_name: z.string().trim().min(2).max(80).describe('Nom de l’assuré'),
  postcode: z
    .string()
    .regex(/^\\d{5}$/, 'five digits')
    .describe('Code postal'),
});

export const PRODUCTS = [
  { code: 'auto', label: 'Assurance auto', kind: /** @type {const} */ ('quote'), schema: auto, example: ${JSON.stringify(starterExample)} },
];

export default defineInsurer(() => ({
  products: PRODUCTS,
  async run(ctx, input) {
    const parsed = auto.safeParse(input.dicData);
    if (!parsed.success) throw new RobotError('business', 'data_refused', parsed.error.issues.map((i) => i.message).join('; '));
    const portal = new PortalDriver(await ctx.openPage(), ctx, {
      baseUrl: PORTAL,
      name: 'The portal',
      timeouts: { actionMs: 5_000, navigationMs: 15_000 },
    });
    ctx.progress('logging in', 10);
    await new LoginPage(portal).logIn(ctx.credentials());
    ctx.progress('pricing', 50);
    await new QuoteForm(portal, ctx).price(parsed.data);
    ctx.progress('reading the result', 90);
    const premium = await new ResultPage(portal).premium();
    if (premium === null) throw new RobotError('technical', 'layout_changed', 'The premium could not be read.');
    return { tarif_eur: premium, outcome: 'partial' };
  },
}));
`;
}

function readme(code: string): string {
  return `# ${code}: a Courtier insurer adapter

Made by \`courtier insurers new ${code}\`. Its robot drives a small made-up portal, recorded in
\`cassettes/auto.json\`, so that it passes its test at once:

    courtier insurers test .

Then make it your insurer's:

1. In \`index.js\`, set \`PORTAL\` to the extranet's address, and list its origin in package.json's
   \`courtier.origins\`; set the insurer's name, credentials and products there too.
2. In \`pages.js\`, write one page object per portal page: what each step expects to find (its
   heading, fields and buttons) and what it does there, by role and label.
3. Try it against the portal with a cabinet's credentials, then record its cassette:

       courtier insurers try ${code} --product auto --data example.json --cabinet ID
       courtier insurers record ${code} --product auto --data example.json --out cassettes

4. Sign it if the cabinets that install it require signed adapters: \`courtier insurers sign . --key key.pem\`.

The whole guide is Courtier's docs/ADAPTERS.md.
`;
}

/** Writes a new adapter package for the insurer `code` into `dir` (which must not exist or be empty). */
export function scaffoldAdapter(dir: string, code: string): string[] {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`);
  const origin = `https://extranet.${code}.example`;
  const pkg = {
    name: `courtier-insurer-${code}`,
    version: '0.1.0',
    description: `The Courtier robot of ${code}.`,
    private: true,
    type: 'module',
    main: 'index.js',
    keywords: [ADAPTER_KEYWORD],
    engines: { 'courtier-adapter-api': `^${ADAPTER_API_VERSION}` },
    peerDependencies: { '@courtier/adapter-kit': `^${ADAPTER_API_VERSION}` },
    courtier: {
      code,
      name: `${code.charAt(0).toUpperCase()}${code.slice(1)} Assurances`,
      products: [
        { code: 'auto', label: 'Assurance auto', kind: 'quote', schema: productJsonSchema(starterSchema), example: starterExample },
      ],
      credentials: { login: 'Identifiant', password: 'Mot de passe', extra: [] },
      humanSteps: [],
      origins: [origin],
    },
  };
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(pkg, null, 2)}\n`,
    'index.js': indexJs(origin),
    'pages.js': PAGES_JS,
    'example.json': `${JSON.stringify(starterExample, null, 2)}\n`,
    'cassettes/auto.json': `${JSON.stringify(starterCassette(code, origin), null, 2)}\n`,
    'README.md': readme(code),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return Object.keys(files);
}
