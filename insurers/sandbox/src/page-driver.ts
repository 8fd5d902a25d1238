import { expectPage, RobotError, type Locator, type Page, type PageExpectation, type RobotContext } from '@courtier/adapter-kit';

/**
 * The sandbox robot's page driver (the portal it drives is server/sandbox-portals/sandbox): what every page
 * object shares, the browser page, the timeouts, the abort signal, and the translation of browser
 * failures into RobotErrors:
 *
 * - a navigation that times out, cannot connect, or lands on a 5xx / "Service momentanément
 *   indisponible" page → technical `insurer_unavailable` (the portal is down: refunded, counts
 *   for the circuit breaker);
 * - a label, role or heading not found within the action timeout → technical `layout_changed`
 *   (the portal changed under the robot: refunded; someone must update the page objects);
 * - the job cancelled (ctx.signal) → technical `cancelled`.
 *
 * The portal's texts below are copied from what the portal shows, not imported from
 * server/sandbox-portals/sandbox: an adapter treats its portal as a foreign web site.
 */

export interface SandboxTimeouts {
  /** Per UI action (find a label, fill, click, read a value). */
  actionMs: number;
  /** Per page load (goto, or the page a form submission leads to). */
  navigationMs: number;
  /** From the click on a PDF link to the end of the download. */
  downloadMs: number;
}

export const DEFAULT_TIMEOUTS: SandboxTimeouts = { actionMs: 5_000, navigationMs: 15_000, downloadMs: 10_000 };

export const HEADINGS = {
  login: 'Espace courtier – Sandbox Assurances',
  mfa: 'Vérification en deux étapes',
  home: 'Accueil',
  unavailable: 'Service momentanément indisponible',
  autoDriver: 'Devis auto – Conducteur',
  autoVehicle: 'Devis auto – Véhicule',
  autoFormula: 'Devis auto – Formule',
  homeDwelling: 'Devis habitation – Logement',
  homeOccupation: 'Devis habitation – Occupation',
  result: 'Votre tarif',
  attestationForm: 'Demande d’attestation',
  attestation: 'Attestation d’assurance',
} as const;

/** Where a navigation landed: the page's <h1> and its role="alert" message, if any. */
export interface Landing {
  heading: string;
  alert: string | null;
}

export function cancelled(): RobotError {
  return new RobotError('technical', 'cancelled', 'The job was cancelled.');
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0] ?? '';
}

export class PortalSession {
  constructor(
    readonly page: Page,
    readonly baseUrl: string,
    /** The robot's context: its signal, its withSecrets (every secret is typed inside it), a recording's pageChecked. */
    readonly ctx: Pick<RobotContext, 'signal' | 'withSecrets' | 'pageChecked'>,
    readonly timeouts: SandboxTimeouts,
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

  /** Races a promise that Playwright cannot abort itself (ctx.requestMfa) against the signal. */
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
    if (kind === 'action') {
      return isTimeout(err)
        ? new RobotError(
            'technical',
            'layout_changed',
            `The sandbox portal changed: ${what} was not found within ${this.timeouts.actionMs} ms.`,
          )
        : new RobotError('technical', 'browser_error', `${what}: ${firstLine(err)}`);
    }
    return isTimeout(err)
      ? new RobotError(
          'technical',
          'insurer_unavailable',
          `The sandbox portal did not answer within ${this.timeouts.navigationMs} ms (${what}).`,
        )
      : new RobotError('technical', 'insurer_unavailable', `The sandbox portal could not be reached (${what}): ${firstLine(err)}`);
  }

  /** One UI action on an element found by role or label; `what` names it in errors. */
  async act<T>(what: string, action: (options: { timeout: number; signal: AbortSignal }) => Promise<T>): Promise<T> {
    this.throwIfAborted();
    try {
      return await action({ timeout: this.timeouts.actionMs, signal: this.signal });
    } catch (err) {
      throw this.translate(err, 'action', what);
    }
  }

  fill(label: string, value: string): Promise<void> {
    return this.act(`the field "${label}"`, (o) => this.page.getByLabel(label, { exact: true }).fill(value, o));
  }

  select(label: string, value: string): Promise<void> {
    return this.act(`the list "${label}"`, async (o) => void (await this.page.getByLabel(label, { exact: true }).selectOption(value, o)));
  }

