import {
  cancelled,
  defineInsurer,
  type InsurerAdapter,
  type RobotContext,
  RobotError,
  type RobotResult,
  type z,
} from '@courtier/adapter-kit';
import { DEFAULT_TIMEOUTS, TEXTS, TraditionDriver, type Landing, type TraditionTimeouts } from './driver.js';
import { PAGES } from './pages/expectations.js';
import { LoginPage } from './pages/login.js';
import { QuotePage } from './pages/quote.js';
import { MENU_LINKS, WIZARDS, type WizardStep } from './pages/wizard.js';
import { TRADITION_PRODUCTS, type TraditionProductCode } from './products.js';
import { TRADITION_RISKS } from './risks.js';

export interface TraditionAdapterOptions {
  /** The portal's base URL, prefix included (http://127.0.0.1:8787/sandbox/tradition). Read at each run. */
  portalUrl: () => string;
  timeouts?: Partial<TraditionTimeouts>;
  /** Waiting for the quote's PDF: how many refreshes of its page at most (5), and the pause before each (250 ms). */
  pdf?: { maxRefreshes?: number; intervalMs?: number };
}

/** The portal expires idle sessions after 3 minutes; a job that meets that more often than this gives up. */
const MAX_RESUMES = 3;

const isExpired = (landing: Landing) => landing.heading === TEXTS.login && (landing.alert?.includes(TEXTS.expired) ?? false);

/**
 * The robot of "Mutuelle Tradition", a legacy framed extranet Courtier serves under
 * /sandbox/tradition/ while its sandbox is on: it logs in (answering a captcha through a person
 * when the portal shows one), runs the quote wizard inside the main frame, posting each form the
 * page gave (a one-use view state), logs in again and resumes its draft when the portal's session
 * expired, and refreshes the quote until its PDF is prepared.
 */
