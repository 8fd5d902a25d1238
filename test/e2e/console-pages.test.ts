// @module-tag browser
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../server/console/service.js';
import { streamJobEvents } from '../../shared/console-automation.js';
import { pathTo } from '../../shared/endpoint.js';
import { MCP_SCOPE_WORDING, MCP_SCOPES, MCP_WRITE_SCOPES } from '../../shared/oauth.js';
import {
  authorizePath,
  createUser,
  openConsent,
  pkcePair,
  registerClient,
  signIn,
  startCallbackServer,
  tokenRequest,
  type CallbackServer,
  type TestUser,
} from '../helpers/oauth.js';
import { useConsoleBrowser } from '../helpers/console-browser.js';

/**
 * The built console (dist/renderer) in real Chromium, served by the real app on a real port, with
 * real users, sessions, OAuth clients and consent requests. The consent form's 303 goes to a
 * loopback "client" on another port, over http: what the CSP's form-action must allow.
 */

const CABINET = 'Cabinet Dupont & Associés';
const WRONG_PASSWORD = 'The email or the password is wrong.';

const EN = { email: 'Email', password: 'Password', button: 'Sign in' };
const FR = { email: 'Courriel', password: 'Mot de passe', button: 'Se connecter' };

let callback: CallbackServer;
let user: TestUser;
/** The tabs of a test, closed after it; console errors are answers here (a refused sign-in), only CSP refusals are problems. */
const ui = useConsoleBrowser({ expected: (text) => !/Content Security Policy|Refused to/i.test(text), timeout: 10_000 });

beforeAll(async () => {
  callback = await startCallbackServer();
  user = await createUser(ui.server, CABINET);
});
afterAll(() => callback?.close());

/** A fresh browser (no cookies) in a locale, on a path of the server. en-US is Chromium's default. */
async function open(path: string, locale = 'en-US'): Promise<Page> {
  const page = await blankPage(locale);
  await page.goto(ui.server.url + path);
  return page;
}

/** A fresh browser's page before it loads anything, to watch its requests from the first. */
function blankPage(locale = 'en-US'): Promise<Page> {
  // Chromium's own window size.
  return ui.newPage({ locale, viewport: { width: 1280, height: 720 } });
}

async function fillSignIn(page: Page, who: Pick<TestUser, 'email' | 'password'>, labels = EN) {
  await page.getByLabel(labels.email).fill(who.email);
  await page.getByLabel(labels.password).fill(who.password);
  await page.getByRole('button', { name: labels.button }).click();
}

/** The answer to the page's sign-in POST, to check its status. */
function signInAnswer(page: Page) {
  return page.waitForResponse((r) => r.url() === `${ui.server.url}/api/v1/console/session` && r.request().method() === 'POST');
}

describe('the login page', () => {
  it('in English: labelled fields, an empty form and a wrong password in an alert', async () => {
    const page = await open('/console/login');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await expect.poll(() => page.title()).toBe('Sign in · Courtier');
    await expect(page.getByLabel('Email').getAttribute('autocomplete')).resolves.toBe('username');
    await expect(page.getByLabel('Password').getAttribute('type')).resolves.toBe('password');

    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Enter your email and your password.' }).waitFor();

    const answer = signInAnswer(page);
    await fillSignIn(page, { email: user.email, password: 'not the password' });
    expect((await answer).status()).toBe(401);
    await page.getByRole('alert').filter({ hasText: WRONG_PASSWORD }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/login');
  });

  it('in French: labels, lang, the alerts, then home', async () => {
    const page = await open('/console/login', 'fr-FR');
    expect(await page.locator('html').getAttribute('lang')).toBe('fr');
    await expect.poll(() => page.title()).toBe('Se connecter · Courtier');
    await page.getByRole('heading', { name: 'Connexion à Courtier' }).waitFor();

    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.getByRole('alert').filter({ hasText: 'Saisissez votre courriel et votre mot de passe.' }).waitFor();
    await fillSignIn(page, { email: user.email, password: 'pas le mot de passe' }, FR);
    // The console words the server's code in its own language.
    await page.getByRole('alert').filter({ hasText: 'L’e-mail ou le mot de passe est incorrect.' }).waitFor();

    await fillSignIn(page, user, FR);
    await page.waitForURL(`${ui.server.url}/console/`);
    await page.getByText(`Connecté en tant que ${user.email} — ${CABINET}`).waitFor();
    await page.getByRole('button', { name: 'Se déconnecter' }).waitFor();
  });

  it('a browser that prefers neither English nor French gets French', async () => {
    const page = await open('/console/login', 'de-DE');
    expect(await page.locator('html').getAttribute('lang')).toBe('fr');
    await page.getByLabel('Courriel').waitFor();
    await page.getByLabel('Mot de passe').waitFor();
    await page.getByRole('button', { name: 'Se connecter' }).waitFor();
  });

  it('after 5 failed sign-ins for an account, the 429 message is shown in the alert', async () => {
    const throttled = await createUser(ui.server, 'Cabinet Bloqué');
    for (let i = 0; i < 5; i++) {
      const response = await ui.server.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: throttled.email, password: `wrong ${i}` }),
      });
      expect(response.status).toBe(401);
    }
    const page = await open('/console/login');
    const answer = signInAnswer(page);
    // Even the right password: the account is locked for the window.
    await fillSignIn(page, throttled);
    expect((await answer).status()).toBe(429);
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'Too many failed sign-ins' }).waitFor();
    expect(await alert.textContent()).toMatch(/^Too many failed sign-ins\. Try again in \d+ min\.$/);
    expect(new URL(page.url()).pathname).toBe('/console/login');
  });
});

