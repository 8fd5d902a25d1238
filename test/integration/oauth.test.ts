import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSafeReturnTo, MCP_SCOPES, tokenResponseSchema } from '../../shared/oauth.js';
import { createAccessTokenAuthenticator } from '../../server/oauth/access.js';
import { sha256 } from '../../server/oauth/common.js';
import { forgetGrantsOfUser, revokeGrantsOfUser } from '../../server/oauth/connected-apps.js';
import {
  authorizeCode,
  authorizeOverHttp,
  authorizePath,
  consentDetails,
  createUser,
  openConsent,
  pkcePair,
  postConsent,
  registerClient,
  signIn,
  tokenRequest,
  type TestUser,
} from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let user: TestUser;
let accessValid: (token: string) => boolean;

beforeAll(async () => {
  server = await startTestServer({ clock, config: { oauthRegistrationsPerHour: 1000 } });
  user = await createUser(server);
  const authenticate = createAccessTokenAuthenticator(server.deps);
  accessValid = (token) => authenticate(token) !== null;
});
afterAll(async () => {
  await server?.close();
});

const REDIRECT = 'http://127.0.0.1:9/callback';

describe('metadata documents', () => {
  it('names the resource and its authorization server consistently (RFC 9728, RFC 8414)', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await server.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        resource: `${server.url}/mcp`,
        authorization_servers: [server.url],
        scopes_supported: [...MCP_SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'Courtier',
      });
    }
    const as = (await (await server.request('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/api/v1/mcp/oauth/authorize`,
      token_endpoint: `${server.url}/api/v1/mcp/oauth/token`,
      registration_endpoint: `${server.url}/api/v1/mcp/oauth/register`,
      revocation_endpoint: `${server.url}/api/v1/mcp/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [...MCP_SCOPES],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('answers in the name the client used: localhost gets localhost URLs', async () => {
    const port = new URL(server.url).port;
    const response = await server.app.inject({ url: '/.well-known/oauth-protected-resource/mcp', headers: { host: `localhost:${port}` } });
    expect(response.json()).toMatchObject({
      resource: `http://localhost:${port}/mcp`,
      authorization_servers: [`http://localhost:${port}`],
    });
  });

  it('uses the configured public base URL when there is one', async () => {
    const other = await startTestServer({ config: { publicBaseUrl: 'https://courtier.cabinet.example/' } });
    try {
      const as = (await (await other.request('/.well-known/oauth-authorization-server')).json()) as Record<string, string>;
      expect(as.issuer).toBe('https://courtier.cabinet.example');
      expect(as.token_endpoint).toBe('https://courtier.cabinet.example/api/v1/mcp/oauth/token');
    } finally {
      await other.close();
    }
  });

  it('is open to browser-based clients of any origin (CORS), with the MCP headers allowed', async () => {
    const origin = 'https://assistant.example';
    const simple = await server.request('/.well-known/oauth-authorization-server', { headers: { Origin: origin } });
    expect(simple.status).toBe(200);
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    for (const path of [
      '/api/v1/mcp/oauth/token',
      '/api/v1/mcp/oauth/register',
      '/api/v1/mcp/oauth/revoke',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const preflight = await server.request(path, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type, mcp-protocol-version',
        },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/MCP-Protocol-Version/);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Method/);
    }
    // The console's own endpoints stay closed to other origins.
    const session = await server.request('/api/v1/console/session', { headers: { Origin: origin } });
    expect(session.status).toBe(403);
  });

  it('never falls through to HTML for a well-known URL', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/mcp', '/.well-known/anything']) {
      const response = await server.request(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });
});

