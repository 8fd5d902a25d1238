import {
  normaliseSpaces,
  PortalDriver,
  RobotError,
  type DriverContext,
  type Locator,
  type Page,
  type PageExpectation,
} from '@courtier/adapter-kit';

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

export class TraditionDriver extends PortalDriver<TraditionTimeouts> {
  constructor(page: Page, baseUrl: string, ctx: DriverContext, timeouts: TraditionTimeouts) {
    super(page, ctx, { baseUrl, name: 'The Tradition portal', timeouts });
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
    await this.goto(path, 'load');
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
      throw this.navigationError(err, `after ${what}`);
    }
    return this.landing();
  }

  /** The page's heading and alert: the main frame's once the frameset shows, else the window's. */
  async landing(): Promise<Landing> {
    const framed = this.page.frame({ name: MAIN_FRAME }) !== null;
    const scope: Scope = framed ? this.mainFrame() : this.page;
    const heading = normaliseSpaces(
      await this.act('the page heading (h1)', (o) => scope.getByRole('heading', { level: 1 }).first().innerText(o)),
    );
    if (heading === TEXTS.unavailable)
      throw new RobotError('technical', 'insurer_unavailable', 'The Tradition portal says: Service indisponible.');
    const alerts = scope.getByRole('alert');
    const alert =
      (await this.act('the alert', () => alerts.count())) > 0
        ? normaliseSpaces(await this.act('the alert', (o) => alerts.first().innerText(o)))
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
    return this.expectPage(expected, where === 'top' ? this.page : this.mainFrame());
  }
}