describe('the home page', () => {
  it('signed out goes to the login page; sign in, home, sign out, and the session is gone', async () => {
    const page = await blankPage();
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) refused.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    const feeds: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === pathTo(streamJobEvents)) feeds.push(page.url());
    });
    await page.goto(`${ui.server.url}/console/`);
    await page.waitForURL(`${ui.server.url}/console/login`);
    await page.getByLabel('Email').waitFor();
    // Signed out, the console opens no live feed: it would be refused, and the browser would log the 401.
    expect(feeds, 'no live feed opened before signing in').toEqual([]);
    await fillSignIn(page, user);
    await page.waitForURL(`${ui.server.url}/console/`);
    await expect.poll(() => page.title()).toBe('Courtier console');
    await expect.poll(() => feeds.length, { message: 'the live feed opens once signed in' }).toBeGreaterThan(0);
    expect(refused, 'no request refused on the way in').toEqual([]);
    await page.getByText(`Signed in as ${user.email} — ${CABINET}`).waitFor();
    const session = (await page.context().cookies(ui.server.url)).find((c) => c.name === SESSION_COOKIE);
    expect(session?.httpOnly).toBe(true);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${ui.server.url}/console/login`);
    await page.getByLabel('Email').waitFor();
    // The session probe answers 200 either way (a 401 would be logged by the browser as an error).
    expect(await (await page.request.get(`${ui.server.url}/api/v1/console/session`)).json()).toEqual({ signed_in: false });
    // Revoked on the server, not only forgotten by the browser.
    const replayed = await ui.server.request('/api/v1/console/session', {
      headers: { cookie: `${SESSION_COOKIE}=${session?.value ?? ''}` },
    });
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toEqual({ signed_in: false });
  });
});

describe('inside the desktop app', () => {
  it('shows the shell’s warnings (keychain fallback) in a banner; nothing in a plain browser', async () => {
    const warning = 'No OS keychain answered: insurer passwords are kept in the encrypted file store of the data folder.';
    const context = await ui.browser.newContext({ locale: 'en-US' });
    ui.tabs.contexts.push(context);
    // What electron/preload.cts exposes, stood in for: the Electron binary cannot run here.
    await context.addInitScript((text) => {
      Object.defineProperty(globalThis, 'courtierDesktop', {
        value: {
          isDesktop: true,
          getStatus: async () => ({
            version: '0.1.0',
            secret_store: 'encrypted-file',
            warnings: [text],
            managed: [],
            robots_headed: false,
          }),
        },
      });
    }, warning);
    const page = await context.newPage();
    page.on('pageerror', (err) => ui.problems.push(`pageerror: ${err.message}`));
    await page.goto(`${ui.server.url}/console/login`);
    await fillSignIn(page, user);
    await page.waitForURL(`${ui.server.url}/console/`);
    await page.getByRole('status').filter({ hasText: warning }).waitFor();

    const plain = await open('/console/login');
    await fillSignIn(plain, user);
    await plain.waitForURL(`${ui.server.url}/console/`);
    await plain.getByText(`Signed in as ${user.email}`).waitFor();
    expect(await plain.getByText(warning).count()).toBe(0);
  });
});

describe('the consent page', () => {
  it('a signed-out link goes through login and back; Allow reaches the client with a code, without a Referer', async () => {
    const client = await registerClient(ui.server, { client_name: 'Claude', redirect_uris: [callback.url] });
    const { verifier, challenge } = pkcePair();
    const requestId = await openConsent(ui.server, await signIn(ui.server, user), {
      clientId: client.client_id,
      redirectUri: callback.url,
      challenge,
      scope: MCP_SCOPES.join(' '),
      state: 'state-en',
    });
    const consentPath = `/console/consent?request_id=${requestId}`;

    const page = await open(consentPath);
    await page.waitForURL(`${ui.server.url}/console/login?return_to=${encodeURIComponent(consentPath)}`);
    await fillSignIn(page, user);
    await page.waitForURL(ui.server.url + consentPath);

    await page.getByRole('heading', { name: 'Claude wants to access your Courtier data' }).waitFor();
    await page.getByText(`It will return you to ${new URL(callback.url).host}`).waitFor();
    await page.getByText(`Signed in as ${user.email}`).waitFor();
    const items = page.getByRole('listitem');
    expect(await items.count()).toBe(MCP_SCOPES.length);
    for (const scope of MCP_SCOPES) {
      const item = items.filter({ hasText: MCP_SCOPE_WORDING[scope].en });
      expect(await item.count(), scope).toBe(1);
      expect(await item.getByText('Can modify data').count(), scope).toBe(MCP_WRITE_SCOPES.includes(scope) ? 1 : 0);
    }

    const before = callback.referers.length;
    const landed = callback.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const url = await landed;
    expect(url.searchParams.get('state')).toBe('state-en');
    const code = url.searchParams.get('code');
    expect(code).toBeTruthy();
    // The client learns nothing of the console's URLs.
    expect(callback.referers.slice(before)).toEqual([undefined]);
    // A real code: it buys tokens with the PKCE verifier.
    const tokens = await tokenRequest(ui.server, {
      grant_type: 'authorization_code',
      code: code ?? '',
      code_verifier: verifier,
      client_id: client.client_id,
      redirect_uri: callback.url,
    });
    expect(tokens.status).toBe(200);
  });

  it('in French: authorize in the browser, then Refuser reaches the client with access_denied', async () => {
    const client = await registerClient(ui.server, { client_name: 'Assistant', redirect_uris: [callback.url] });
    const { challenge } = pkcePair();
    const page = await open('/console/login', 'fr-FR');
    await fillSignIn(page, user, FR);
    await page.waitForURL(`${ui.server.url}/console/`);

    await page.goto(
      ui.server.url +
        authorizePath({
          clientId: client.client_id,
          redirectUri: callback.url,
          challenge,
          scope: 'crm:read crm:write devis:draft',
          state: 'state-fr',
        }),
    );
    await page.waitForURL(/\/console\/consent\?request_id=[\w-]+$/);
    await page.getByRole('heading', { name: 'Assistant souhaite accéder à vos données Courtier' }).waitFor();
    await page.getByText(`Vous serez ensuite renvoyé vers ${new URL(callback.url).host}`).waitFor();
    await page.getByText(`Connecté en tant que ${user.email}`).waitFor();
    expect(await page.getByRole('listitem').count()).toBe(3);
    await page.getByText(MCP_SCOPE_WORDING['crm:read'].fr).waitFor();
    expect(await page.getByText('Peut modifier vos données').count()).toBe(2);
    await page.getByRole('button', { name: 'Autoriser' }).waitFor();

    const landed = callback.next();
    await page.getByRole('button', { name: 'Refuser' }).click();
    const url = await landed;
    expect(url.searchParams.get('error')).toBe('access_denied');
    expect(url.searchParams.get('state')).toBe('state-fr');
    expect(url.searchParams.get('code')).toBeNull();
  });

  it("shows the server's errors in an alert: unknown request, another user's request, no request_id", async () => {
    const other = await createUser(ui.server, 'Cabinet Autre');
    const client = await registerClient(ui.server, { redirect_uris: [callback.url] });
    const othersRequest = await openConsent(ui.server, await signIn(ui.server, other), {
      clientId: client.client_id,
      redirectUri: callback.url,
      challenge: pkcePair().challenge,
    });

    const page = await open('/console/login');
    await fillSignIn(page, user);
    await page.waitForURL(`${ui.server.url}/console/`);

    const unknown = page.waitForResponse((r) => r.url().includes('/api/v1/mcp/oauth/consent/'));
    await page.goto(`${ui.server.url}/console/consent?request_id=${randomUUID()}`);
    expect((await unknown).status()).toBe(404);
    await page.getByRole('alert').filter({ hasText: 'This authorization request is unknown, already answered or expired.' }).waitFor();

    const forbidden = page.waitForResponse((r) => r.url().includes('/api/v1/mcp/oauth/consent/'));
    await page.goto(`${ui.server.url}/console/consent?request_id=${othersRequest}`);
    expect((await forbidden).status()).toBe(403);
    await page.getByRole('alert').filter({ hasText: 'This authorization request was opened by another user.' }).waitFor();

    await page.goto(`${ui.server.url}/console/consent`);
    await page.getByRole('alert').filter({ hasText: 'it has no request_id' }).waitFor();
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(0);
  });
});
