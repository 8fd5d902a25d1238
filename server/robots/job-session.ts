import { mkdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import type { createParkedSessions } from './parked-sessions.js';
import { allowListOf, guardContext, type AllowList, type ContextGuard, type Reach } from './reach.js';
import { holdsSecret, redactSecrets } from './secret-forms.js';
import { readZipEntries } from './zip-entries.js';

/** What covers a field holding a secret in a failure screenshot. */
export const MASK_COLOR = '#444444';

/** What each input and text area of a frame holds, in document order. */
function fieldValues(frame: Frame): Promise<string[]> {
  return frame.$$eval('input, textarea', (fields) => fields.map((field) => (field as { value?: string }).value ?? ''));
}

/** Whether any field of any page of the context holds a secret (unknown counts as yes). */
async function fieldsHoldSecret(context: BrowserContext, secrets: ReadonlySet<string>): Promise<boolean> {
  if (secrets.size === 0) return false;
  try {
    for (const page of context.pages()) {
      for (const frame of page.frames()) {
        if ((await fieldValues(frame)).some((value) => [...secrets].some((secret) => value.includes(secret)))) return true;
      }
    }
    return false;
  } catch {
    return true;
  }
}

/** The fields a screenshot must cover: every password field, and any field holding a secret. */
async function secretFields(page: Page, secrets: ReadonlySet<string>): Promise<Locator[]> {
  const fields: Locator[] = [page.locator('input[type=password]')];
  for (const frame of page.frames()) {
    const values = await fieldValues(frame);
    values.forEach((value, index) => {
      if ([...secrets].some((secret) => value.includes(secret))) fields.push(frame.locator('input, textarea').nth(index));
    });
  }
  return fields;
}

/** How a job's run ended, for its browser session. */
type SessionEnd = 'succeeded' | 'failed' | 'abandoned';

interface JobArtifacts {
  screenshot: string | null;
  trace: string | null;
  /** The trace was not kept: it held a secret (an adapter typed one outside withSecrets) or could not be checked. */
  traceDiscarded: boolean;
}

/**
 * One job's browser context: isolated cookies, traced, closed by finish(). Secrets never reach an
 * artifact: the trace is paused while a robot types one (withSecrets), it restarts only once no
 * field of the pages holds one, a saved trace is checked for every known secret (and dropped if
 * it holds any), and the failure screenshot masks password fields and any field holding a secret.
 */
export interface JobBrowserSession {
  /** A page of this job's context; the first is the login's parked page when there is one. */
  openPage(): Promise<Page>;
  /** Runs work, which types these secrets into the portal, with the trace paused; see RobotContext.withSecrets. */
  withSecrets<T>(secrets: readonly string[], work: () => Promise<T>): Promise<T>;
  /**
   * Ends the job's use of the context. After a failure, first saves the trace and a screenshot
   * beside the job, then closes it. After a success with a `login`, parks it (still logged in) for
   * that login's next job; otherwise (no login, stopped, cancelled) closes it.
   */
  finish(end: SessionEnd): Promise<JobArtifacts>;
  /** The text without any secret of this session (an error message, before it is stored or logged). */
  redact(text: string): string;
  /**
   * Credentials' secrets read after the session began (the password, read when the robot logs in):
   * from now on treated as those given to `session()`.
   */
  knowSecrets(secrets: readonly string[]): void;
  /** The origins outside its insurer's reach this job's browser asked for, each with how many requests. */
  outsideReach(): ReadonlyMap<string, number>;
}

/** What one job's session needs of the runtime that owns the browser. */
interface JobSessionOptions {
  /** See BrowserRuntime.session. */
  secrets: readonly string[];
  login?: string;
  /** What the job's browser may load; without it, anything (an insurer given in code by a test). */
  reach?: Reach;
  /** Told once per origin outside the reach the job's browser asked for; see ContextGuard for `stopped`. */
  onOutsideReach?: (origin: string, stopped: boolean) => void;
  /** A new context of the shared browser, registered with the runtime; service workers blocked when asked. */
  newContext(options: { serviceWorkers: 'allow' | 'block' }): Promise<BrowserContext>;
  closeContext(context: BrowserContext): Promise<void>;
  parked: ReturnType<typeof createParkedSessions>;
  /** Where a failure's screenshot and trace go. */
  artifactsDir: string;
}

/** One job's context, its trace and its artifacts (see JobBrowserSession). */
export function createJobSession(options: JobSessionOptions): JobBrowserSession {
  const { parked, closeContext, newContext, artifactsDir } = options;
  let context: BrowserContext | undefined;
  let lastPage: Page | undefined;
  let tracing = false;
  /** withSecrets calls in progress: the trace may restart only when the outermost ends. */
  let secretDepth = 0;
  // The credentials' secrets are looked for in a saved trace; codes typed later (one-time and
  // short, such as 6 digits, which any trace's numbers may contain) are only kept out of it.
  const credentialSecrets = new Set(options.secrets.filter((s) => s !== ''));
  const secrets = new Set(credentialSecrets);
  const outside = new Map<string, number>();
  const report = (origin: string, stopped: boolean) => {
    const count = outside.get(origin) ?? 0;
    outside.set(origin, count + 1);
    if (count === 0) options.onOutsideReach?.(origin, stopped);
  };
  let guard: ContextGuard | undefined;
  /** Read when the first page is asked for, not before: a sandbox portal's prefix needs the service's port. */
  let allowList: AllowList | undefined;

  /** Where a success is parked: the login, and the reach its context is filtered by. */
  function parkingKey(): string | undefined {
    if (options.login === undefined) return undefined;
    return JSON.stringify([options.login, allowList?.key ?? null]);
  }

  /**
   * A new context, its filter installed before any page: service workers are blocked with it, since
   * the requests a service worker answers never reach the filter.
   */
  async function freshContext(): Promise<BrowserContext> {
    const created = await newContext({ serviceWorkers: allowList ? 'block' : 'allow' });
    if (allowList) {
      guard = { allowList, report };
      try {
        await guardContext(created, guard);
      } catch (err) {
        await closeContext(created);
        throw err;
      }
    }
    return created;
  }

  async function startTracing(): Promise<void> {
    if (!context || tracing || (await fieldsHoldSecret(context, secrets))) return;
    // Every job is traced and most succeed, so the trace keeps what a failure needs at the
    // cost of little: the actions with their timing and errors, the network and the console.
    // DOM snapshots of every action (a large share of the service's CPU per job, and some of
    // Chromium's) and screencast frames are off; the failure screenshot shows the page as it ended.
    await context.tracing.start({ screenshots: false, snapshots: false });
    tracing = true;
  }

  async function stopTracing(path?: string): Promise<void> {
    if (!context || !tracing) return;
    tracing = false;
    await context.tracing.stop(path === undefined ? {} : { path });
  }

  /** Saves the trace, and keeps it only if none of the secrets is in it in any form. */
  async function saveTrace(dir: string): Promise<{ path: string | null; discarded: boolean }> {
    if (!tracing) return { path: null, discarded: false };
    const path = join(dir, 'trace.zip');
    try {
      await stopTracing(path);
    } catch {
      // A trace half written was never checked: it does not stay.
      rmSync(path, { force: true });
      return { path: null, discarded: false };
    }
    let clean = false;
    try {
      clean = !holdsSecret(
        (await readZipEntries(await readFile(path))).map((e) => e.data),
        credentialSecrets,
      );
    } catch {
      clean = false;
    }
    if (clean) return { path, discarded: false };
    rmSync(path, { force: true });
    return { path: null, discarded: true };
  }

  return {
    redact: (text) => redactSecrets(text, secrets),
    knowSecrets(values) {
      for (const value of values) {
        if (value === '') continue;
        credentialSecrets.add(value);
        secrets.add(value);
      }
    },
    outsideReach: () => outside,
    async openPage() {
      if (!context && options.reach) allowList = allowListOf(options.reach);
      const key = parkingKey();
      const resumed = context || key === undefined ? undefined : parked.resume(key);
      if (resumed) {
        context = resumed.context;
        lastPage = resumed.page;
        guard = resumed.guard;
        if (guard) guard.report = report;
        await startTracing();
        return lastPage;
      }
      if (!context) {
        context = await freshContext();
        await startTracing();
      }
      lastPage = await context.newPage();
      return lastPage;
    },
    async withSecrets(values, work) {
      for (const value of values) if (value !== '') secrets.add(value);
      secretDepth += 1;
      await stopTracing();
      try {
        return await work();
      } finally {
        secretDepth -= 1;
        // The trace resumes once no field holds a secret any more (the form was submitted);
        // until then the robot runs untraced rather than with a trace that would show one.
        if (secretDepth === 0) await startTracing().catch(() => undefined);
      }
    },
    async finish(end) {
      const artifacts: JobArtifacts = { screenshot: null, trace: null, traceDiscarded: false };
      if (!context) return artifacts;
      let keep = false;
      try {
        if (end === 'failed') {
          const dir = artifactsDir;
          mkdirSync(dir, { recursive: true });
          // The trace first, so that what the screenshot needs (finding fields to mask) is not in it.
          const trace = await saveTrace(dir);
          artifacts.trace = trace.path;
          artifacts.traceDiscarded = trace.discarded;
          const page = lastPage;
          if (page && !page.isClosed()) {
            const path = join(dir, 'screenshot.png');
            // Fields that cannot be read are all covered.
            const mask = await secretFields(page, secrets).catch(() => [page.locator('input, textarea')]);
            artifacts.screenshot = await page
              .screenshot({ path, fullPage: true, timeout: 5000, mask, maskColor: MASK_COLOR })
              .then(() => path)
              .catch(() => null);
          }
        } else {
          // A trace that would not stop leaves a context unfit for another job.
          const stopped = await stopTracing().then(
            () => true,
            () => false,
          );
          keep = stopped && end === 'succeeded';
        }
      } finally {
        // While parked, the context's requests are still filtered, but no job is told of them.
        if (guard) guard.report = undefined;
        const key = parkingKey();
        if (keep && key !== undefined) await parked.park(key, context, lastPage, guard);
        else await closeContext(context);
      }
      return artifacts;
    },
  };
}
