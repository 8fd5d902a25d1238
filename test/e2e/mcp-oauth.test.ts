// @module-tag browser
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
  auth as authV2,
} from '@modelcontextprotocol/client';
import { auth as authV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUser,
  launchChromium,
  signInAndConsent,
  startCallbackServer,
  tokenRequest,
  type CallbackServer,
  type TestUser,
} from '../helpers/oauth.js';
import { postMcp } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * What an MCP client keeps between runs: its registration, its tokens, the PKCE verifier of the
 * authorization in progress. Written against the provider interface both SDK generations share.
 */
class MemoryOAuthProvider {
  clientInfo: Record<string, unknown> | undefined;
  saved: { access_token: string; refresh_token?: string; scope?: string; expires_in?: number; token_type: string } | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  discovery: unknown;

  constructor(
    private readonly redirect: string,
    private readonly name: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return 'opaque-state-value';
  }
  clientInformation() {
    return this.clientInfo as { client_id: string } | undefined;
  }
  saveClientInformation(info: unknown): void {
    this.clientInfo = info as Record<string, unknown>;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: unknown): void {
    this.saved = tokens as MemoryOAuthProvider['saved'];
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  /** Kept with the verifier, so that the 2.x client can check the callback against the server it discovered (SEP-2352). */
  saveDiscoveryState(state: unknown): void {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
}

let server: TestServer;
let browser: Browser;
let callback: CallbackServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await createUser(server, 'Cabinet Dupont');
  browser = await launchChromium();
  callback = await startCallbackServer();
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await server?.close();
});

function mcpUrl(): URL {
  return new URL(`${server.url}/mcp`);
}

