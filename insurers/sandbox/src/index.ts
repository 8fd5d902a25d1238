import {
  cancelled,
  defineInsurer,
  type InsurerAdapter,
  type Page,
  type RobotContext,
  RobotError,
  type RobotResult,
  type z,
} from '@courtier/adapter-kit';
import { AttestationPage } from './pages/attestation-page.js';
import { AutoQuoteForm } from './pages/auto-quote-form.js';
import { HomeQuoteForm } from './pages/home-quote-form.js';
import { LoginPage } from './pages/login-page.js';
import { MfaPage } from './pages/mfa-page.js';
import { ResultsPage, type QuoteResult } from './pages/results-page.js';
import { DEFAULT_TIMEOUTS, PortalSession, type SandboxTimeouts } from './page-driver.js';
import { attestationSchema, autoSchema, homeSchema, SANDBOX_PRODUCTS } from './products.js';
import { SANDBOX_RISKS } from './risks.js';

export interface SandboxAdapterOptions {
  /** The portal's base URL, prefix included: e.g. http://127.0.0.1:8787/sandbox/insurer. Read at each run. */
  portalUrl: () => string;
  timeouts?: Partial<SandboxTimeouts>;
}

/** Each product's first page behind the login. */
const FIRST_PATHS = { auto: AutoQuoteForm.firstPath, mrh: HomeQuoteForm.firstPath, attestation: AttestationPage.firstPath } as const;

/** The portal allows 3 codes per login; the robot never asks a person more often than that. */
const MAX_MFA_ATTEMPTS = 3;

/**
 * The robot of "Sandbox Assurances", the demo insurer portal Courtier serves under /sandbox/insurer/
 * while its sandbox is on. It is the worked example of docs/ADAPTERS.md.
 */
