import { expectPage, RobotError, type Locator, type Page, type PageExpectation, type RobotContext } from '@courtier/adapter-kit';

/**
 * The Mutuelle Tradition robot's page driver (its portal is server/sandbox-portals/tradition): the
 * browser page and the extranet's main frame ("principal"), where the quote wizards run; the
 * timeouts, the abort signal, and browser failures translated into RobotErrors:
 * - a navigation that times out or cannot connect, a 5xx or the "Service indisponible" page →
 *   technical `insurer_unavailable`;
 * - an element not found within the action timeout → technical `layout_changed`;
 * - the job cancelled → technical `cancelled`.
 * The portal's texts are copied from what it shows: an adapter treats its portal as a foreign site.
 */

export interface TraditionTimeouts {
  actionMs: number;
  navigationMs: number;
  downloadMs: number;
}

export const DEFAULT_TIMEOUTS: TraditionTimeouts = { actionMs: 5_000, navigationMs: 15_000, downloadMs: 10_000 };

export const TEXTS = {
  login: 'Mutuelle Tradition - Extranet Partenaires',
  captcha: 'Contrôle de sécurité',
  home: 'Accueil partenaire',
  quote: 'Votre devis',
  invalid: 'Session invalide — veuillez recommencer',
  unavailable: 'Service indisponible',
  expired: 'Votre session a expiré',
} as const;

/** A frame of the page (Playwright's Frame, which the kit does not name). */
export type Frame = NonNullable<ReturnType<Page['frame']>>;
/** Where the robot acts: the top page (login, captcha) or the main frame (everything after). */
export type Scope = Page | Frame;

/** Where a navigation landed: the <h1> and the role="alert" text of the page, or of the main frame. */
export interface Landing {
  where: 'top' | 'frame';
  heading: string;
  alert: string | null;
}

const MAIN_FRAME = 'principal';

export function cancelled(): RobotError {
  return new RobotError('technical', 'cancelled', 'The job was cancelled.');
}

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0] ?? '';
/** Playwright's TimeoutError by its name: importing playwright-core here would load it with the service. */
const isTimeout = (err: unknown) => err instanceof Error && err.name === 'TimeoutError';

export function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** "1 234,50 €" → 1234.5; null when it is not an amount. */
export function parseEuros(text: string): number | null {
  const compact = text.replace(/[\s\u00a0\u202f]/g, '').replace(/€$/, '');
  return /^\d+(,\d{1,2})?$/.test(compact) ? Number(compact.replace(',', '.')) : null;
}

export class TraditionDriver {
  constructor(
    readonly page: Page,
    readonly baseUrl: string,
    /** The robot's context: its signal, its withSecrets (every secret is typed inside it), a recording's pageChecked. */
    readonly ctx: Pick<RobotContext, 'signal' | 'withSecrets' | 'pageChecked'>,
    readonly timeouts: TraditionTimeouts,
  ) {}

  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  withSecrets<T>(secrets: readonly string[], work: () => Promise<T>): Promise<T> {
    return this.ctx.withSecrets(secrets, work);
  }

  throwIfAborted(): void {
    if (this.signal.aborted) throw cancelled();
  }

