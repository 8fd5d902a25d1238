import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { ARTIFACT_RETENTION_MS } from '../../shared/automation.js';
import { RobotError } from '@courtier/adapter-kit';
import { createJobSession, type JobBrowserSession } from './job-session.js';
import { createParkedSessions } from './parked-sessions.js';
import type { Reach } from './reach.js';

/** How to start a browser: a file to execute, or a Playwright channel (an installed Chrome or Edge). */
export type BrowserLaunchTarget = { executablePath: string } | { channel: 'chrome' | 'msedge' };

/**
 * Chromium's headless shell, as Debian packages it (chromium-headless-shell): the browser engine
 * without the browser's own window. A robot's job costs it less CPU than the full Chromium in
 * headless mode, which still draws its tab strip, toolbar and loading animations off screen
 * (BENCHMARKS.md, robots). It cannot show a window: headed robots never use it.
 */
const HEADLESS_SHELLS = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell'];
const FULL_BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/**
 * Where the robots' browser is, in order: COURTIER_BROWSER_PATH, the system's Chrome or Edge on
 * Windows and macOS, then Debian's headless shell (unless the robots are shown) and Debian's
 * /usr/bin/chromium. Never a downloaded browser.
 */
export function browserCandidates(options: {
  configuredPath?: string;
  platform: NodeJS.Platform;
  headed: boolean;
  exists: (path: string) => boolean;
}): BrowserLaunchTarget[] {
  const candidates: BrowserLaunchTarget[] = [];
  if (options.configuredPath) candidates.push({ executablePath: options.configuredPath });
  if (options.platform === 'win32' || options.platform === 'darwin') candidates.push({ channel: 'chrome' }, { channel: 'msedge' });
  const shell = options.headed ? undefined : HEADLESS_SHELLS.find((path) => options.exists(path));
  if (shell) candidates.push({ executablePath: shell });
  for (const path of FULL_BROWSERS) {
    if (options.exists(path)) candidates.push({ executablePath: path });
  }
  return candidates;
}

/** Flags for a headless browser on a machine without outside network. */
export const BROWSER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-sync',
];

export interface BrowserRuntime {
  /**
   * `secrets`: what the robot may type that must never be recorded (the portal password); a saved
   * trace is checked for them, and for those given later to knowSecrets. `login`: who the robot
   * logs in as (an opaque key that changes with the credentials); a success parks the context
   * under it, and the next job's browser context with the same key and reach resumes it. Without it, the context
   * is the job's alone. `reach`: what the context may load (others are aborted, and `onOutsideReach`
   * is told once per origin); without it, anything.
   */
  session(
    jobId: string,
    options: {
      secrets: readonly string[];
      login?: string;
      reach?: Reach;
      onOutsideReach?: (origin: string, stopped: boolean) => void;
    },
  ): JobBrowserSession;
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
  const candidates = browserCandidates({
    configuredPath: options.configuredPath,
    platform: options.platform ?? process.platform,
    headed: options.headed,
    exists: existsSync,
  });
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
    // Loaded with the first robot: playwright-core would otherwise be a large share of an idle
    // service's memory (BENCHMARKS.md, Idle memory).
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
    session: (jobId, sessionOptions) =>
      createJobSession({
        ...sessionOptions,
        newContext: async ({ serviceWorkers }) => {
          const shared = await browser();
          const context = await shared.newContext({ acceptDownloads: true, locale: 'fr-FR', timezoneId: 'Europe/Paris', serviceWorkers });
          contexts.add(context);
          return context;
        },
        closeContext,
        parked,
        artifactsDir: artifactsDir(jobId),
      }),
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