describe('registration (RFC 7591)', () => {
  it('registers a public client and echoes its metadata', async () => {
    const response = await server.request('/api/v1/mcp/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Claude',
        redirect_uris: ['https://claude.example/callback', 'http://localhost:33418/cb', 'http://[::1]/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        some_future_field: true,
      }),
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      client_name: 'Claude',
      redirect_uris: ['https://claude.example/callback', 'http://localhost:33418/cb', 'http://[::1]/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(body.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.client_id_issued_at).toBe(Math.floor(clock.now() / 1000));
    expect(body).not.toHaveProperty('client_secret');
  });

  it.each([
    [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://user:pw@app.example/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri'],
    [{ redirect_uris: 'https://app.example/cb' }, 'invalid_redirect_uri'],
    [{}, 'invalid_redirect_uri'],
    [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], scope: 'crm:read webhooks:manage' }, 'invalid_client_metadata'],
  ])('refuses %j with %s', async (body, error) => {
    const response = await server.request('/api/v1/mcp/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    const json = (await response.json()) as Record<string, string>;
    expect(json.error).toBe(error);
    expect(json.error_description).toBeTruthy();
  });

  it('limits registrations per client address, per hour', async () => {
    const limited = await startTestServer({ clock: testClock(), config: { oauthRegistrationsPerHour: 3 } });
    try {
      for (let i = 0; i < 3; i++) await registerClient(limited);
      const refused = await limited.request('/api/v1/mcp/oauth/register', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});

describe('authorize', () => {
  let clientId: string;
  /** A client the user already allowed once: its bad requests may be answered by a redirect. */
  let consentedClientId: string;
  let cookie: string;
  const { challenge } = pkcePair();
  beforeAll(async () => {
    clientId = (await registerClient(server)).client_id;
    cookie = await signIn(server, user);
    consentedClientId = (await registerClient(server)).client_id;
    await authorizeCode(server, cookie, { clientId: consentedClientId, challenge });
  });

  it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
    for (const path of [
      authorizePath({ clientId: '00000000-0000-0000-0000-000000000000', challenge }),
      authorizePath({ clientId, challenge, redirectUri: 'https://evil.example/callback' }),
      authorizePath({ clientId, challenge, redirectUri: 'http://127.0.0.1:9/other' }),
    ]) {
      const response = await server.request(path, { headers: { cookie }, redirect: 'manual' });
      expect(response.status, path).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    }
  });

  it('accepts any port on a loopback redirect URI (RFC 8252)', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge, redirectUri: 'http://127.0.0.1:51234/callback' });
    expect((await consentDetails(server, cookie, requestId)).redirect_host).toBe('127.0.0.1:51234');
  });

  it('sends a visitor without a session to the console login, with a same-origin return_to', async () => {
    const path = authorizePath({ clientId, challenge });
    const response = await server.request(path, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = response.headers.get('location') ?? '';
    expect(location).toBe(`/console/login?return_to=${encodeURIComponent(path)}`);
  });

  it.each([
    [{ code_challenge_method: 'plain' }, 'invalid_request', /S256/],
    [{ code_challenge: '', code_challenge_method: '' }, 'invalid_request', /PKCE/],
    [{ code_challenge: 'short' }, 'invalid_request', /base64url/],
    [{ scope: 'crm:read webhooks:manage' }, 'invalid_scope', /webhooks:manage/],
    [{ scope: 'admin' }, 'invalid_scope', /admin/],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target', /mcp/],
    [{ response_type: 'token' }, 'unsupported_response_type', /code/],
  ])(
    'answers %j with an error page, or with %s, the state and iss to a client the user allowed before',
    async (extra, error, description) => {
      const beforeConsent = await server.request(authorizePath({ clientId, challenge, state: 'xyz', extra }), {
        headers: { cookie },
        redirect: 'manual',
      });
      expect(beforeConsent.status).toBe(400);
      expect(beforeConsent.headers.get('location')).toBeNull();
      expect(await beforeConsent.text()).toMatch(description);
      const response = await server.request(authorizePath({ clientId: consentedClientId, challenge, state: 'xyz', extra }), {
        headers: { cookie },
        redirect: 'manual',
      });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toMatch(description);
      expect(location.searchParams.get('state')).toBe('xyz');
      expect(location.searchParams.get('iss')).toBe(server.url);
      expect(location.searchParams.get('code')).toBeNull();
    },
  );

  it('accepts this server’s MCP URL as the resource, with or without a trailing slash', async () => {
    for (const resource of [`${server.url}/mcp`, `${server.url}/mcp/`]) {
      await openConsent(server, cookie, { clientId, challenge, extra: { resource } });
    }
  });
});

describe('console login', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie (not Secure over http) and signs out', async () => {
    const response = await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: user.email.toUpperCase(), password: user.password }),
    });
    expect(response.status).toBe(200);
    const [setSession, setCsrf] = response.headers.getSetCookie();
    expect(setSession).toMatch(/^courtier_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    // The CSRF token for the console's script: readable, bound to the session.
    expect(setCsrf).toMatch(/^courtier_csrf=[\w-]{43}; Path=\/; SameSite=Lax; Max-Age=43200$/);
    const cookie = setSession?.split(';')[0] ?? '';
    const session = await server.request('/api/v1/console/session', { headers: { cookie } });
    expect(await session.json()).toMatchObject({
      signed_in: true,
      user: { email: user.email, role: 'admin' },
      cabinet: { id: user.cabinetId },
    });
    expect((await server.request('/api/v1/console/session', { method: 'DELETE', headers: { cookie, Origin: server.url } })).status).toBe(
      204,
    );
    const after = await server.request('/api/v1/console/session', { headers: { cookie } });
    // The session probe answers 200 either way: a 401 would be logged by the browser as an error.
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ signed_in: false });
  });

  it('marks the cookie Secure when served over https (behind a trusted TLS proxy)', async () => {
    const proxied = await startTestServer({ config: { trustProxy: ['127.0.0.1'] } });
    try {
      const someone = await createUser(proxied);
      const response = await proxied.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Proto': 'https' },
        body: JSON.stringify({ email: someone.email, password: someone.password }),
      });
      for (const line of response.headers.getSetCookie()) expect(line).toMatch(/; Secure$/);
    } finally {
      await proxied.close();
    }
  });

  it.each(['//evil.example', 'https://evil.example', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)', ''])(
    'refuses the return_to %j and sends the user to the console home',
    async (returnTo) => {
      const response = await server.request('/api/v1/console/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: user.password, return_to: returnTo }),
      });
      expect(((await response.json()) as { redirect_to: string }).redirect_to).toBe('/console/');
    },
  );

  it('keeps a same-origin return_to', async () => {
    const returnTo = '/api/v1/mcp/oauth/authorize?client_id=x&state=y';
    const response = await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: user.password, return_to: returnTo }),
    });
    expect(((await response.json()) as { redirect_to: string }).redirect_to).toBe(returnTo);
  });

  it('accepts as return_to only paths that stay on this origin (property)', () => {
    const base = 'http://courtier.invalid';
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((s) => `/${s}`),
          fc.string().map((s) => `//${s}`),
        ),
        (candidate) => {
          if (!isSafeReturnTo(candidate)) return;
          expect(new URL(candidate, base).origin).toBe(base);
          expect(candidate.startsWith('/')).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers a wrong password with 401 and throttles an account after 5 failures, even with the right password (where they came from: this machine or the network)', async () => {
    const target = await createUser(server);
    const attempt = (password: string, ip = '127.0.0.1') =>
      server.app.inject({ method: 'POST', url: '/api/v1/console/session', remoteAddress: ip, payload: { email: target.email, password } });
    for (let i = 0; i < 5; i++) {
      const response = await attempt('wrong password');
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe('invalid_credentials');
    }
    const blocked = await attempt(target.password, '127.0.0.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error).toBe('too_many_login_attempts');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Failures at this machine lock the account here; from the network it is counted apart.
    expect((await attempt(target.password, '10.0.0.9')).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) await attempt('wrong password', '10.0.0.9');
    expect((await attempt(target.password, '10.0.0.10')).statusCode).toBe(429);
    clock.advance(15 * 60_000);
    expect((await attempt(target.password)).statusCode).toBe(200);
  });

  it('throttles one address after 20 failures across accounts', async () => {
    const ip = '10.1.2.3';
    for (let i = 0; i < 20; i++) {
      const response = await server.app.inject({
        method: 'POST',
        url: '/api/v1/console/session',
        remoteAddress: ip,
        payload: { email: `nobody${i}@example.fr`, password: 'x' },
      });
      expect(response.statusCode).toBe(401);
    }
    const blocked = await server.app.inject({
      method: 'POST',
      url: '/api/v1/console/session',
      remoteAddress: ip,
      payload: { email: user.email, password: user.password },
    });
    expect(blocked.statusCode).toBe(429);
    const elsewhere = await server.app.inject({
      method: 'POST',
      url: '/api/v1/console/session',
      remoteAddress: '10.1.2.4',
      payload: { email: user.email, password: user.password },
    });
    expect(elsewhere.statusCode).toBe(200);
    clock.advance(15 * 60_000);
  });

  it('refuses a malformed sign-in body with validation_error', async () => {
    const response = await server.request('/api/v1/console/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 3 }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('validation_error');
  });
});