  check(role: 'radio' | 'checkbox', name: string): Promise<void> {
    return this.act(`the ${role} "${name}"`, (o) => this.page.getByRole(role, { name, exact: true }).check(o));
  }

  /** Goes to a portal path (relative to the portal URL) and says where it landed. */
  async open(path: string): Promise<Landing> {
    this.throwIfAborted();
    const url = `${this.baseUrl}${path}`;
    try {
      const response = await this.page.goto(url, { waitUntil: 'domcontentloaded', timeout: this.timeouts.navigationMs });
      if (response && response.status() >= 500) {
        throw new RobotError('technical', 'insurer_unavailable', `The sandbox portal answered ${response.status()} on ${path}.`);
      }
    } catch (err) {
      throw this.translate(err, 'navigation', `loading ${path}`);
    }
    return this.landing();
  }

  /**
   * Clicks what leads to another page (a submit button, a link) and waits for that page: the
   * listener is set before the click, so a fast answer cannot be missed.
   */
  async navigate(what: string, target: Locator): Promise<Landing> {
    this.throwIfAborted();
    const loaded = this.page.waitForEvent('domcontentloaded', { timeout: this.timeouts.navigationMs, signal: this.signal });
    loaded.catch(() => undefined); // observed below; a failed click must not leave it unhandled
    await this.act(what, (o) => target.click(o));
    try {
      await loaded;
    } catch (err) {
      throw this.translate(err, 'navigation', `after ${what}`);
    }
    return this.landing();
  }

  /** The current page's <h1> and alert; the outage page is an error right away. */
  async landing(): Promise<Landing> {
    const heading = normalise(
      await this.act('the page heading (h1)', (o) => this.page.getByRole('heading', { level: 1 }).first().innerText(o)),
    );
    if (heading === HEADINGS.unavailable) {
      throw new RobotError('technical', 'insurer_unavailable', 'The sandbox portal says: Service momentanément indisponible.');
    }
    const alerts = this.page.getByRole('alert');
    const alert =
      (await this.act('the alert', () => alerts.count())) > 0
        ? normalise(await this.act('the alert', (o) => alerts.first().innerText(o)))
        : null;
    return { heading, alert };
  }

  /** The error for a page the robot did not expect at this point. */
  unexpected(landing: Landing, during: string): RobotError {
    if (landing.heading === HEADINGS.login && landing.alert?.includes('session a expiré')) {
      return new RobotError('technical', 'session_expired', `The portal session expired while ${during}: ${landing.alert}`);
    }
    return new RobotError(
      'technical',
      'layout_changed',
      `Unexpected page while ${during}: "${landing.heading}"${landing.alert ? ` with the message "${landing.alert}"` : ''}.`,
    );
  }

  /** Checks that the page is the one this step expects: portal_changed, naming the step, otherwise. */
  expect(expected: PageExpectation): Promise<void> {
    return expectPage(this.page, expected, { timeoutMs: this.timeouts.actionMs, ctx: this.ctx });
  }

  /**
   * After a form step's submission: the portal's refusal of the data (business), an expired
   * session, or else the next step's page, checked.
   */
  async expectAfterSubmit(landing: Landing, next: PageExpectation, stayedOn: string, during: string): Promise<void> {
    if (landing.heading === stayedOn && landing.alert) throw new RobotError('business', 'data_refused', landing.alert);
    if (landing.heading === HEADINGS.login && landing.alert?.includes('session a expiré')) throw this.unexpected(landing, during);
    await this.expect(next);
  }
}

/** Collapses whitespace (no-break spaces included) to single spaces. */
export function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** "1 387,15 €" (any spaces) → 1387.15; null when the text is not an amount. */
export function parseEuros(text: string): number | null {
  const compact = text
    .replace(/[\s\u00a0\u202f]/g, '')
    .replace(/€$/, '')
    .replace(/EUR$/i, '');
  if (!/^\d+(,\d{1,2})?$/.test(compact)) return null;
  return Number(compact.replace(',', '.'));
}

/**
 * Playwright's TimeoutError, known by its name: importing playwright-core's classes here would
 * load it with the service rather than with the first robot.
 */
function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}
