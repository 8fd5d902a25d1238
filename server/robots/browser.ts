import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { ARTIFACT_RETENTION_MS } from '../../shared/automation.js';
import { RobotError } from './adapter.js';
import { holdsSecret, redactSecrets } from './secret-forms.js';
import { createParkedSessions } from './parked-sessions.js';
import { readZipEntries } from './zip-entries.js';

/** How to start a browser: a file to execute, or a Playwright channel (an installed Chrome or Edge). */
type BrowserLaunchTarget = { executablePath: string } | { channel: 'chrome' | 'msedge' };

/**
 * Where the robots' browser is, in order: COURTIER_BROWSER_PATH, the system's Chrome or Edge on
 * Windows and macOS, then Debian's /usr/bin/chromium. Never a downloaded browser.
 */
function browserCandidates(options: { configuredPath?: string; platform: NodeJS.Platform; exists: (path: string) => boolean }): BrowserLaunchTarget[] {
  const candidates: BrowserLaunchTarget[] = [];
  if (options.configuredPath) candidates.push({ executablePath: options.configuredPath });
  if (options.platform === 'win32' || options.platform === 'darwin') candidates.push({ channel: 'chrome' }, { channel: 'msedge' });
  for (const path of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) {
    if (options.exists(path)) candidates.push({ executablePath: path });
  }
  return candidates;
}

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

/** Flags for a headless browser on a machine without outside network. */
export const BROWSER_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage', '--disable-sync'];

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
interface JobBrowserSession {
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
}

export interface BrowserRuntime {
  /**
   * `secrets`: what the robot may type that must never be recorded (the portal password); a saved
   * trace is checked for them, and for those given later to knowSecrets. `login`: who the robot
   * logs in as (an opaque key that changes with the credentials); a success parks the context
   * under it, and the next session with the same key resumes it. Without it, the context is the
   * job's alone.
   */
  session(jobId: string, options: { secrets: readonly string[]; login?: string }): JobBrowserSession;
  /** Closes the parked sessions idle for SESSION_IDLE_MS or more, by the injected clock; returns how many. */
  closeIdleSessions(): Promise<number>;
  /** Whether any browser is there to try (no launch): false means robots cannot run here. */
  hasCandidates(): boolean;
  /** Whether a browser can be started here (tries once, then remembers). */
  check(): Promise<{ ok: true; target: string } | { ok: false; reason: string }>;
  artifactsDir(jobId: string): string;
  /** Deletes one job's artifacts. */
  removeArtifacts(jobId: string): void;
  /**
   * Removes artifact folders older than the retention by their files' time, by the system clock
   * (what a crash left before it was recorded; recorded ones go by their job's end).
   */
  purgeArtifacts(): number;
  close(): Promise<void>;
}


function describe(target: BrowserLaunchTarget): string {
  return 'channel' in target ? `the installed ${target.channel === 'chrome' ? 'Chrome' : 'Edge'}` : target.executablePath;
}

/**
 * One browser process shared by all jobs, started on first use and started again if it dies;
 * one isolated context per job, kept for the same login's next job after a success
 * (`login`, parked-sessions.ts). Nothing is downloaded: a missing browser is a clear error
 * (browser_unavailable, technical: the job is refunded), never a crash.
 */
