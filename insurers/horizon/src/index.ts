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
import { OffersPage } from './pages/offers.js';
import { QuoteWizard } from './pages/quote-wizard.js';
import { SignIn } from './pages/sign-in.js';
import { carSchema, homeSchema, HORIZON_PRODUCTS } from './products.js';
import { DEFAULT_TIMEOUTS, SpaSession, type HorizonTimeouts } from './spa-driver.js';
import { HORIZON_RISKS } from './risks.js';

export interface HorizonAdapterOptions {
  /** The portal's base URL, prefix included: e.g. http://127.0.0.1:8787/sandbox/horizon. Read at each run. */
  portalUrl: () => string;
  timeouts?: Partial<HorizonTimeouts>;
}

/**
 * The robot of "Horizon Direct", a demo insurer whose portal is a single-page app on a JSON API,
 * served by Courtier under /sandbox/horizon/ while its sandbox is on (docs/ADAPTERS.md, "Worked
 * example: Horizon Direct").
 */
export function createHorizonAdapter(options: HorizonAdapterOptions): InsurerAdapter {
  const timeouts: HorizonTimeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };

  async function signIn(ctx: RobotContext, spa: SpaSession): Promise<void> {
    ctx.progress('opening the portal', 8);
    const signIn = new SignIn(spa);
    let screen = await signIn.openHome();
    if (screen === 'login') {
      ctx.progress('logging in', 12);
      screen = await signIn.logIn(ctx.credentials());
    }
    if (screen === 'approval') {
      ctx.progress('approval in the Horizon app', 15);
      await signIn.approve(ctx);
    }
  }

  async function price(
    ctx: RobotContext,
    spa: SpaSession,
    product: 'voiture' | 'logement',
    dicData: Record<string, unknown>,
  ): Promise<RobotResult> {
    const wizard = new QuoteWizard(spa);
    const { formule, steps } = stepsOf(wizard, product, dicData);
    ctx.progress(product === 'voiture' ? 'opening the car quote' : 'opening the home quote', 25);
    await wizard.open(product);
    let answer;
    for (const [index, step] of steps.entries()) {
      ctx.progress(step.page.step, 35 + index * 20);
      await wizard.fill(step);
      const last = index === steps.length - 1;
      // The last step's button prices: from the click on, a crash must not make the worker run it again.
      if (last) {
        spa.throwIfAborted();
        ctx.markSubmitted();
      }
      answer = await wizard.send(step, last ? 'Voir les tarifs' : 'Continuer');
    }
    ctx.progress('reading the offers', 75);
    const offers = new OffersPage(spa);
    const quote = await offers.read(answer!);
    const chosen = quote.offres.find((o) => o.formule === formule);
    if (!chosen) throw new RobotError('business', 'data_refused', `Horizon Direct offers no formula ${formule} for this risk.`);
    ctx.progress('choosing the formula', 82);
    const documents = await offers.choose(quote, formule);
    ctx.progress('downloading the documents', 90);
    const { pdf, others } = await offers.download(documents);
    return {
      tarif_eur: chosen.prime_annuelle_eur,
      offres: quote.offres,
      ...(others.length > 0 ? { documents: others } : {}),
      ...(pdf ? { pdf, outcome: 'complete' as const } : { outcome: 'partial' as const }),
    };
  }

  async function openSpa(ctx: RobotContext): Promise<SpaSession> {
    const page: Page = await ctx.openPage();
    page.setDefaultTimeout(timeouts.actionMs);
    page.setDefaultNavigationTimeout(timeouts.navigationMs);
    return new SpaSession(page, options.portalUrl().replace(/\/+$/, ''), ctx, timeouts);
  }

  return {
    products: HORIZON_PRODUCTS,
    risks: HORIZON_RISKS,
    async run(ctx, input) {
      const product = HORIZON_PRODUCTS.find((p) => p.code === input.produit);
      if (!product) throw new RobotError('business', 'unknown_product', `Horizon Direct has no product ${input.produit}.`);
      if (ctx.signal.aborted) throw cancelled();
      ctx.progress('opening the browser', 5);
      const spa = await openSpa(ctx);
      try {
        // A page resumed from the login's previous job is still signed in: the dashboard shows at once.
        await signIn(ctx, spa);
        spa.throwIfAborted();
        return await price(ctx, spa, product.code, input.dicData);
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
    async verifyLogin(ctx) {
      if (ctx.signal.aborted) throw cancelled();
      const spa = await openSpa(ctx);
      try {
        const signIn = new SignIn(spa);
        if ((await signIn.openHome()) !== 'login')
          throw new RobotError('technical', 'layout_changed', 'The Horizon portal did not show its login screen to a new browser.');
        // Stops before the approval: the password was accepted, and nothing is pushed to a phone.
        return { mfa: (await signIn.logIn(ctx.credentials())) === 'approval' };
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
  };
}

/** The wizard's steps for the product's dicData, and the formula the quote is for. */
function stepsOf(wizard: QuoteWizard, product: 'voiture' | 'logement', dicData: Record<string, unknown>) {
  if (product === 'voiture') {
    const data = parse(carSchema, dicData);
    return { formule: data.formule, steps: wizard.carSteps(data) };
  }
  const data = parse(homeSchema, dicData);
  return { formule: data.formule, steps: wizard.homeSteps(data) };
}

function asRobotError(ctx: RobotContext, err: unknown): RobotError {
  if (ctx.signal.aborted) return cancelled();
  if (err instanceof RobotError) return err;
  return new RobotError('technical', 'browser_error', `The Horizon robot failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
}

/** The service validated dicData at enqueue; this is the typed view (and a guard for direct callers). */
function parse<S extends z.ZodType>(schema: S, dicData: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(dicData);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.map(String).join('.') || 'dicData'}: ${i.message}`).join('; ');
  throw new RobotError('business', 'data_refused', `The data does not fit Horizon Direct: ${problems}`);
}

/** The package's entry: Courtier's loader calls it with the URL it serves the portal at. */
export default defineInsurer((host) => createHorizonAdapter({ portalUrl: () => host.sandboxUrl() }));