export function createTraditionAdapter(options: TraditionAdapterOptions): InsurerAdapter {
  const timeouts: TraditionTimeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const pdfWait = { maxRefreshes: options.pdf?.maxRefreshes ?? 5, intervalMs: options.pdf?.intervalMs ?? 250 };

  async function openDriver(ctx: RobotContext): Promise<TraditionDriver> {
    const page = await ctx.openPage();
    page.setDefaultTimeout(timeouts.actionMs);
    page.setDefaultNavigationTimeout(timeouts.navigationMs);
    return new TraditionDriver(page, options.portalUrl().replace(/\/+$/, ''), ctx, timeouts);
  }

  /** Into the extranet's frameset: a page still logged in from the login's last job goes straight there. */
  async function enter(ctx: RobotContext, driver: TraditionDriver): Promise<void> {
    ctx.progress('opening the extranet', 5);
    // The portal's root sends a logged-in browser to the frameset, anyone else to the login form.
    const landing = await driver.open('/');
    if (landing.where === 'top') {
      if (landing.heading !== TEXTS.login) throw driver.unexpected(landing, 'opening the extranet');
      ctx.progress('logging in', 10);
      await new LoginPage(driver, ctx).logIn(ctx.credentials());
    }
    await driver.expect(PAGES.home, 'frame');
  }

  /** After the portal's session expired: logs in again and reopens the draft where the portal kept it. */
  async function resume(ctx: RobotContext, driver: TraditionDriver, draft: string): Promise<void> {
    ctx.progress('session expired: logging in again', 20);
    await driver.open('/login');
    await new LoginPage(driver, ctx).logIn(ctx.credentials());
    await driver.expect(PAGES.home, 'frame');
    const frame = driver.mainFrame();
    const link = frame.getByRole('link', { name: `Reprendre le devis n°${draft}`, exact: true });
    // A draft priced already is no longer offered on the home page: its address opens it.
    if ((await driver.act('the resume link', () => link.count())) > 0) await driver.navigate('the resume link', link, 'frame');
    else await driver.act('reopening the quote', (o) => frame.goto(`${driver.baseUrl}/devis/${draft}`, { ...o, waitUntil: 'load' }));
  }

  /** Runs the product's wizard from its first step to the quote; returns the draft's number. */
  async function fillWizard<D>(ctx: RobotContext, driver: TraditionDriver, steps: readonly WizardStep<D>[], data: D): Promise<string> {
    let draft = '';
    let resumes = 0;
    for (let index = 0; index < steps.length;) {
      const step = steps[index]!;
      ctx.progress(step.page.step, 30 + index * 15);
      await driver.expect(step.page, 'frame');
      const frame = driver.mainFrame();
      draft = /\/devis\/(T\d{8})$/.exec(new URL(frame.url()).pathname)?.[1] ?? draft;
      await step.fill(driver, frame, data);
      const last = index === steps.length - 1;
      if (last) {
        driver.throwIfAborted();
        // From the click on, the insurer may have priced: a crash must not make the worker run it again.
        ctx.markSubmitted();
        ctx.progress('pricing', 75);
      }
      const button = last ? 'Tarifer' : 'Suivant >>';
      const landing = await driver.navigate(`the button "${button}"`, frame.getByRole('button', { name: button, exact: true }), 'frame');
      if (isExpired(landing)) {
        if (++resumes > MAX_RESUMES)
          throw new RobotError('technical', 'session_expired', 'The Tradition portal kept expiring the session.');
        await resume(ctx, driver, draft);
        continue; // the same step again: the portal did not take the expired post
      }
      if (landing.heading === step.page.landmarks[0]?.name && landing.alert)
        throw new RobotError('business', 'data_refused', landing.alert);
      if (landing.heading === TEXTS.invalid) throw driver.unexpected(landing, `submitting the step ${step.page.step}`);
      index += 1;
    }
    return draft;
  }

  async function readQuote(ctx: RobotContext, driver: TraditionDriver, draft: string): Promise<RobotResult> {
    ctx.progress('reading the quote', 80);
    const quote = new QuotePage(driver);
    const premium = await quote.premium();
    ctx.progress('waiting for the PDF', 85);
    let ready = false;
    for (let resumes = 0; ; resumes++) {
      try {
        ready = await quote.waitForPdf(pdfWait.maxRefreshes, pdfWait.intervalMs);
        break;
      } catch (err) {
        if (!(err instanceof RobotError && err.code === 'session_expired') || resumes >= MAX_RESUMES) throw err;
        await resume(ctx, driver, draft);
      }
    }
    if (!ready) return { tarif_eur: premium, outcome: 'partial' };
    ctx.progress('downloading the PDF', 92);
    const pdf = await quote.downloadPdf();
    return pdf ? { tarif_eur: premium, pdf, outcome: 'complete' } : { tarif_eur: premium, outcome: 'partial' };
  }

  async function price<D>(ctx: RobotContext, driver: TraditionDriver, code: TraditionProductCode, data: D): Promise<RobotResult> {
    ctx.progress(`opening the ${code} quote`, 25);
    const menu = driver.page.frame({ name: 'menu' });
    if (!menu) throw new RobotError('technical', 'layout_changed', 'The Tradition extranet has no menu frame.');
    await driver.navigate(`the menu link "${MENU_LINKS[code]}"`, menu.getByRole('link', { name: MENU_LINKS[code], exact: true }), 'frame');
    const draft = await fillWizard(ctx, driver, WIZARDS[code] as readonly WizardStep<D>[], data);
    return readQuote(ctx, driver, draft);
  }

  return {
    products: TRADITION_PRODUCTS,
    risks: TRADITION_RISKS,
    async run(ctx, input) {
      const product = TRADITION_PRODUCTS.find((p) => p.code === input.produit);
      if (!product) throw new RobotError('business', 'unknown_product', `Mutuelle Tradition has no product ${input.produit}.`);
      const data = parse(product.schema, input.dicData);
      if (ctx.signal.aborted) throw cancelled();
      const driver = await openDriver(ctx);
      try {
        await enter(ctx, driver);
        return await price(ctx, driver, product.code, data);
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
    async verifyLogin(ctx) {
      if (ctx.signal.aborted) throw cancelled();
      const driver = await openDriver(ctx);
      try {
        const landing = await driver.open('/login');
        if (landing.heading !== TEXTS.login) throw driver.unexpected(landing, 'opening the login page');
        // Stops at the captcha if there is one: the password was accepted, nothing is asked of a person.
        const after = await new LoginPage(driver, ctx).submitPassword(ctx.credentials());
        return { mfa: after.heading === TEXTS.captcha };
      } catch (err) {
        throw asRobotError(ctx, err);
      }
    },
  };
}

function asRobotError(ctx: RobotContext, err: unknown): RobotError {
  if (ctx.signal.aborted) return cancelled();
  if (err instanceof RobotError) return err;
  return new RobotError(
    'technical',
    'browser_error',
    `The Tradition robot failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`,
  );
}

/** The service validated dicData at enqueue; this is the typed view (and a guard for direct callers). */
function parse<S extends z.ZodType>(schema: S, dicData: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(dicData);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.map(String).join('.') || 'dicData'}: ${i.message}`).join('; ');
  throw new RobotError('business', 'data_refused', `The data does not fit Mutuelle Tradition: ${problems}`);
}

/** The package's entry: Courtier's loader calls it with the URL it serves the portal at. */
export default defineInsurer((host) => createTraditionAdapter({ portalUrl: () => host.sandboxUrl() }));