export function createSandboxAdapter(options: SandboxAdapterOptions): InsurerAdapter {
  const timeouts: SandboxTimeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };

  /** From the portal's login form, to its home page. */
  async function logIn(ctx: RobotContext, portal: PortalSession): Promise<void> {
    ctx.progress('logging in', 10);
    const login = new LoginPage(portal);
    if ((await login.logIn(ctx.credentials())) === 'home') return;

    ctx.progress('two-step verification', 15);
    const mfa = new MfaPage(portal);
    const instructions = await mfa.instructions();
    let challenge = instructions;
    for (let attempt = 1; attempt <= MAX_MFA_ATTEMPTS; attempt++) {
      const code = await portal.abortable(ctx.requestMfa(challenge));
      portal.throwIfAborted();
      const outcome = await mfa.enter(code);
      if (outcome.ok) return;
      // "Code incorrect. Il vous reste 2 essai(s)." — ask again with the portal's words.
      challenge = `${outcome.message} ${instructions}`;
    }
    throw new RobotError('business', 'mfa_rejected', 'The sandbox portal refused every MFA code given.');
  }

  async function readResult(ctx: RobotContext, portal: PortalSession): Promise<RobotResult> {
    ctx.progress('reading the result', 85);
    const results = new ResultsPage(portal);
    const quote: QuoteResult = await results.read();
    ctx.progress('downloading the PDF', 92);
    const pdf = await results.downloadPdf();
    const suspens = quote.pieces ?? undefined;
    return pdf
      ? { tarif_eur: quote.premiumEur, ...(suspens ? { suspens } : {}), pdf, outcome: 'complete' }
      : { tarif_eur: quote.premiumEur, ...(suspens ? { suspens } : {}), outcome: 'partial' };
  }

  async function priceAuto(
    ctx: RobotContext,
    portal: PortalSession,
    dicData: Record<string, unknown>,
    opened: boolean,
  ): Promise<RobotResult> {
    const data = parse(autoSchema, dicData);
    const form = new AutoQuoteForm(portal);
    ctx.progress('opening the auto quote', 25);
    if (!opened) await form.open();
    ctx.progress('driver', 35);
    await form.fillDriver(data);
    ctx.progress('vehicle', 50);
    await form.fillVehicle(data);
    ctx.progress('formula', 65);
    await form.chooseFormula(data.formula);
    portal.throwIfAborted();
    // From the click on, the insurer may have priced: a crash must not make the worker run it again.
    ctx.markSubmitted();
    ctx.progress('pricing', 75);
    await form.calculate();
    return readResult(ctx, portal);
  }

  async function priceHome(
    ctx: RobotContext,
    portal: PortalSession,
    dicData: Record<string, unknown>,
    opened: boolean,
  ): Promise<RobotResult> {
    const data = parse(homeSchema, dicData);
    const form = new HomeQuoteForm(portal);
    ctx.progress('opening the home quote', 25);
    if (!opened) await form.open();
    ctx.progress('dwelling', 40);
    await form.fillDwelling(data);
    ctx.progress('occupation', 60);
    await form.fillOccupation(data);
    portal.throwIfAborted();
    ctx.markSubmitted();
    ctx.progress('pricing', 75);
    await form.calculate();
    return readResult(ctx, portal);
  }

  async function attestation(
    ctx: RobotContext,
    portal: PortalSession,
    dicData: Record<string, unknown>,
    opened: boolean,
  ): Promise<RobotResult> {
    const data = parse(attestationSchema, dicData);
    const page = new AttestationPage(portal);
    ctx.progress('opening the attestation form', 30);
    if (!opened) await page.open();
    // Asking for an attestation twice is harmless: no markSubmitted, a crash may retry it.
    ctx.progress('requesting the attestation', 55);
    await page.request(data.policy_number);
    ctx.progress('downloading the PDF', 85);
    const pdf = await page.downloadPdf();
    return pdf ? { tarif_eur: 0, pdf, outcome: 'complete' } : { tarif_eur: 0, outcome: 'partial' };
  }

  return {
    products: SANDBOX_PRODUCTS,
    risks: SANDBOX_RISKS,
    async run(ctx, input) {
      const product = SANDBOX_PRODUCTS.find((p) => p.code === input.produit);
      if (!product) throw new RobotError('business', 'unknown_product', `Sandbox Assurances has no product ${input.produit}.`);
      if (ctx.signal.aborted) throw cancelled();
      ctx.progress('opening the browser', 5);
      const portal = await openPortal(ctx);
      try {
        // A page resumed from the login's previous job is still logged in: its form opens at once,
        // with no password and no code. Otherwise the portal shows its login form.
        const first = FIRST_PATHS[product.code];
        const opened = (await new LoginPage(portal).openSignedIn(first)) === 'open';
        if (!opened) await logIn(ctx, portal);
        portal.throwIfAborted();
        switch (product.code) {
          case 'auto':
            return await priceAuto(ctx, portal, input.dicData, opened);
          case 'mrh':
            return await priceHome(ctx, portal, input.dicData, opened);
          case 'attestation':
            return await attestation(ctx, portal, input.dicData, opened);
        }
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
    async verifyLogin(ctx) {
      if (ctx.signal.aborted) throw cancelled();
      const portal = await openPortal(ctx);
      try {
        const login = new LoginPage(portal);
        // A check's page is always fresh (never resumed): the portal must show its login form.
        if ((await login.open()) === 'home')
          throw new RobotError('technical', 'layout_changed', 'The sandbox portal showed its home page instead of the login form.');
        // Stops at the code page if there is one: the password was accepted, and no code is asked for.
        return { mfa: (await login.logIn(ctx.credentials())) === 'mfa' };
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
  };

  async function openPortal(ctx: RobotContext): Promise<PortalSession> {
    const page: Page = await ctx.openPage();
    page.setDefaultTimeout(timeouts.actionMs);
    page.setDefaultNavigationTimeout(timeouts.navigationMs);
    return new PortalSession(page, options.portalUrl().replace(/\/+$/, ''), ctx, timeouts);
  }
}

function asRobotError(ctx: RobotContext, err: unknown): RobotError {
  if (ctx.signal.aborted) return cancelled();
  if (err instanceof RobotError) return err;
  return new RobotError('technical', 'browser_error', `The sandbox robot failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
}

/** The service validated dicData at enqueue; this is the typed view (and a guard for direct callers). */
function parse<S extends z.ZodType>(schema: S, dicData: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(dicData);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.map(String).join('.') || 'dicData'}: ${i.message}`).join('; ');
  throw new RobotError('business', 'data_refused', `The data does not fit Sandbox Assurances: ${problems}`);
}

/** The package's entry: Courtier's loader calls it with the URL it serves the portal at. */
export default defineInsurer((host) => createSandboxAdapter({ portalUrl: () => host.sandboxUrl() }));
