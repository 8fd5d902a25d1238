import {
  type DriverContext,
  type Locator,
  normaliseSpaces,
  type Page,
  type PageExpectation,
  PortalDriver,
  RobotError,
} from '@courtier/adapter-kit';

/**
 * The sandbox robot's page driver (the portal it drives is server/sandbox-portals/sandbox): what every page
 * object shares, on the kit's PortalDriver (the page, the timeouts, the job's signal, and browser
 * failures translated into RobotErrors):
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

export class PortalSession extends PortalDriver<SandboxTimeouts> {
  constructor(page: Page, baseUrl: string, ctx: DriverContext, timeouts: SandboxTimeouts) {
    super(page, ctx, { baseUrl, name: 'The sandbox portal', timeouts });
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
    await this.goto(path);
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
      throw this.navigationError(err, `after ${what}`);
    }
    return this.landing();
  }

  /** The current page's <h1> and alert; the outage page is an error right away. */
  async landing(): Promise<Landing> {
    const heading = normaliseSpaces(
      await this.act('the page heading (h1)', (o) => this.page.getByRole('heading', { level: 1 }).first().innerText(o)),
    );
    if (heading === HEADINGS.unavailable) {
      throw new RobotError('technical', 'insurer_unavailable', 'The sandbox portal says: Service momentanément indisponible.');
    }
    const alerts = this.page.getByRole('alert');
    const alert =
      (await this.act('the alert', () => alerts.count())) > 0
        ? normaliseSpaces(await this.act('the alert', (o) => alerts.first().innerText(o)))
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

  /**
   * After a form step's submission: the portal's refusal of the data (business), an expired
   * session, or else the next step's page, checked.
   */
  async expectAfterSubmit(landing: Landing, next: PageExpectation, stayedOn: string, during: string): Promise<void> {
    if (landing.heading === stayedOn && landing.alert) throw new RobotError('business', 'data_refused', landing.alert);
    if (landing.heading === HEADINGS.login && landing.alert?.includes('session a expiré')) throw this.unexpected(landing, during);
    await this.expectPage(next);
  }
}
