import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  consentRequestSchema,
  registeredClientSchema,
  tokenResponseSchema,
  type RegisteredClient,
  type TokenResponse,
} from '../../shared/oauth.js';
import { BROWSER_ARGS } from '../../server/robots/browser.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { consoleClient } from './console.js';
import type { TestServer } from './server.js';

export const PASSWORD = 'correct horse battery';

export interface TestUser {
  email: string;
  password: string;
  cabinetId: string;
  userId: string;
}

export async function createUser(server: TestServer, cabinet = 'Cabinet OAuth'): Promise<TestUser> {
  const email = `broker-${randomUUID()}@example.fr`;
  const { cabinet_id, user_id } = await initCabinet(server.deps, { cabinet, email, password: PASSWORD });
  return { email, password: PASSWORD, cabinetId: cabinet_id, userId: user_id };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerClient(server: TestServer, body: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const response = await server.request('/api/v1/mcp/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test assistant', redirect_uris: ['http://127.0.0.1:9/callback'], ...body }),
  });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${await response.text()}`);
  return registeredClientSchema.parse(await response.json());
}

/** Signs in through the console API; returns the Cookie header value. */
export async function signIn(server: TestServer, user: Pick<TestUser, 'email' | 'password'>): Promise<string> {
  return (await consoleClient(server, user)).cookie;
}

export interface AuthorizeInput {
  clientId: string;
  redirectUri?: string;
  challenge: string;
  scope?: string;
  state?: string;
  extra?: Record<string, string>;
}

export function authorizePath(input: AuthorizeInput): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: input.clientId,
    redirect_uri: input.redirectUri ?? 'http://127.0.0.1:9/callback',
    code_challenge: input.challenge,
    code_challenge_method: 'S256',
    state: input.state ?? 'state-123',
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...input.extra,
  });
  return `/api/v1/mcp/oauth/authorize?${params.toString()}`;
}

/** GET authorize with a session: the consent request id it opened. */
export async function openConsent(server: TestServer, cookie: string, input: AuthorizeInput): Promise<string> {
  const response = await server.request(authorizePath(input), { headers: { cookie }, redirect: 'manual' });
  const location = response.headers.get('location') ?? '';
  const match = /^\/console\/consent\?request_id=([\w-]+)$/.exec(location);
  if (response.status !== 302 || !match?.[1]) throw new Error(`authorize did not open consent: ${response.status} ${location}`);
  return match[1];
}

export async function consentDetails(server: TestServer, cookie: string, requestId: string) {
  const response = await server.request(`/api/v1/mcp/oauth/consent/${requestId}`, { headers: { cookie } });
  if (response.status !== 200) throw new Error(`consent details: ${response.status} ${await response.text()}`);
  return consentRequestSchema.parse(await response.json());
}

/** Posts the consent form as the page would; returns the raw response (303 on success). */
export function postConsent(server: TestServer, cookie: string, form: Record<string, string>): Promise<Response> {
  return server.request('/api/v1/mcp/oauth/consent', {
    method: 'POST',
    headers: { cookie, 'Content-Type': 'application/x-www-form-urlencoded', Origin: server.url },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
}

/** Authorize, consent with Allow, and return the code from the redirect. */
export async function authorizeCode(server: TestServer, cookie: string, input: AuthorizeInput): Promise<string> {
  const requestId = await openConsent(server, cookie, input);
  const details = await consentDetails(server, cookie, requestId);
  const response = await postConsent(server, cookie, { request_id: requestId, csrf_token: details.csrf_token, decision: 'allow' });
  const code = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('code');
  if (response.status !== 303 || !code) throw new Error(`consent failed: ${response.status}`);
  return code;
}

export function tokenRequest(server: TestServer, form: Record<string, string>): Promise<Response> {
  return server.request('/api/v1/mcp/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

export interface Authorized {
  client: RegisteredClient;
  tokens: TokenResponse;
  code: string;
  verifier: string;
}

/** The whole flow over HTTP, without a browser: for tests of the rules after the consent. */
export async function authorizeOverHttp(server: TestServer, user: TestUser, scope?: string): Promise<Authorized> {
  const client = await registerClient(server);
  const cookie = await signIn(server, user);
  const { verifier, challenge } = pkcePair();
  const code = await authorizeCode(server, cookie, { clientId: client.client_id, challenge, ...(scope ? { scope } : {}) });
  const response = await tokenRequest(server, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: client.client_id,
    redirect_uri: 'http://127.0.0.1:9/callback',
  });
  if (response.status !== 200) throw new Error(`token exchange failed: ${response.status} ${await response.text()}`);
  return { client, tokens: tokenResponseSchema.parse(await response.json()), code, verifier };
}

/** A loopback redirect receiver, as a desktop MCP client runs one. */
export interface CallbackServer {
  url: string;
  /** The next callback URL the browser lands on. */
  next(): Promise<URL>;
  /** The Referer header of every callback request so far, in order (undefined when none was sent). */
  referers: (string | undefined)[];
  close(): Promise<void>;
}

export async function startCallbackServer(): Promise<CallbackServer> {
  const waiting: ((url: URL) => void)[] = [];
  const received: URL[] = [];
  const referers: (string | undefined)[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
    // Only the redirect URI counts as a callback (not, say, a favicon the browser asks for).
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    referers.push(request.headers.referer);
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<link rel="icon" href="data:,"><p>You can close this window.</p>');
    const resolve = waiting.shift();
    if (resolve) resolve(url);
    else received.push(url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    referers,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.COURTIER_BROWSER_PATH ?? '/usr/bin/chromium', headless: true, args: BROWSER_ARGS });
}

/** What a person does in the browser: sign in on the console's page, then click Allow or Deny. */
export async function signInAndConsent(
  page: Page,
  authorizationUrl: string,
  user: Pick<TestUser, 'email' | 'password'>,
  decision: 'Allow' | 'Deny' = 'Allow',
): Promise<void> {
  await page.goto(authorizationUrl);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: decision }).click();
}
