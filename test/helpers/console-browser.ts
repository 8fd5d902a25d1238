import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { packageRoot } from '../../server/paths.js';
import { collectProblems, type ConsoleTabs } from './console.js';
import { launchChromium } from './oauth.js';
import { startTestServer, type StartOptions, type TestServer } from './server.js';

const BUILT = join(packageRoot(), 'dist', 'renderer');
const DESKTOP = { width: 1280, height: 800 };

export interface ConsoleBrowserOptions {
  /** The app's options, or a function that gives them in beforeAll (after starting what they need). */
  server?: StartOptions | (() => StartOptions | Promise<StartOptions>);
  /** Console lines that are expected answers rather than problems, on every tab of the file. */
  expected?: (text: string) => boolean;
  /** How long a step of a tab may wait (15 s unless told). */
  timeout?: number;
  /** Whether the tabs are closed after each test (the default) or kept open to the end of the file. */
  closeTabs?: 'afterEach' | 'afterAll';
}

/** What useConsoleBrowser gives a test file; browser and server once its beforeAll has run. */
export interface ConsoleBrowser {
  readonly browser: Browser;
  readonly server: TestServer;
  /** The file's tabs, for signedIn(): their contexts, problems, expected lines and timeout. */
  readonly tabs: ConsoleTabs;
  /** Every script error, console error and CSP refusal of the tabs, emptied before each test. */
  readonly problems: string[];
  /** A tab in a fresh browser context (1280×800 unless told), watched from its first load. */
  newPage(options?: { locale?: string; viewport?: { width: number; height: number }; permissions?: string[] }): Promise<Page>;
  /** Keeps a tab opened elsewhere (openConsole) with the others: closed with them, its problems collected. */
  watch(page: Page, expected?: (text: string) => boolean): Page;
}

/**
 * The browser setup of a console test file: checks the console is built, starts the app and
 * Chromium before the tests and closes them after; every tab opened through it is closed after
 * each test (or after the file), and each test fails on any script error, console error or CSP
 * refusal of its tabs, except the console lines `expected` accepts.
 */
export function useConsoleBrowser(options: ConsoleBrowserOptions = {}): ConsoleBrowser {
  let browser: Browser | undefined;
  let server: TestServer | undefined;
  const tabs: ConsoleTabs = { contexts: [], problems: [], expected: options.expected, timeout: options.timeout };
  const closeTabs = () => Promise.all(tabs.contexts.splice(0).map((context) => context.close()));

  beforeAll(async () => {
    if (!existsSync(join(BUILT, 'index.html'))) throw new Error(`${BUILT}/index.html is missing: run npm run build first`);
    mkdirSync('test-artifacts/screenshots', { recursive: true });
    server = await startTestServer(typeof options.server === 'function' ? await options.server() : options.server);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await closeTabs();
    await browser?.close();
    await server?.close();
  });
  beforeEach(() => {
    tabs.problems.length = 0;
  });
  afterEach(async () => {
    if (options.closeTabs !== 'afterAll') await closeTabs();
    // No script error, no console error, no CSP refusal on any tab of the test.
    expect(tabs.problems).toEqual([]);
  });

  const fixture: ConsoleBrowser = {
    get browser() {
      if (!browser) throw new Error('Chromium is launched in beforeAll');
      return browser;
    },
    get server() {
      if (!server) throw new Error('the app is started in beforeAll');
      return server;
    },
    tabs,
    problems: tabs.problems,
    async newPage({ locale = 'en-GB', viewport = DESKTOP, permissions } = {}) {
      const context = await fixture.browser.newContext({ locale, viewport });
      if (permissions) await context.grantPermissions(permissions, { origin: fixture.server.url });
      return fixture.watch(await context.newPage());
    },
    watch(page, expected = tabs.expected) {
      tabs.contexts.push(page.context());
      page.setDefaultTimeout(tabs.timeout ?? 15_000);
      collectProblems(page, tabs.problems, expected);
      return page;
    },
  };
  return fixture;
}

/**
 * Shows `target`, which a phone's layout folds behind the header's Menu button: opens the menu, and
 * opens it again when a new page drawn meanwhile (the console's first route, a session refresh)
 * folded it back. On a desktop the target is already there.
 */
export async function showFolded(page: Page, menuName: string, target: Locator): Promise<void> {
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  const menu = page.getByRole('button', { name: menuName });
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await target.isVisible()) return;
    if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
    const shown = await target.waitFor({ state: 'visible', timeout: 3000 }).then(
      () => true,
      () => false,
    );
    if (shown) return;
  }
  await target.waitFor({ state: 'visible' });
}