  /** Races a promise Playwright cannot abort (a person's answer) against the job's signal. */
  async abortable<T>(work: Promise<T>): Promise<T> {
    this.throwIfAborted();
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(cancelled());
      this.signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          this.signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          this.signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  private translate(err: unknown, kind: 'action' | 'navigation', what: string): RobotError {
    if (err instanceof RobotError) return err;
    if (this.signal.aborted) return cancelled();
    if (kind === 'action')
      return isTimeout(err)
        ? new RobotError(
            'technical',
            'layout_changed',
            `The Tradition portal changed: ${what} was not found within ${this.timeouts.actionMs} ms.`,
          )
        : new RobotError('technical', 'browser_error', `${what}: ${firstLine(err)}`);
    return new RobotError('technical', 'insurer_unavailable', `The Tradition portal did not answer (${what}): ${firstLine(err)}`);
  }

  async act<T>(what: string, action: (options: { timeout: number }) => Promise<T>): Promise<T> {
    this.throwIfAborted();
    try {
      return await action({ timeout: this.timeouts.actionMs });
    } catch (err) {
      throw this.translate(err, 'action', what);
    }
  }

  /** The extranet's main frame, once the frameset shows. */
  mainFrame(): Frame {
    const frame = this.page.frame({ name: MAIN_FRAME });
    if (!frame) throw new RobotError('technical', 'layout_changed', 'The Tradition extranet has no main frame "principal".');
    return frame;
  }

  fill(scope: Scope, label: string, value: string): Promise<void> {
    return this.act(`the field "${label}"`, (o) => scope.getByLabel(label, { exact: true }).fill(value, o));
  }

  select(scope: Scope, label: string, value: string): Promise<void> {
    return this.act(`the list "${label}"`, async (o) => void (await scope.getByLabel(label, { exact: true }).selectOption(value, o)));
  }

  check(scope: Scope, name: string): Promise<void> {
    return this.act(`the radio "${name}"`, (o) => scope.getByRole('radio', { name, exact: true }).check(o));
  }

  /** Loads a portal path in the whole window (the frameset and its frames included). */
  async open(path: string): Promise<Landing> {
    this.throwIfAborted();
    try {
      const response = await this.page.goto(`${this.baseUrl}${path}`, { waitUntil: 'load', timeout: this.timeouts.navigationMs });
      if (response && response.status() >= 500)
        throw new RobotError('technical', 'insurer_unavailable', `The Tradition portal answered ${response.status()} on ${path}.`);
    } catch (err) {
      throw this.translate(err, 'navigation', `loading ${path}`);
    }
    return this.landing();
  }

  /** Clicks what makes the window, or the main frame, show another page, and waits for it to load. */
  async navigate(what: string, target: Locator, where: 'top' | 'frame'): Promise<Landing> {
    this.throwIfAborted();
    const frame = where === 'frame' ? this.mainFrame() : this.page.mainFrame();
    const navigated = this.page.waitForEvent('framenavigated', { predicate: (f) => f === frame, timeout: this.timeouts.navigationMs });
    navigated.catch(() => undefined); // observed below; a failed click must not leave it unhandled
    await this.act(what, (o) => target.click(o));
    try {
      await navigated;
      await frame.waitForLoadState('load', { timeout: this.timeouts.navigationMs });
    } catch (err) {
      throw this.translate(err, 'navigation', `after ${what}`);
    }
    return this.landing();
  }

  /** The page's heading and alert: the main frame's once the frameset shows, else the window's. */
  async landing(): Promise<Landing> {
    const framed = this.page.frame({ name: MAIN_FRAME }) !== null;
    const scope: Scope = framed ? this.mainFrame() : this.page;
    const heading = normalise(
      await this.act('the page heading (h1)', (o) => scope.getByRole('heading', { level: 1 }).first().innerText(o)),
    );
    if (heading === TEXTS.unavailable)
      throw new RobotError('technical', 'insurer_unavailable', 'The Tradition portal says: Service indisponible.');
    const alerts = scope.getByRole('alert');
    const alert =
      (await this.act('the alert', () => alerts.count())) > 0
        ? normalise(await this.act('the alert', (o) => alerts.first().innerText(o)))
        : null;
    return { where: framed ? 'frame' : 'top', heading, alert };
  }

  /** The error for a page the robot did not expect at this point. */
  unexpected(landing: Landing, during: string): RobotError {
    if (landing.heading === TEXTS.login && landing.alert?.includes(TEXTS.expired))
      return new RobotError('technical', 'session_expired', `The Tradition portal's session expired while ${during}.`);
    if (landing.heading === TEXTS.invalid)
      return new RobotError('technical', 'view_state_refused', `The Tradition portal refused a form while ${during}: ${TEXTS.invalid}.`);
    return new RobotError(
      'technical',
      'layout_changed',
      `Unexpected page while ${during}: "${landing.heading}"${landing.alert ? ` with the message "${landing.alert}"` : ''}.`,
    );
  }

  /** Checks that the window, or the main frame, shows the page this step expects: portal_changed otherwise. */
  expect(expected: PageExpectation, where: 'top' | 'frame'): Promise<void> {
    const target = where === 'top' ? this.page : this.mainFrame();
    return expectPage(target, expected, { timeoutMs: this.timeouts.actionMs, ctx: this.ctx });
  }
}
