import { cancelled, firstLine, PortalDriver, RobotError, type DriverContext, type Page } from '@courtier/adapter-kit';

/**
 * The Horizon robot's driver for a single-page app: the portal loads once, then draws each screen
 * from its JSON API and changes the address with history.pushState, so no page load tells the robot
 * that a screen is ready. It waits instead on what the app does: the API response a click causes
 * (listened for before the click), then the screen the app draws from it (expectPage waits for its
 * landmarks). Failures become RobotErrors:
 *
 * - a load that times out or cannot connect, a 5xx answer or the maintenance screen → technical
 *   `insurer_unavailable`;
 * - a field or button not found within the action timeout → technical `layout_changed`;
 * - an API answer whose shape the robot does not know → technical `portal_changed`, naming the step;
 * - the job cancelled → technical `cancelled`.
 *
 * The texts below are copied from what the portal shows: an adapter treats its portal as a foreign
 * web site.
 */

export interface HorizonTimeouts {
  /** Per UI action (find a field, fill, click), and per API answer a click causes. */
  actionMs: number;
  /** Per page load (the app's shell). */
  navigationMs: number;
  /** From the click on a document's link to the end of its download. */
  downloadMs: number;
}

export const DEFAULT_TIMEOUTS: HorizonTimeouts = { actionMs: 5_000, navigationMs: 15_000, downloadMs: 10_000 };

const OUTAGE_HEADING = 'Horizon Direct est en maintenance';

/** An API answer the app received. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

export class SpaSession extends PortalDriver<HorizonTimeouts> {
  /** The portal's path prefix (/sandbox/horizon), which its API calls start with. */
  readonly basePath: string;

  constructor(page: Page, baseUrl: string, ctx: DriverContext, timeouts: HorizonTimeouts) {
    super(page, ctx, { baseUrl, name: 'The Horizon portal', timeouts });
    this.basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  }

  fill(label: string, value: string): Promise<void> {
    return this.act(`the field "${label}"`, (o) => this.page.getByLabel(label, { exact: true }).fill(value, o));
  }

  select(label: string, value: string): Promise<void> {
    return this.act(`the list "${label}"`, async (o) => void (await this.page.getByLabel(label, { exact: true }).selectOption(value, o)));
  }

  setChecked(label: string, checked: boolean): Promise<void> {
    return this.act(`the box "${label}"`, (o) => this.page.getByLabel(label, { exact: true }).setChecked(checked, o));
  }

  /** Loads the app at one of its addresses and returns the heading of the first screen it draws. */
  async open(path: string): Promise<string> {
    await this.goto(path);
    return this.heading();
  }

  /** The heading of the screen the app shows (it draws one once its first API call is answered). */
  async heading(): Promise<string> {
    const text = await this.act('the screen heading (h1)', (o) => this.page.getByRole('heading', { level: 1 }).first().innerText(o));
    const heading = text.replace(/\s+/g, ' ').trim();
    if (heading === OUTAGE_HEADING) throw new RobotError('technical', 'insurer_unavailable', `The Horizon portal says: ${OUTAGE_HEADING}.`);
    return heading;
  }

  /**
   * Clicks a button and returns the API answer the app got for it (`method` on a path matching
   * `path`, below the portal's /api/). A 5xx is the portal being down.
   */
  async call(what: string, request: { method: string; path: RegExp }, click: () => Promise<void>): Promise<ApiAnswer> {
    const answered = this.answerTo(request);
    await click();
    return this.awaitAnswer(what, answered);
  }

  /** Starts listening for the next API answer of this kind (before the click that causes it). */
  answerTo(request: { method: string; path: RegExp }): Promise<ApiAnswer> {
    const api = `${this.basePath}/api`;
    const answered = this.page
      .waitForResponse(
        (response) => {
          const url = new URL(response.url());
          return (
            response.request().method() === request.method &&
            url.pathname.startsWith(api) &&
            request.path.test(url.pathname.slice(api.length))
          );
        },
        { timeout: this.timeouts.actionMs },
      )
      .then(async (response) => ({ status: response.status(), body: (await response.json().catch(() => null)) as unknown }));
    answered.catch(() => undefined); // observed by awaitAnswer; a failed click must not leave it unhandled
    return answered;
  }

  async awaitAnswer(what: string, answered: Promise<ApiAnswer>): Promise<ApiAnswer> {
    let answer: ApiAnswer;
    try {
      answer = await answered;
    } catch (err) {
      if (this.signal.aborted) throw cancelled();
      throw new RobotError(
        'technical',
        'insurer_unavailable',
        `The Horizon portal did not answer ${what} within ${this.timeouts.actionMs} ms: ${firstLine(err)}`,
      );
    }
    if (answer.status >= 500)
      throw new RobotError('technical', 'insurer_unavailable', `The Horizon portal answered ${answer.status} to ${what}.`);
    return answer;
  }
}

/** An API answer whose shape changed: the step that met it, and what did not fit. */
export function apiChanged(step: string, path: string, problems: readonly string[]): RobotError {
  return new RobotError(
    'technical',
    'portal_changed',
    `The insurer's portal changed at the step "${step}": its API answered ${problems.slice(0, 3).join(', ')}.`,
    {
      step,
      expected: { path: null, landmarks: [] },
      found: { path, landmarks: [] },
      missing: [...problems],
    },
  );
}