describe('consent', () => {
  let clientId: string;
  let cookie: string;
  const { challenge } = pkcePair();
  beforeAll(async () => {
    clientId = (await registerClient(server, { client_name: 'Claude Desktop' })).client_id;
    cookie = await signIn(server, user);
  });

  it('describes the client, the redirect host and each scope, flagging write scopes', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge, scope: 'crm:read crm:write automation:enqueue' });
    const details = await consentDetails(server, cookie, requestId);
    expect(details).toMatchObject({ client_name: 'Claude Desktop', redirect_host: '127.0.0.1:9', user: { email: user.email } });
    expect(details.scopes.map((s) => [s.scope, s.writes])).toEqual([
      ['crm:read', false],
      ['crm:write', true],
      ['automation:enqueue', true],
    ]);
    expect(details.decision_url).toBe('/api/v1/mcp/oauth/consent');
  });

  it('asks for all MCP scopes when the client names none', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge });
    expect((await consentDetails(server, cookie, requestId)).scopes.map((s) => s.scope)).toEqual([...MCP_SCOPES]);
  });

  it('refuses a decision without the CSRF token, or with the token of another request', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge });
    const otherId = await openConsent(server, cookie, { clientId, challenge });
    const other = await consentDetails(server, cookie, otherId);
    const forms: Record<string, string>[] = [
      { request_id: requestId, decision: 'allow' },
      { request_id: requestId, decision: 'allow', csrf_token: '' },
      { request_id: requestId, decision: 'allow', csrf_token: other.csrf_token },
    ];
    for (const form of forms) {
      const response = await postConsent(server, cookie, form);
      expect(response.status).toBe(403);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).toMatch(/consent page/);
    }
    // Still answerable with the right token.
    const details = await consentDetails(server, cookie, requestId);
    expect((await postConsent(server, cookie, { request_id: requestId, csrf_token: details.csrf_token, decision: 'allow' })).status).toBe(
      303,
    );
  });

  it('refuses a consent given by another signed-in user, even with a valid token of theirs', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge });
    const mallory = await createUser(server, 'Other cabinet');
    const malloryCookie = await signIn(server, mallory);
    const details = await server.request(`/api/v1/mcp/oauth/consent/${requestId}`, { headers: { cookie: malloryCookie } });
    expect(details.status).toBe(403);
    expect(((await details.json()) as { error: string }).error).toBe('consent_forbidden');
    const ownToken = (await consentDetails(server, cookie, requestId)).csrf_token;
    const response = await postConsent(server, malloryCookie, { request_id: requestId, csrf_token: ownToken, decision: 'allow' });
    expect(response.status).toBe(403);
    expect(response.headers.get('location')).toBeNull();
  });

  it('refuses a cross-site form post (Origin check)', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge });
    const details = await consentDetails(server, cookie, requestId);
    const response = await server.request('/api/v1/mcp/oauth/consent', {
      method: 'POST',
      headers: { cookie, 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
      body: new URLSearchParams({ request_id: requestId, csrf_token: details.csrf_token, decision: 'allow' }).toString(),
      redirect: 'manual',
    });
    expect(response.status).toBe(403);
  });

  it('Deny redirects with access_denied; Allow with code, state and iss; each with 303, once', async () => {
    const denyId = await openConsent(server, cookie, { clientId, challenge, state: 's1' });
    const deny = await postConsent(server, cookie, {
      request_id: denyId,
      csrf_token: (await consentDetails(server, cookie, denyId)).csrf_token,
      decision: 'deny',
    });
    expect(deny.status).toBe(303);
    const denied = new URL(deny.headers.get('location') ?? '');
    expect([denied.searchParams.get('error'), denied.searchParams.get('state'), denied.searchParams.get('iss')]).toEqual([
      'access_denied',
      's1',
      server.url,
    ]);

    const allowId = await openConsent(server, cookie, { clientId, challenge, state: 's2' });
    const csrf = (await consentDetails(server, cookie, allowId)).csrf_token;
    const allow = await postConsent(server, cookie, { request_id: allowId, csrf_token: csrf, decision: 'allow' });
    expect(allow.status).toBe(303);
    const allowed = new URL(allow.headers.get('location') ?? '');
    expect(allowed.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    expect([allowed.searchParams.get('state'), allowed.searchParams.get('iss')]).toEqual(['s2', server.url]);

    const again = await postConsent(server, cookie, { request_id: allowId, csrf_token: csrf, decision: 'allow' });
    expect(again.status).toBe(404);
  });

  it('expires an unanswered consent request after 10 minutes', async () => {
    const requestId = await openConsent(server, cookie, { clientId, challenge });
    clock.advance(601_000);
    const response = await server.request(`/api/v1/mcp/oauth/consent/${requestId}`, { headers: { cookie } });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: string }).error).toBe('consent_request_not_found');
  });
});

