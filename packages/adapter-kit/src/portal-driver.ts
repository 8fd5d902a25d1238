import type { Frame, Page } from 'playwright-core';
import { RobotError, type RobotContext } from './adapter.js';
import { expectPage, type PageExpectation } from './page-check.js';

/** How long a driver waits: for an element to act on (a field, a button, a heading), and for a page to load. */
export interface PortalTimeouts {
  actionMs: number;
  navigationMs: number;
}

/** What a driver needs of the robot's context. */
export type DriverContext = Pick<RobotContext, 'signal' | 'withSecrets' | 'pageChecked'>;

/** The error of a cancelled job. */
export function cancelled(): RobotError {
  return new RobotError('technical', 'cancelled', 'The job was cancelled.');
}

/** Playwright's TimeoutError, known by its name: the kit loads no code of Playwright's. */
export function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

/** An error's first line: Playwright's messages go on with a call log a person does not need. */
export function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0] ?? '';
}

/** Collapses whitespace (no-break spaces included) to single spaces. */
export function normaliseSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** "1 387,15 €" (any spaces, or "EUR") → 1387.15; null when the text is not an amount. */
export function parseEuros(text: string): number | null {
  const compact = text
    .replace(/[\s\u00a0\u202f]/g, '')
    .replace(/€$/, '')
    .replace(/EUR$/i, '');
  if (!/^\d+(,\d{1,2})?$/.test(compact)) return null;
  return Number(compact.replace(',', '.'));
}

/**
 * The base of an adapter's page driver: the page, the robot's context and the timeouts, with the
 * translation of browser failures into the RobotErrors Courtier reads:
 * - an element not found within the action timeout → technical `layout_changed`;
 * - a page that does not load, cannot be reached or answers 5xx → technical `insurer_unavailable`;
 * - the job cancelled → technical `cancelled`;
 * - a page that is not the one a step expects → technical `portal_changed` (expectPage).
 * Extend it with what the portal needs (its landing page, its outage page, its frames).
 */
export class PortalDriver<Timeouts extends PortalTimeouts = PortalTimeouts> {
  constructor(
    readonly page: Page,
    /** The robot's context: its signal, its withSecrets (every secret is typed inside it), a recording's pageChecked. */
    readonly ctx: DriverContext,
    readonly portal: {
      /** The portal's address; `goto` paths are relative to it. */
      baseUrl: string;
      /** How messages name it: "The Horizon portal". */
      name: string;
      timeouts: Timeouts;
    },
  ) {}

  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  get timeouts(): Timeouts {
    return this.portal.timeouts;
  }

  get baseUrl(): string {
    return this.portal.baseUrl;
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
    let onAbort = () => undefined as void;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(cancelled());
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, aborted]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }

  /** One action on an element found by role or label; `what` names it in errors ("the field \"Nom\""). */
  async act<T>(what: string, action: (options: { timeout: number; signal: AbortSignal }) => Promise<T>): Promise<T> {
    this.throwIfAborted();
    try {
      return await action({ timeout: this.timeouts.actionMs, signal: this.signal });
    } catch (err) {
      if (err instanceof RobotError) throw err;
      if (this.signal.aborted) throw cancelled();
      throw isTimeout(err)
        ? new RobotError(
            'technical',
            'layout_changed',
            `${this.portal.name} changed: ${what} was not found within ${this.timeouts.actionMs} ms.`,
          )
        : new RobotError('technical', 'browser_error', `${what}: ${firstLine(err)}`);
    }
  }

  /** What a failed load (`what`: "loading /devis", "after the button \"Continuer\"") is: unavailable, or cancelled. */
  navigationError(err: unknown, what: string): RobotError {
    if (err instanceof RobotError) return err;
    if (this.signal.aborted) return cancelled();
    return isTimeout(err)
      ? new RobotError(
          'technical',
          'insurer_unavailable',
          `${this.portal.name} did not answer within ${this.timeouts.navigationMs} ms (${what}).`,
        )
      : new RobotError('technical', 'insurer_unavailable', `${this.portal.name} could not be reached (${what}): ${firstLine(err)}`);
  }

  /** Loads a path of the portal in the window; a 5xx is the portal being down. */
  async goto(path: string, waitUntil: 'load' | 'domcontentloaded' = 'domcontentloaded'): Promise<void> {
    this.throwIfAborted();
    try {
      const response = await this.page.goto(`${this.baseUrl}${path}`, { waitUntil, timeout: this.timeouts.navigationMs });
      if (response && response.status() >= 500)
        throw new RobotError('technical', 'insurer_unavailable', `${this.portal.name} answered ${response.status()} on ${path}.`);
    } catch (err) {
      throw this.navigationError(err, `loading ${path}`);
    }
  }

  /** Checks that the page (or a frame of it) is the one the step expects: `portal_changed`, naming the step, otherwise. */
  expectPage(expected: PageExpectation, target: Page | Frame = this.page): Promise<void> {
    return expectPage(target, expected, { timeoutMs: this.timeouts.actionMs, ctx: this.ctx });
  }
}
