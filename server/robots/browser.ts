import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { RobotError } from './adapter.js';

/** How to start a browser: a file to execute, or a Playwright channel (an installed Chrome or Edge). */
export type BrowserLaunchTarget = { executablePath: string } | { channel: 'chrome' | 'msedge' };

/**
 * Where the robots' browser is, in order: COURTIER_BROWSER_PATH, the system's Chrome or Edge on
 * Windows and macOS, then Debian's /usr/bin/chromium. Never a downloaded browser.
 */
export function browserCandidates(options: { configuredPath?: string; platform: NodeJS.Platform; exists: (path: string) => boolean }): BrowserLaunchTarget[] {
  const candidates: BrowserLaunchTarget[] = [];
  if (options.configuredPath) candidates.push({ executablePath: options.configuredPath });
  if (options.platform === 'win32' || options.platform === 'darwin') candidates.push({ channel: 'chrome' }, { channel: 'msedge' });
  for (const path of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) {
    if (options.exists(path)) candidates.push({ executablePath: path });
  }
  return candidates;
}

/** Flags for a headless browser on a machine without outside network. */
export const BROWSER_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage', '--disable-sync'];

export interface JobArtifacts {
  screenshot: string | null;
  trace: string | null;
}

/** One job's browser context: isolated cookies, traced, closed by finish(). */
export interface JobBrowserSession {
  openPage(): Promise<Page>;
  /** Closes the context; after a failure, first saves a screenshot and the trace beside the job. */
  finish(failed: boolean): Promise<JobArtifacts>;
}

export interface BrowserRuntime {
  session(jobId: string): JobBrowserSession;
  /** Whether any browser is there to try (no launch): false means robots cannot run here. */
  hasCandidates(): boolean;
  /** Whether a browser can be started here (tries once, then remembers). */
  check(): Promise<{ ok: true; target: string } | { ok: false; reason: string }>;
  artifactsDir(jobId: string): string;
  /** Removes artifacts older than the retention. */
  purgeArtifacts(now: number): number;
  close(): Promise<void>;
}

export const ARTIFACT_RETENTION_MS = 7 * 24 * 3600 * 1000;

function describe(target: BrowserLaunchTarget): string {
  return 'channel' in target ? `the installed ${target.channel === 'chrome' ? 'Chrome' : 'Edge'}` : target.executablePath;
}

/**
 * One browser process shared by all jobs, started on first use and started again if it dies;
 * one isolated context per job. Nothing is downloaded: a missing browser is a clear error
 * (browser_unavailable, technical: the job is refunded), never a crash.
 */
export function createBrowserRuntime(options: { dataDir: string; configuredPath?: string; headed: boolean; platform?: NodeJS.Platform }): BrowserRuntime {
  const candidates = browserCandidates({ configuredPath: options.configuredPath, platform: options.platform ?? process.platform, exists: existsSync });
  let launching: Promise<Browser> | undefined;
  let failure: string | undefined;
  const contexts = new Set<BrowserContext>();

  async function launch(): Promise<Browser> {
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
    hasCandidates: () => candidates.length > 0,
    session(jobId) {
      let context: BrowserContext | undefined;
      let lastPage: Page | undefined;
      return {
        async openPage() {
          if (!context) {
            context = await (await browser()).newContext({ acceptDownloads: true, locale: 'fr-FR', timezoneId: 'Europe/Paris' });
            contexts.add(context);
            // DOM snapshots show each step in the trace viewer; the failure screenshot is taken
            // separately, so per-action screencast frames (costly in CPU and memory) are off.
            await context.tracing.start({ screenshots: false, snapshots: true });
          }
          lastPage = await context.newPage();
          return lastPage;
        },
        async finish(failed) {
          const artifacts: JobArtifacts = { screenshot: null, trace: null };
          if (!context) return artifacts;
          try {
            if (failed) {
              const dir = artifactsDir(jobId);
              mkdirSync(dir, { recursive: true });
              if (lastPage && !lastPage.isClosed()) {
                artifacts.screenshot = join(dir, 'screenshot.png');
                await lastPage.screenshot({ path: artifacts.screenshot, fullPage: true, timeout: 5000 }).catch(() => (artifacts.screenshot = null));
              }
              artifacts.trace = join(dir, 'trace.zip');
              await context.tracing.stop({ path: artifacts.trace }).catch(() => (artifacts.trace = null));
            } else {
              await context.tracing.stop().catch(() => undefined);
            }
          } finally {
            contexts.delete(context);
            await context.close().catch(() => undefined);
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
    purgeArtifacts(now) {
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
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      contexts.clear();
      const running = launching;
      launching = undefined;
      if (running) await (await running.catch(() => undefined))?.close().catch(() => undefined);
    },
  };
}
