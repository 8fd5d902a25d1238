import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meResponseSchema } from '../../shared/api-keys.js';
import { errorBodySchema } from '../../shared/errors.js';
import { defineEndpoint } from '../../shared/endpoint.js';
import { listApiKeys, revokeApiKey } from '../../server/api-keys/service.js';
import { registerEndpoint } from '../../server/platform/http/endpoint.js';
import { expectError } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let cabinetId: string;

beforeAll(async () => {
  server = await startTestServer({
    clock,
    config: { rateLimitPerMinute: 5 },
    // A route that declares a scope, to exercise the scope check independently of the domain modules.
    beforeListen: (app) =>
      registerEndpoint(
        app,
        defineEndpoint({
          method: 'GET',
          path: '/test-scoped',
          operationId: 't',
          summary: 't',
          tag: 't',
          auth: 'api_key',
          scope: 'crm:write',
          responses: { 200: { description: 'ok', schema: z.object({ ok: z.boolean() }) } },
          errors: [],
        }),
        () => ({ ok: true }),
      ),
  });
  cabinetId = await server.createCabinet();
});
afterAll(() => server.close());

async function me(headers: Record<string, string>) {
  const res = await server.request('/api/v1/public/me', { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('GET /me and API key authentication', () => {
  it('answers the contract object with X-API-Key and with Bearer', async () => {
    const key = server.createKey(cabinetId, { scopes: ['crm:read'], environment: 'test' });
    for (const headers of [{ 'X-API-Key': key.key }, { Authorization: `Bearer ${key.key}` }] as Record<string, string>[]) {
      const res = await me(headers);
      expect(res.status).toBe(200);
      const body = meResponseSchema.strict().parse(res.body);
      expect(body).toMatchObject({ key_id: key.key_id, cabinet_id: cabinetId, scopes: ['crm:read'], environment: 'test' });
      expect(Object.keys(body.rate_limit).sort()).toEqual(['limit', 'remaining', 'reset_at_ts']);
    }
    expect(key.key).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
  });

  it('needs no particular scope', async () => {
    const key = server.createKey(cabinetId, { scopes: ['webhooks:manage'] });
    expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    expect(key.key).toMatch(/^svc_prod_[0-9A-Za-z]{40}$/);
  });

  it('401 missing_credentials without a key or with another scheme', async () => {
    expectError(await me({}), 401, 'missing_credentials');
    expectError(await me({ Authorization: 'Basic dXNlcjpwYXNz' }), 401, 'missing_credentials');
  });

  it('401 invalid_api_key for an unknown or mangled key', async () => {
    const key = server.createKey(cabinetId);
    // Its last character changed (a key that ends in x gets a y: one in 62 does).
    expectError(await me({ 'X-API-Key': `${key.key.slice(0, -1)}${key.key.endsWith('x') ? 'y' : 'x'}` }), 401, 'invalid_api_key');
    expectError(await me({ 'X-API-Key': 'svc_prod_short' }), 401, 'invalid_api_key');
    expectError(await me({ Authorization: 'Bearer nonsense' }), 401, 'invalid_api_key');
  });

  it('401 api_key_revoked once revoked', async () => {
    const key = server.createKey(cabinetId);
    revokeApiKey(server.deps, cabinetId, key.key_id);
    const error = expectError(await me({ 'X-API-Key': key.key }), 401, 'api_key_revoked');
    expect(error.message).toMatch(/revoked/);
  });

  // The check keeps what never changes in a key's row after its first use; its revocation and
  // its very existence are read on every request.
  it('a key in use is refused on the next request once revoked by another connection, or deleted', async () => {
    const revoked = server.createKey(cabinetId);
    const deleted = server.createKey(cabinetId);
    for (const key of [revoked, deleted]) expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    server.withOtherConnection((db) => {
      db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(clock.now(), revoked.key_id);
      db.prepare('DELETE FROM api_keys WHERE id = ?').run(deleted.key_id);
    });
    expectError(await me({ 'X-API-Key': revoked.key }), 401, 'api_key_revoked');
    expectError(await me({ 'X-API-Key': deleted.key }), 401, 'invalid_api_key');
    expectError(await me({ 'X-API-Key': deleted.key }), 401, 'invalid_api_key');
  });

  it('writes last_used_at at most once a minute per key', async () => {
    const key = server.createKey(cabinetId);
    const lastUsed = () => listApiKeys(server.deps, cabinetId).find((k) => k.key_id === key.key_id)?.last_used_at;
    expect(lastUsed()).toBeNull();
    expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    const firstUse = new Date(clock.now()).toISOString();
    expect(lastUsed()).toBe(firstUse);
    clock.advance(59_000);
    expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    expect(lastUsed()).toBe(firstUse);
    clock.advance(1_000);
    expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    expect(lastUsed()).toBe(new Date(clock.now()).toISOString());
  });

  it('401 api_key_expired after its expiry (injected clock)', async () => {
    const key = server.createKey(cabinetId, { expires_at: new Date(clock.now() + 60_000).toISOString() });
    expect((await me({ 'X-API-Key': key.key })).status).toBe(200);
    clock.advance(61_000);
    expectError(await me({ 'X-API-Key': key.key }), 401, 'api_key_expired');
  });

  it('403 ip_not_allowed outside the allowlist; IPv4 and IPv6 CIDRs both accepted', async () => {
    const outside = server.createKey(cabinetId, { ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'] });
    expectError(await me({ 'X-API-Key': outside.key }), 403, 'ip_not_allowed');
    expectError(await me({ 'X-API-Key': outside.key }), 403, 'ip_not_allowed');
    const inside = server.createKey(cabinetId, { ip_allowlist: ['127.0.0.0/8', '::1/128'] });
    expect((await me({ 'X-API-Key': inside.key })).status).toBe(200);
  });

  it('403 insufficient_scope names the scope the route needs', async () => {
    const key = server.createKey(cabinetId, { scopes: ['crm:read'] });
    const res = await server.request('/api/v1/public/test-scoped', { headers: { 'X-API-Key': key.key } });
    expect(res.status).toBe(403);
    const body = errorBodySchema.parse(await res.json());
    expect(body.error).toBe('insufficient_scope');
    expect(body.message).toContain('crm:write');
    expect(body.details).toEqual({ required_scope: 'crm:write' });
    const writer = server.createKey(cabinetId, { scopes: ['crm:write'] });
    expect((await server.request('/api/v1/public/test-scoped', { headers: { 'X-API-Key': writer.key } })).status).toBe(200);
  });
});

describe('rate limit per key', () => {
  it('429 rate_limited with Retry-After and RateLimit headers, and /me reports the same numbers', async () => {
    clock.set(Date.UTC(2026, 10, 22, 10, 0, 10));
    const key = server.createKey(cabinetId);
    // Each test above used its own key, so this one starts with a full budget.
    const headers = { 'X-API-Key': key.key };
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await me(headers);
      expect(res.status).toBe(200);
      const body = meResponseSchema.parse(res.body);
      seen.push(body.rate_limit.remaining);
      expect(body.rate_limit.limit).toBe(5);
      expect(body.rate_limit.reset_at_ts).toBe(Date.UTC(2026, 10, 22, 10, 1, 0) / 1000);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(body.rate_limit.remaining));
      expect(res.headers.get('ratelimit-reset')).toBe('50');
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const refused = await me(headers);
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('50');
    // Another key has its own budget.
    expect((await me({ 'X-API-Key': server.createKey(cabinetId).key })).status).toBe(200);
    clock.advance(50_000);
    expect((await me(headers)).status).toBe(200);
  });
});
