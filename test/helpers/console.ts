import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { addCabinetUser } from '../../server/tenancy/users.js';
import { AUTO_FORM_FIELDS } from './insurance-data.js';
import type { TestServer } from './server.js';

/** A console session over HTTP, as the console's script holds it: the cookies and the CSRF header. */
export interface ConsoleClient {
  cookie: string;
  csrfToken: string;
  /** fetch with the session cookie, and on anything but GET the X-CSRF-Token header and a same-origin Origin. */
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

export async function consoleClient(server: TestServer, user: { email: string; password: string }): Promise<ConsoleClient> {
  const response = await server.request('/api/v1/console/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  return consoleClientFromResponse(server, response);
}

/** A new user of the cabinet with that role, signed in to the console over HTTP; `email` is theirs. */
export async function signInNewUser(
  server: TestServer,
  cabinetId: string,
  role: 'admin' | 'broker',
): Promise<{ client: ConsoleClient; email: string }> {
  const user = { email: `${role}-${randomUUID()}@example.fr`, password: 'correct horse battery' };
  await addCabinetUser(server.deps, cabinetId, { ...user, role });
  return { client: await consoleClient(server, user), email: user.email };
}

/** A console client from a response that set the session cookies (sign-in, first-run setup). */
export function consoleClientFromResponse(server: TestServer, response: Response): ConsoleClient {
  const cookies = response.headers.getSetCookie().map((line) => line.split(';')[0] ?? '');
  const csrfToken = cookies.find((c) => c.startsWith('courtier_csrf='))?.slice('courtier_csrf='.length) ?? '';
  const cookie = cookies.join('; ');
  return {
    cookie,
    csrfToken,
    request(path, init = {}) {
      const method = init.method ?? 'GET';
      const headers: Record<string, string> = { cookie, ...(init.headers as Record<string, string> | undefined) };
      if (method !== 'GET') Object.assign(headers, { 'X-CSRF-Token': csrfToken, Origin: server.url });
      let body = init.body;
      if (init.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(init.json);
      }
      return server.request(path, { ...init, method, headers, body });
    },
  };
}

/** Signs in through the login page in a fresh browser context; returns the page on `path`. */
export async function openConsole(
  browser: Browser,
  server: TestServer,
  user: { email: string; password: string },
  path = '/console/',
  locale = 'en-GB',
): Promise<Page> {
  const context = await browser.newContext({ locale, viewport: DESKTOP });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await signInOnLoginPage(page, server, user, path, locale);
  return page;
}

const DESKTOP = { width: 1280, height: 800 };

/** Fills and sends the login page (its words in the locale's language), then waits for `path`. */
async function signInOnLoginPage(
  page: Page,
  server: TestServer,
  user: { email: string; password: string },
  path: string,
  locale: string,
): Promise<void> {
  await page.goto(`${server.url}/console/login?return_to=${encodeURIComponent(path)}`);
  await page.getByLabel(locale.startsWith('fr') ? 'Courriel' : 'Email').fill(user.email);
  await page.getByLabel(locale.startsWith('fr') ? 'Mot de passe' : 'Password').fill(user.password);
  await page.getByRole('button', { name: locale.startsWith('fr') ? 'Se connecter' : 'Sign in' }).click();
  await page.waitForURL(`${server.url}${path}`);
}

/** How a test file keeps the console tabs it opens. */
export interface ConsoleTabs {
  /** Every tab's browser context, for the file to close. */
  contexts: BrowserContext[];
  /** Every script error, console error and CSP refusal of the tabs (the file's afterEach expects none). */
  problems: string[];
  /** Console lines that are expected answers rather than problems (a 401 or 403 the browser logs as a failed load). */
  expected?: (text: string) => boolean;
  /** How long a step of a tab may wait (15 s unless told). */
  timeout?: number;
}

/**
 * A console tab signed in through the login page and landed on `path`, kept as `tabs` says: its
 * context in tabs.contexts, and from the login page on its problems in tabs.problems
 * (collectProblems). A viewport other than 1280×800, and permissions such as the clipboard's, when
 * the test needs them.
 */
export async function signedIn(
  browser: Browser,
  server: TestServer,
  tabs: ConsoleTabs,
  user: { email: string; password: string },
  path: string,
  options: { locale?: string; viewport?: { width: number; height: number }; permissions?: string[] } = {},
): Promise<Page> {
  const locale = options.locale ?? 'en-GB';
  const context = await browser.newContext({ locale, viewport: options.viewport ?? DESKTOP });
  tabs.contexts.push(context);
  if (options.permissions) await context.grantPermissions(options.permissions, { origin: server.url });
  const page = await context.newPage();
  page.setDefaultTimeout(tabs.timeout ?? 15_000);
  collectProblems(page, tabs.problems, tabs.expected);
  await signInOnLoginPage(page, server, user, path, locale);
  return page;
}

/** Saves a screenshot of the page as a test artefact (test-artifacts/screenshots/, not committed). */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `test-artifacts/screenshots/${name}.png`, fullPage: true });
}

