import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeCode,
  authorizePath,
  consentDetails,
  createUser,
  launchChromium,
  openConsent,
  pkcePair,
  postConsent,
  registerClient,
  signIn,
  type TestUser,
} from '../helpers/oauth.js';
import { consoleClient } from '../helpers/console.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

/** Anyone may register a client, with any https redirect URI: here, a phishing page. */
const ATTACKER_REDIRECT = 'https://attacker.example/landing';

let server: TestServer;
let user: TestUser;
let attackerClientId: string;
const { challenge } = pkcePair();

beforeAll(async () => {
  server = await startTestServer({ clock: testClock(), config: { oauthRegistrationsPerHour: 1000 } });
  user = await createUser(server);
  attackerClientId = (await registerClient(server, { client_name: 'Totally Legit', redirect_uris: [ATTACKER_REDIRECT] })).client_id;
});
afterAll(async () => {
  await server?.close();
});

/** Authorize requests that are wrong in one parameter, for a valid client and its registered redirect URI. */
const BAD_REQUESTS: [string, Record<string, string>, RegExp][] = [
  ['an unsupported response_type', { response_type: 'token' }, /response_type must be code/],
  ['no PKCE', { code_challenge: '', code_challenge_method: '' }, /PKCE is required/],
  ['plain PKCE', { code_challenge_method: 'plain' }, /S256/],
  ['a malformed code_challenge', { code_challenge: 'short' }, /base64url/],
  ['an unknown scope', { scope: 'crm:read admin' }, /Unknown scope: admin/],
  ['a foreign resource', { resource: 'https://other.example/mcp' }, /issues tokens for/],
];

function badPath(clientId: string, redirectUri: string, extra: Record<string, string>): string {
  return authorizePath({ clientId, redirectUri, challenge, state: 'st-1', extra });
}

/** The same request with a parameter given twice. */
function duplicatedPath(clientId: string, redirectUri: string): string {
  return `${authorizePath({ clientId, redirectUri, challenge, state: 'st-1' })}&scope=crm:read&scope=crm:write`;
}