describe('token endpoint', () => {
  it('exchanges a code for a token pair, stored as hashes only', async () => {
    const { tokens } = await authorizeOverHttp(server, user, 'crm:read devis:read');
    expect(tokens.access_token).toMatch(/^svc_mcp_at_[A-Za-z0-9]{43}$/);
    expect(tokens.refresh_token).toMatch(/^svc_mcp_rt_[A-Za-z0-9]{43}$/);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'crm:read devis:read' });
    expect(accessValid(tokens.access_token)).toBe(true);
    const stored = server.deps.db.sqlite
      .prepare('SELECT count(*) AS n FROM oauth_tokens WHERE token_hash IN (?, ?)')
      .get(tokens.access_token, tokens.refresh_token) as { n: number };
    expect(stored.n).toBe(0);
    const dump = JSON.stringify(server.deps.db.sqlite.prepare('SELECT * FROM oauth_tokens').all());
    expect(dump).not.toContain(tokens.access_token.slice(11));
  });

  it('never writes a code, a token, a password or a session cookie to the logs', async () => {
    const { tokens, code } = await authorizeOverHttp(server, user);
    await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'x' });
    const cookie = await signIn(server, user);
    const logs = server.logs.join('');
    for (const secret of [tokens.access_token, tokens.refresh_token, code, user.password, cookie.split('=')[1] ?? 'none']) {
      expect(logs).not.toContain(secret);
    }
  });

  it('answers with no-store and RFC 6749 JSON errors', async () => {
    const client = await registerClient(server);
    const cookie = await signIn(server, user);
    const { verifier, challenge } = pkcePair();
    const code = await authorizeCode(server, cookie, { clientId: client.client_id, challenge });
    const ok = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: client.client_id,
      redirect_uri: REDIRECT,
    });
    expect(ok.headers.get('cache-control')).toBe('no-store');
    tokenResponseSchema.parse(await ok.json());
    const cases: [Record<string, string>, number, string][] = [
      [{ grant_type: 'password', client_id: client.client_id }, 400, 'unsupported_grant_type'],
      [{ client_id: client.client_id }, 400, 'invalid_request'],
      [
        { grant_type: 'authorization_code', code: 'x', code_verifier: verifier, client_id: 'nope', redirect_uri: REDIRECT },
        401,
        'invalid_client',
      ],
      [
        { grant_type: 'authorization_code', code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT },
        400,
        'invalid_request',
      ],
      [
        { grant_type: 'authorization_code', code: 'unknown', code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT },
        400,
        'invalid_grant',
      ],
    ];
    for (const [form, status, error] of cases) {
      const response = await tokenRequest(server, form);
      expect(response.status, JSON.stringify(form)).toBe(status);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(((await response.json()) as { error: string }).error).toBe(error);
    }
    const duplicated = await server.request('/api/v1/mcp/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${client.client_id}`,
    });
    expect(((await duplicated.json()) as { error: string }).error).toBe('invalid_request');
  });

  async function freshCode(scope?: string) {
    const client = await registerClient(server);
    const cookie = await signIn(server, user);
    const { verifier, challenge } = pkcePair();
    const code = await authorizeCode(server, cookie, { clientId: client.client_id, challenge, ...(scope ? { scope } : {}) });
    const exchange = (overrides: Record<string, string> = {}) =>
      tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        ...overrides,
      });
    return { client, code, verifier, exchange };
  }

  it('refuses a wrong code verifier', async () => {
    const { exchange } = await freshCode();
    const response = await exchange({ code_verifier: pkcePair().verifier });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/code_verifier/) });
    expect((await exchange()).status).toBe(200);
  });

  it('refuses a redirect URI other than the authorization request’s', async () => {
    const { exchange } = await freshCode();
    expect(((await (await exchange({ redirect_uri: 'http://127.0.0.1:10/callback' })).json()) as { error: string }).error).toBe(
      'invalid_grant',
    );
    expect(await (await exchange({ redirect_uri: '' })).json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'redirect_uri is required.',
    });
  });

  it('refuses a code presented by another client', async () => {
    const { exchange } = await freshCode();
    const other = await registerClient(server);
    expect(((await (await exchange({ client_id: other.client_id })).json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('refuses an expired code (5 minutes)', async () => {
    const { exchange } = await freshCode();
    clock.advance(301_000);
    const response = await exchange();
    expect(await response.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/expired/) });
  });

  it('revokes every token issued from a code that is replayed', async () => {
    const { exchange } = await freshCode();
    const first = tokenResponseSchema.parse(await (await exchange()).json());
    expect(accessValid(first.access_token)).toBe(true);
    const replay = await exchange();
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    expect(accessValid(first.access_token)).toBe(false);
    const refresh = await tokenRequest(server, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: (await freshCode()).client.client_id,
    });
    expect(refresh.status).toBe(400);
  });

  it('expires access tokens after an hour', async () => {
    const { tokens } = await authorizeOverHttp(server, user);
    clock.advance(3599_000);
    expect(accessValid(tokens.access_token)).toBe(true);
    clock.advance(2_000);
    expect(accessValid(tokens.access_token)).toBe(false);
  });
});