/** The assistant opens the authorization URL; the person signs in and clicks Allow; the browser lands on the callback. */
async function personAuthorizes(provider: MemoryOAuthProvider): Promise<URL> {
  const authorizationUrl = provider.authorizationUrl;
  if (!authorizationUrl) throw new Error('the client did not start an authorization');
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${server.url}/api/v1/mcp/oauth/authorize`);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorizationUrl.searchParams.get('resource')).toBe(`${server.url}/mcp`);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const landed = callback.next();
    await signInAndConsent(page, authorizationUrl.href, user);
    const url = await landed;
    expect(url.searchParams.get('iss')).toBe(server.url);
    expect(url.searchParams.get('state')).toBe('opaque-state-value');
    return url;
  } finally {
    await context.close();
  }
}

function whoamiOf(result: unknown): Record<string, unknown> {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown>;
}

describe('the official SDK 1.x client does the whole flow by itself', () => {
  it('401 → discovery → registration → browser login and consent → tokens → tools → refresh → rotation kills the family → revoke', async () => {
    const provider = new MemoryOAuthProvider(callback.url, 'SDK 1.x assistant');
    const client = new ClientV1({ name: 'courtier-e2e', version: '1.0.0' });
    await expect(client.connect(new TransportV1(mcpUrl(), { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedV1);
    expect(provider.clientInfo?.client_id).toBeTruthy();

    const landed = await personAuthorizes(provider);
    const transport = new TransportV1(mcpUrl(), { authProvider: provider });
    await transport.finishAuth(landed.searchParams.get('code') ?? '');
    const first = provider.saved;
    expect(first?.access_token).toMatch(/^svc_mcp_at_/);
    expect(first?.refresh_token).toMatch(/^svc_mcp_rt_/);

    await client.connect(new TransportV1(mcpUrl(), { authProvider: provider }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(['whoami', 'list_opportunities', 'create_opportunity', 'price_quote', 'get_devis_pdf_link']),
    );
    const me = whoamiOf(await client.callTool({ name: 'whoami', arguments: {} }));
    expect(me).toMatchObject({ cabinet: { id: user.cabinetId, name: 'Cabinet Dupont' }, client: { client_name: 'SDK 1.x assistant' } });
    await client.close();

    // Refresh: the SDK uses the stored refresh token and gets a new pair.
    expect(await authV1(provider as never, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    const second = provider.saved;
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    expect((await postMcp(server, second?.access_token ?? '')).status).toBe(200);

    // The old refresh token now fails, and presenting it revokes the whole family.
    const stale = await tokenRequest(server, {
      grant_type: 'refresh_token',
      refresh_token: first?.refresh_token ?? '',
      client_id: String(provider.clientInfo?.client_id),
    });
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as { error: string }).error).toBe('invalid_grant');
    const dead = await postMcp(server, second?.access_token ?? '');
    expect(dead.status).toBe(401);
    expect(dead.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);

    const revoke = await server.request('/api/v1/mcp/oauth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second?.refresh_token ?? '', client_id: String(provider.clientInfo?.client_id) }).toString(),
    });
    expect(revoke.status).toBe(200);
  });
});

describe('the official SDK 2.x client does the whole flow by itself', () => {
  it('401 → discovery → registration → browser login and consent → tokens (iss checked) → tools → refresh → revoke', async () => {
    const provider = new MemoryOAuthProvider(callback.url, 'SDK 2.x assistant');
    const client = new ClientV2({ name: 'courtier-e2e', version: '2.0.0' });
    await expect(client.connect(new TransportV2(mcpUrl(), { authProvider: provider as never }))).rejects.toBeInstanceOf(UnauthorizedV2);

    const landed = await personAuthorizes(provider);
    // The 2.x client checks iss against the issuer it discovered (RFC 9207) before redeeming the code.
    await new TransportV2(mcpUrl(), { authProvider: provider as never }).finishAuth(landed.searchParams);
    const first = provider.saved;
    expect(first?.access_token).toMatch(/^svc_mcp_at_/);

    await client.connect(new TransportV2(mcpUrl(), { authProvider: provider as never }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('whoami');
    const me = whoamiOf(await client.callTool({ name: 'whoami', arguments: {} }));
    expect(me).toMatchObject({ cabinet: { id: user.cabinetId }, client: { client_name: 'SDK 2.x assistant' } });
    await client.close();

    expect(await authV2(provider as never, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    const second = provider.saved;
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    expect((await postMcp(server, second?.access_token ?? '')).status).toBe(200);

    const revoke = await server.request('/api/v1/mcp/oauth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second?.refresh_token ?? '' }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect((await postMcp(server, second?.access_token ?? '')).status).toBe(401);
  });
});

describe('in the browser', () => {
  it('Deny sends the person back to the client with access_denied', async () => {
    const provider = new MemoryOAuthProvider(callback.url, 'Denied assistant');
    await expect(
      new ClientV1({ name: 'x', version: '1' }).connect(new TransportV1(mcpUrl(), { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedV1);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const landed = callback.next();
      await signInAndConsent(page, provider.authorizationUrl?.href ?? '', user, 'Deny');
      const url = await landed;
      expect(url.searchParams.get('error')).toBe('access_denied');
      expect(url.searchParams.get('code')).toBeNull();
    } finally {
      await context.close();
    }
  });

  it('shows the consent in French, with write scopes flagged, to a French browser', async () => {
    const provider = new MemoryOAuthProvider(callback.url, 'Assistant français');
    await expect(
      new ClientV1({ name: 'x', version: '1' }).connect(new TransportV1(mcpUrl(), { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedV1);
    const context = await browser.newContext({ locale: 'fr-FR' });
    try {
      const page = await context.newPage();
      await page.goto(provider.authorizationUrl?.href ?? '');
      await page.getByLabel(/Courriel|E-mail/).fill(user.email);
      await page.getByLabel('Mot de passe').fill(user.password);
      await page.getByRole('button', { name: 'Se connecter' }).click();
      await page.getByRole('button', { name: 'Autoriser' }).waitFor();
      const text = await page.locator('body').innerText();
      expect(text).toContain('Assistant français');
      expect(text).toContain('127.0.0.1');
      expect(text).toMatch(/Peut modifier vos données/);
      const landed = callback.next();
      await page.getByRole('button', { name: 'Refuser' }).click();
      expect((await landed).searchParams.get('error')).toBe('access_denied');
    } finally {
      await context.close();
    }
  });

  it('a wrong password shows an error and stays on the login page', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/console/login`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/wrong/);
      expect(new URL(page.url()).pathname).toBe('/console/login');
    } finally {
      await context.close();
    }
  });
});