async function expectErrorPage(response: Response, description: RegExp): Promise<void> {
  expect(response.status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await response.text();
  expect(html).toContain('Invalid connection request');
  expect(html).toMatch(description);
  expect(html).toContain('Start the connection again from the assistant');
}

describe('CWE-601 URL redirection to untrusted site (open redirect) before consent', () => {
  describe('a bad authorize request for a client the person never consented to shows an error page', () => {
    it.each(BAD_REQUESTS)('%s, signed out: no redirect to the registered URI', async (_name, extra, description) => {
      const response = await server.request(badPath(attackerClientId, ATTACKER_REDIRECT, extra), { redirect: 'manual' });
      await expectErrorPage(response, description);
    });

    it.each(BAD_REQUESTS)('%s, signed in without a grant for that client: no redirect either', async (_name, extra, description) => {
      const cookie = await signIn(server, user);
      const response = await server.request(badPath(attackerClientId, ATTACKER_REDIRECT, extra), {
        headers: { cookie },
        redirect: 'manual',
      });
      await expectErrorPage(response, description);
    });

    it('a duplicated parameter: no redirect', async () => {
      const cookie = await signIn(server, user);
      for (const headers of [{}, { cookie }] as Record<string, string>[]) {
        const response = await server.request(duplicatedPath(attackerClientId, ATTACKER_REDIRECT), { headers, redirect: 'manual' });
        await expectErrorPage(response, /scope must be given once/);
      }
    });
  });

  describe('once the person consented to that very client, errors go back to it (RFC 6749 4.1.2.1)', () => {
    let clientId: string;
    let redirect: string;
    let cookie: string;

    beforeAll(async () => {
      redirect = 'http://127.0.0.1:9/callback';
      clientId = (await registerClient(server, { client_name: 'Trusted assistant', redirect_uris: [redirect] })).client_id;
      cookie = await signIn(server, user);
      await authorizeCode(server, cookie, { clientId, challenge });
    });

    it.each(BAD_REQUESTS)('%s: redirect with error, error_description, state and iss', async (_name, extra, description) => {
      const response = await server.request(badPath(clientId, redirect, extra), { headers: { cookie }, redirect: 'manual' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(redirect);
      expect(location.searchParams.get('error')).toMatch(/^(invalid_request|unsupported_response_type|invalid_scope|invalid_target)$/);
      expect(location.searchParams.get('error_description')).toMatch(description);
      expect(location.searchParams.get('state')).toBe('st-1');
      expect(location.searchParams.get('iss')).toBe(server.url);
      expect(location.searchParams.get('code')).toBeNull();
    });

    it('another user of the cabinet, or the same request signed out, still gets the error page', async () => {
      const admin = await consoleClient(server, user);
      const colleague = { email: 'colleague@example.fr', password: 'a colleague password' };
      const created = await admin.request('/api/v1/console/users', { method: 'POST', json: { ...colleague, role: 'broker' } });
      expect(created.status).toBe(201);
      const theirs = await signIn(server, colleague);
      const path = badPath(clientId, redirect, { response_type: 'token' });
      await expectErrorPage(await server.request(path, { headers: { cookie: theirs }, redirect: 'manual' }), /response_type/);
      await expectErrorPage(await server.request(path, { redirect: 'manual' }), /response_type/);
    });

    it('after the person revokes the app, errors show the page again', async () => {
      const other = await registerClient(server, { client_name: 'Revoked assistant', redirect_uris: [redirect] });
      const admin = await consoleClient(server, user);
      await authorizeCode(server, admin.cookie, { clientId: other.client_id, challenge });
      const path = badPath(other.client_id, redirect, { code_challenge_method: 'plain' });
      expect((await server.request(path, { headers: { cookie: admin.cookie }, redirect: 'manual' })).status).toBe(302);
      const apps = (await (await admin.request('/api/v1/console/connected-apps')).json()) as { grant_id: string; client_id: string }[];
      const grant = apps.find((a) => a.client_id === other.client_id);
      expect((await admin.request(`/api/v1/console/connected-apps/${grant?.grant_id ?? ''}`, { method: 'DELETE' })).status).toBe(204);
      await expectErrorPage(await server.request(path, { headers: { cookie: admin.cookie }, redirect: 'manual' }), /S256/);
    });
  });

  it('Deny on the consent page still goes back to the client with access_denied', async () => {
    const cookie = await signIn(server, user);
    const requestId = await openConsent(server, cookie, {
      clientId: attackerClientId,
      redirectUri: ATTACKER_REDIRECT,
      challenge,
      state: 'st-2',
    });
    const details = await consentDetails(server, cookie, requestId);
    const response = await postConsent(server, cookie, { request_id: requestId, csrf_token: details.csrf_token, decision: 'deny' });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.origin + location.pathname).toBe(ATTACKER_REDIRECT);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('st-2');
  });

  describe('registration and consent', () => {
    it.each([
      'http://attacker.example/cb',
      'http://192.168.1.20/cb',
      'http://127.0.0.2.nip.io/cb',
      'myapp://cb',
      'com.example.app:/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
    ])('refuses the redirect URI %j (neither https nor loopback http) with invalid_redirect_uri', async (uri) => {
      const response = await server.request('/api/v1/mcp/oauth/register', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_name: 'x', redirect_uris: ['https://fine.example/cb', uri] }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_redirect_uri');
    });

    describe('the consent page shows where the person will be sent', { tags: ['browser'] }, () => {
      let browser: Browser;
      beforeAll(async () => {
        browser = await launchChromium();
      });
      afterAll(async () => {
        await browser?.close();
      });

      it('names the redirect host, in the consent request and on the page', async () => {
        const cookie = await signIn(server, user);
        const requestId = await openConsent(server, cookie, { clientId: attackerClientId, redirectUri: ATTACKER_REDIRECT, challenge });
        expect((await consentDetails(server, cookie, requestId)).redirect_host).toBe('attacker.example');

        const context = await browser.newContext({ locale: 'en-GB' });
        try {
          const page = await context.newPage();
          await page.goto(`${server.url}${authorizePath({ clientId: attackerClientId, redirectUri: ATTACKER_REDIRECT, challenge })}`);
          await page.getByLabel('Email').fill(user.email);
          await page.getByLabel('Password').fill(user.password);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('button', { name: 'Allow' }).waitFor();
          const text = await page.locator('body').innerText();
          expect(text).toContain('Totally Legit');
          expect(text).toMatch(/It will return you to\s+attacker\.example/);
        } finally {
          await context.close();
        }
      });
    });
  });
});