export function createBrowserRuntime(options: {
  dataDir: string;
  configuredPath?: string;
  headed: boolean;
  platform?: NodeJS.Platform;
  /** The clock parked sessions expire by (the service's). */
  now?: () => number;
}): BrowserRuntime {
  const candidates = browserCandidates({ configuredPath: options.configuredPath, platform: options.platform ?? process.platform, exists: existsSync });
  const now = options.now ?? Date.now;
  let launching: Promise<Browser> | undefined;
  let failure: string | undefined;
  const contexts = new Set<BrowserContext>();

  async function closeContext(context: BrowserContext): Promise<void> {
    contexts.delete(context);
    await context.close().catch(() => undefined);
  }
  const parked = createParkedSessions({ now, close: closeContext, isOpen: (context) => contexts.has(context) });

  async function launch(): Promise<Browser> {
    // Loaded with the first robot: playwright-core is ~90 MB of an idle service's memory otherwise.
    const { chromium } = await import('playwright-core');
    const errors: string[] = [];
    for (const target of candidates) {
      try {
        const browser = await chromium.launch({ ...target, headless: !options.headed, args: BROWSER_ARGS, timeout: 20_000 });
        browser.on('disconnected', () => {
          launching = undefined;
        });
        return browser;
      } catch (err) {
        errors.push(`${describe(target)}: ${(err as Error).message.split('\n')[0] ?? ''}`);
      }
    }
    throw new Error(
      candidates.length === 0
        ? 'No browser found. Install Google Chrome or Microsoft Edge, or Chromium (Debian: apt-get install chromium), or set COURTIER_BROWSER_PATH.'
        : `No browser could be started (${errors.join('; ')}). Set COURTIER_BROWSER_PATH to a Chrome, Edge or Chromium executable.`,
    );
  }

  function browser(): Promise<Browser> {
    if (!launching) {
      launching = launch().catch((err: unknown) => {
        launching = undefined;
        failure = (err as Error).message;
        throw new RobotError('technical', 'browser_unavailable', failure);
      });
    }
    return launching;
  }

  const artifactsDir = (jobId: string) => join(options.dataDir, 'artifacts', 'jobs', jobId);

  return {
    artifactsDir,
    removeArtifacts: (jobId) => rmSync(artifactsDir(jobId), { recursive: true, force: true }),
    hasCandidates: () => candidates.length > 0,
    session(jobId, sessionOptions) {
      let context: BrowserContext | undefined;
      let lastPage: Page | undefined;
      let tracing = false;
      /** withSecrets calls in progress: the trace may restart only when the outermost ends. */
      let secretDepth = 0;
      // The credentials' secrets are looked for in a saved trace; codes typed later (one-time and
      // short, such as 6 digits, which any trace's numbers may contain) are only kept out of it.
      const credentialSecrets = new Set(sessionOptions.secrets.filter((s) => s !== ''));
      const secrets = new Set(credentialSecrets);

      async function startTracing(): Promise<void> {
        if (!context || tracing || (await fieldsHoldSecret(context, secrets))) return;
        // Every job is traced and most succeed, so the trace keeps what a failure needs at the
        // cost of little: the actions with their timing and errors, the network and the console.
        // DOM snapshots of every action (a third of the service's CPU per job, 10% of Chromium's)
        // and screencast frames are off; the failure screenshot shows the page as it ended.
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
          clean = !holdsSecret((await readZipEntries(await readFile(path))).map((e) => e.data), credentialSecrets);
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
        async openPage() {
          const resumed = context || sessionOptions.login === undefined ? undefined : parked.resume(sessionOptions.login);
          if (resumed) {
            context = resumed.context;
            lastPage = resumed.page;
            await startTracing();
            return lastPage;
          }
          if (!context) {
            context = await (await browser()).newContext({ acceptDownloads: true, locale: 'fr-FR', timezoneId: 'Europe/Paris' });
            contexts.add(context);
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
              const dir = artifactsDir(jobId);
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
            if (keep && sessionOptions.login !== undefined) await parked.park(sessionOptions.login, context, lastPage);
            else await closeContext(context);
          }
          return artifacts;
        },
      };
    },
    async check() {
      try {
        await browser();
        return { ok: true, target: describe(candidates[0] as BrowserLaunchTarget) };
      } catch {
        return { ok: false, reason: failure ?? 'No browser could be started.' };
      }
    },
    purgeArtifacts() {
      const now = Date.now();
      const root = join(options.dataDir, 'artifacts', 'jobs');
      if (!existsSync(root)) return 0;
      let removed = 0;
      for (const name of readdirSync(root)) {
        const dir = join(root, name);
        if (now - statSync(dir).mtimeMs > ARTIFACT_RETENTION_MS) {
          rmSync(dir, { recursive: true, force: true });
          removed += 1;
        }
      }
      return removed;
    },
    closeIdleSessions: () => parked.closeIdle(),
    async close() {
      parked.clear();
      for (const context of contexts) await context.close().catch(() => undefined);
      contexts.clear();
      const running = launching;
      launching = undefined;
      if (running) await (await running.catch(() => undefined))?.close().catch(() => undefined);
    },
  };
}
