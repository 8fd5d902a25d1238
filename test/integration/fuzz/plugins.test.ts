/**
 * What the request plugins (server/plugins/) answer, in the one error shape: 405 with Allow, the
 * schema's validation_error naming each path, the API-key checks, the Host/Origin/Sec-Fetch-Site
 * guards and the rate limit. The apps are test/helpers/fuzz.ts's.
 */
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../../server/app.js';
import { createLogger } from '../../../server/platform/logging.js';
import { expectError } from '../../helpers/api.js';
import {
  ALLOWED_ORIGIN,
  bodyApp,
  call,
  JSON_TYPE,
  keys,
  KNOWN_THING_ID,
  ME_URL,
  server,
  THINGS_URL,
  useFuzzApps,
  WEBHOOKS,
} from '../../helpers/fuzz.js';

useFuzzApps();

describe('explicit mappings', () => {
  it('POST on /api/v1/public/me (GET only) is 405 with Allow: GET, whatever the body', async () => {
    const res = await call(server.app, 'POST', ME_URL, { 'content-type': 'text/plain', 'x-api-key': keys.full }, 'hello');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET');
  });

  it('a body that breaks the schema is 400 validation_error with one issue per problem', async () => {
    const res = expectError(
      await call(bodyApp, 'POST', THINGS_URL, { ...JSON_TYPE, 'x-api-key': keys.full }, '{"name":5,"tags":"x"}'),
      400,
      'validation_error',
    );
    expect(res.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'body.name' }), expect.objectContaining({ path: 'body.tags' })]),
    );
  });

  it('a bad query or path parameter is 400 validation_error naming query.* or path.*', async () => {
    const query = expectError(
      await call(bodyApp, 'GET', `${THINGS_URL}/${KNOWN_THING_ID}?limit=abc`, { 'x-api-key': keys.full }),
      400,
      'validation_error',
    );
    expect(query.details).toEqual([expect.objectContaining({ path: 'query.limit' })]);
    const path = expectError(await call(bodyApp, 'GET', `${THINGS_URL}/not-a-uuid`, { 'x-api-key': keys.full }), 400, 'validation_error');
    expect(path.details).toEqual([expect.objectContaining({ path: 'path.id' })]);
  });

  it('credentials: missing, malformed, unknown, revoked, IP-locked, lacking the scope', async () => {
    const post = (headers: Record<string, string>) => call(bodyApp, 'POST', THINGS_URL, { ...JSON_TYPE, ...headers }, '{"name":"x"}');
    expectError(await post({}), 401, 'missing_credentials');
    expectError(await post({ authorization: `Basic ${keys.full}` }), 401, 'missing_credentials');
    expectError(await post({ 'x-api-key': `${keys.full}x` }), 401, 'invalid_api_key');
    expectError(await post({ authorization: `Bearer ${keys.revoked}` }), 401, 'api_key_revoked');
    expectError(await post({ 'x-api-key': keys.iplocked }), 403, 'ip_not_allowed');
    const scope = expectError(await post({ 'x-api-key': keys.noscope }), 403, 'insufficient_scope');
    expect(scope.details).toEqual({ required_scope: 'crm:write' });
    expect(
      (await call(bodyApp, 'POST', `${THINGS_URL}?dry_run=true`, { ...JSON_TYPE, 'x-api-key': keys.full }, '{"name":"x"}')).status,
    ).toBe(201);
  });

  it('Host, Origin and Sec-Fetch-Site guards answer 421 and 403 with the error body; an allowed preflight is 204', async () => {
    expectError(await call(server.app, 'GET', '/healthz', { host: 'evil.example' }), 421, 'misdirected_request');
    expectError(await call(server.app, 'GET', '/healthz', { origin: 'https://evil.example' }), 403, 'origin_not_allowed');
    expectError(
      await call(server.app, 'GET', '/healthz', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }),
      403,
      'origin_not_allowed',
    );
    const preflight = await call(server.app, 'OPTIONS', ME_URL, { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'GET' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ALLOWED_ORIGIN);
  });

  it('the rate limit answers 429 rate_limited with Retry-After', async () => {
    const tiny = await buildApp(
      { ...server.deps, config: { ...server.deps.config, rateLimitPerMinute: 2 } },
      { logger: createLogger({ level: 'silent' }), webhooks: WEBHOOKS },
    );
    try {
      await tiny.ready();
      for (let i = 0; i < 2; i += 1) expect((await call(tiny, 'GET', ME_URL, { 'x-api-key': keys.full })).status).toBe(200);
      const limited = await call(tiny, 'GET', ME_URL, { 'x-api-key': keys.full });
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await tiny.close();
    }
  });
});
