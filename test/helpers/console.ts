import type { Browser, Page } from 'playwright-core';
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
export async function openConsole(browser: Browser, server: TestServer, user: { email: string; password: string }, path = '/console/', locale = 'en-GB'): Promise<Page> {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${server.url}/console/login?return_to=${encodeURIComponent(path)}`);
  await page.getByLabel(locale.startsWith('fr') ? 'Courriel' : 'Email').fill(user.email);
  await page.getByLabel(locale.startsWith('fr') ? 'Mot de passe' : 'Password').fill(user.password);
  await page.getByRole('button', { name: locale.startsWith('fr') ? 'Se connecter' : 'Sign in' }).click();
  await page.waitForURL(`${server.url}${path}`);
  return page;
}

/** Saves a screenshot of the page as a test artefact (test-artifacts/screenshots/, not committed). */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `test-artifacts/screenshots/${name}.png`, fullPage: true });
}