describe('refresh and revocation', () => {
  const refresh = (clientId: string, refreshToken: string, scope?: string) =>
    tokenRequest(server, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...(scope ? { scope } : {}) });

  it('rotates the refresh token; presenting the old one revokes the whole family', async () => {
    const { client, tokens } = await authorizeOverHttp(server, user);
    const response = await refresh(client.client_id, tokens.refresh_token);
    expect(response.status).toBe(200);
    const next = tokenResponseSchema.parse(await response.json());
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.scope).toBe(MCP_SCOPES.join(' '));
    expect(accessValid(next.access_token)).toBe(true);

    const replay = await refresh(client.client_id, tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    expect(accessValid(next.access_token)).toBe(false);
    expect(accessValid(tokens.access_token)).toBe(false);
    expect((await refresh(client.client_id, next.refresh_token)).status).toBe(400);
  });

  it('narrows the scope on request, and refuses an escalation', async () => {
    const { client, tokens } = await authorizeOverHttp(server, user, 'crm:read crm:write');
    const narrowed = tokenResponseSchema.parse(await (await refresh(client.client_id, tokens.refresh_token, 'crm:read')).json());
    expect(narrowed.scope).toBe('crm:read');
    const escalation = await refresh(client.client_id, narrowed.refresh_token, 'crm:read automation:enqueue');
    expect(escalation.status).toBe(400);
    expect(await escalation.json()).toMatchObject({
      error: 'invalid_scope',
      error_description: expect.stringMatching(/automation:enqueue/),
    });
    // The grant keeps its original scopes: a later refresh without scope gets them back.
    expect(tokenResponseSchema.parse(await (await refresh(client.client_id, narrowed.refresh_token)).json()).scope).toBe(
      'crm:read crm:write',
    );
  });

  it('refuses a refresh token presented by another client', async () => {
    const { tokens } = await authorizeOverHttp(server, user);
    const other = await registerClient(server);
    expect(((await (await refresh(other.client_id, tokens.refresh_token)).json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('refuses a token in use once its grant alone is revoked by another connection (the CLI’s)', async () => {
    const { tokens } = await authorizeOverHttp(server, user);
    expect(accessValid(tokens.access_token)).toBe(true);
    const revoked = server.withOtherConnection((db) =>
      db
        .prepare('UPDATE oauth_grants SET revoked_at = ? WHERE id = (SELECT grant_id FROM oauth_tokens WHERE token_hash = ?)')
        .run(clock.now(), sha256(tokens.access_token)),
    );
    expect(revoked.changes).toBe(1);
    expect(accessValid(tokens.access_token)).toBe(false);
  });

  it('refuses a token in use once its user’s grants are revoked, or deleted', async () => {
    const revokedUser = await createUser(server);
    const deletedUser = await createUser(server);
    const revoked = await authorizeOverHttp(server, revokedUser);
    const deleted = await authorizeOverHttp(server, deletedUser);
    for (const { tokens } of [revoked, deleted]) expect(accessValid(tokens.access_token)).toBe(true);
    expect(revokeGrantsOfUser(server.deps, revokedUser.userId)).toBe(1);
    forgetGrantsOfUser(server.deps, deletedUser.userId);
    expect(accessValid(revoked.tokens.access_token)).toBe(false);
    expect(accessValid(deleted.tokens.access_token)).toBe(false);
    expect(accessValid(deleted.tokens.access_token)).toBe(false);
  });

  it('revokes: 200 for anything; an access token alone; a refresh token with its access tokens', async () => {
    const revoke = (token: string) =>
      server.request('/api/v1/mcp/oauth/revoke', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
    expect((await revoke('svc_mcp_at_unknown')).status).toBe(200);
    expect((await revoke('anything at all')).status).toBe(200);

    // Each token is used first: the check keeps a token's record after its first use, and must
    // still read its revocation on every request.
    const first = await authorizeOverHttp(server, user);
    expect(accessValid(first.tokens.access_token)).toBe(true);
    expect((await revoke(first.tokens.access_token)).status).toBe(200);
    expect(accessValid(first.tokens.access_token)).toBe(false);
    expect((await refresh(first.client.client_id, first.tokens.refresh_token)).status).toBe(200);

    const second = await authorizeOverHttp(server, user);
    expect(accessValid(second.tokens.access_token)).toBe(true);
    expect((await revoke(second.tokens.refresh_token)).status).toBe(200);
    expect(accessValid(second.tokens.access_token)).toBe(false);
    expect((await refresh(second.client.client_id, second.tokens.refresh_token)).status).toBe(400);

    const missing = await server.request('/api/v1/mcp/oauth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(missing.status).toBe(400);
  });
});