/** Starts recording, inside the page, every value the named progress bar shows (the root tsconfig has no DOM types). */
export async function recordProgress(page: Page, label: string): Promise<void> {
  await page.evaluate((label) => {
    type El = { getAttribute(name: string): string | null };
    const g = globalThis as unknown as {
      samePage: boolean;
      seen: string[];
      document: { body: unknown; querySelector(selector: string): El | null };
      MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void };
    };
    g.samePage = true;
    g.seen = [];
    const record = () => {
      const value = g.document.querySelector(`progress[aria-label="${label}"]`)?.getAttribute('aria-valuenow');
      if (value && g.seen[g.seen.length - 1] !== value) g.seen.push(value);
    };
    record();
    new g.MutationObserver(record).observe(g.document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['aria-valuenow'],
    });
  }, label);
}

/** What recordProgress saw, and whether it is still the same page (a reload would have lost the marker). */
export async function progressSeen(page: Page): Promise<{ samePage: boolean; seen: number[] }> {
  return page.evaluate(() => {
    const g = globalThis as unknown as { samePage?: boolean; seen?: string[] };
    return { samePage: g.samePage === true, seen: (g.seen ?? []).map(Number) };
  });
}

/** The codes the sandbox portal "sent by SMS", newest first. */
export async function sandboxPhoneCodes(server: TestServer): Promise<string[]> {
  const res = await server.request('/sandbox/insurer/phone?format=json');
  return ((await res.json()) as { messages: { code: string }[] }).messages.map((m) => m.code);
}

/** The page is no wider than the window: nothing makes it scroll sideways. */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  type El = { tagName: string; className: string; getBoundingClientRect(): { right: number } };
  const widths = await page.evaluate(() => {
    const doc = (
      globalThis as unknown as {
        document: { documentElement: { scrollWidth: number; clientWidth: number }; querySelectorAll(s: string): Iterable<El> };
      }
    ).document;
    const client = doc.documentElement.clientWidth;
    // What sticks out, to say which element to fix.
    const wide = [...doc.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > client + 1)
      .map((el) => `${el.tagName}.${el.className}`);
    return { scroll: doc.documentElement.scrollWidth, client, wide: wide.slice(0, 5) };
  });
  expect(widths.scroll, `too wide: ${widths.wide.join(', ')}`).toBeLessThanOrEqual(widths.client);
}

/**
 * Collects the page's script errors, console errors and CSP refusals into `problems` (a test's
 * afterEach expects it empty), except the console lines `expected` accepts.
 */
export function collectProblems(page: Page, problems: string[], expected: (text: string) => boolean = () => false): void {
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    const text = msg.text();
    if (expected(text)) return;
    if (msg.type() === 'error' || /Content Security Policy|Refused to/i.test(text)) problems.push(`console ${msg.type()}: ${text}`);
  });
}

/** The Pricing page set to the sandbox's car product, its form filled with the test data; the form. */
export async function fillSandboxAutoPricing(page: Page): Promise<Locator> {
  await page.getByLabel('Insurer', { exact: true }).selectOption('sandbox');
  await page.getByLabel('Product', { exact: true }).selectOption('auto');
  const form = page.getByRole('form', { name: 'Assurance auto' });
  for (const [label, value] of Object.entries(AUTO_FORM_FIELDS)) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByLabel('Usage du véhicule', { exact: true }).selectOption('prive');
  await form.getByLabel('Formule', { exact: true }).selectOption('tous_risques');
  return form;
}

/**
 * The controls of the page smaller than 24×24 px (WCAG 2.2, 2.5.8), each as tag, text and size; a
 * link inside a sentence is exempt, as the rule says. Read as a string: the root tsconfig has no DOM types.
 */
export async function smallTargets(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const controls = document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex]:not([tabindex="-1"])');
    const small = [];
    for (const el of controls) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (getComputedStyle(el).visibility === 'hidden') continue;
      if (box.width >= 24 && box.height >= 24) continue;
      const inSentence = getComputedStyle(el).display === 'inline' && (el.parentElement?.textContent ?? '').trim().length > (el.textContent ?? '').trim().length;
      if (inSentence) continue;
      small.push(el.tagName.toLowerCase() + (el.getAttribute('type') ? '[' + el.getAttribute('type') + ']' : '') + ' "' + ((el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30)) + '" ' + Math.round(box.width) + '×' + Math.round(box.height));
    }
    return small;
  })()`)) as string[];
}
