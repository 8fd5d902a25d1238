/**
 * The JSON body parser (server/platform/http/json-body.ts) as the fuzz found it must answer: malformed JSON,
 * other media types, sizes around the 1 MiB limit and prototype poisoning, on a throwaway route
 * without auth and on a real catalogue route. The apps are test/helpers/fuzz.ts's.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ENDPOINTS } from '../../../shared/catalogue.js';
import { PUBLIC_API_PREFIX } from '../../../shared/endpoint.js';
import { BODY_LIMIT_BYTES } from '../../../server/app.js';
import { expectError } from '../../helpers/api.js';
import { bodyApp, call, ECHO_URL, FUZZ_PREFIX, JSON_TYPE, keys, server, useFuzzApps } from '../../helpers/fuzz.js';

useFuzzApps();

/** The catalogue as it stands: a real POST route with a body and no path parameter, if there is one yet. */
const catalogueBodyRoute = PUBLIC_ENDPOINTS.find((e) => e.method === 'POST' && e.body !== undefined && !e.path.includes('{'));

interface BodyTarget {
  label: string;
  app: () => FastifyInstance;
  url: string;
  headers: () => Record<string, string>;
}
/** Body mappings are checked on the throwaway route (no auth) and on a real catalogue route (with a key). */
const BODY_TARGETS: BodyTarget[] = [
  { label: `throwaway POST ${FUZZ_PREFIX}/echo`, app: () => bodyApp, url: ECHO_URL, headers: () => ({}) },
  ...(catalogueBodyRoute
    ? [
        {
          label: `POST ${catalogueBodyRoute.path}`,
          app: () => server.app,
          url: PUBLIC_API_PREFIX + catalogueBodyRoute.path,
          headers: () => ({ 'x-api-key': keys.full }),
        },
      ]
    : []),
];

describe('explicit mappings', () => {
  it('a valid body passes (the throwaway route works)', async () => {
    const ok = await call(bodyApp, 'POST', ECHO_URL, { 'content-type': 'application/json; charset=utf-8' }, '{"name":"Dupont"}');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ length: 6 });
  });

  describe.each(BODY_TARGETS)('body mappings on $label', ({ app, url, headers }) => {
    it.each([
      ['truncated', '{"name":'],
      ['trailing comma', '{"name":"x",}'],
      ['single quotes', "{'name':'x'}"],
      ['two documents', '{"name":"x"}{"name":"y"}'],
      ['bare word', 'nope'],
      ['whitespace only', '  '],
      ['unbalanced nesting', '['.repeat(10_000)],
    ])('malformed JSON (%s) is 400 invalid_json', async (_label, body) => {
      expectError(await call(app(), 'POST', url, { ...headers(), ...JSON_TYPE }, body), 400, 'invalid_json');
    });

    it('a body shorter than its Content-Length is 400 invalid_json, not a hang or a 500', async () => {
      expectError(
        await call(app(), 'POST', url, { ...headers(), ...JSON_TYPE, 'content-length': '50' }, '{"name":"x"}'),
        400,
        'invalid_json',
      );
    });

    it.each([
      ['text/plain', 'text/plain'],
      ['text/plain with charset', 'text/plain; charset=utf-8'],
      ['form', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=x'],
      ['octet-stream', 'application/octet-stream'],
      ['garbage', 'garbage'],
      ['empty', ''],
    ])('a %s body is 415 unsupported_media_type', async (_label, type) => {
      expectError(await call(app(), 'POST', url, { ...headers(), 'content-type': type }, '{"name":"x"}'), 415, 'unsupported_media_type');
    });

    it('a body of 1 MiB + 1 byte is 413 payload_too_large; exactly 1 MiB is parsed', async () => {
      const over = Buffer.from(`{"name":"${'x'.repeat(BODY_LIMIT_BYTES + 1 - 11)}"}`);
      expect(over.length).toBe(BODY_LIMIT_BYTES + 1);
      expectError(await call(app(), 'POST', url, { ...headers(), ...JSON_TYPE }, over), 413, 'payload_too_large');

      const atLimit = Buffer.from(`{"name":"${'x'.repeat(BODY_LIMIT_BYTES - 11)}"}`);
      expect(atLimit.length).toBe(BODY_LIMIT_BYTES);
      // Parsed, then refused by the schema: a 400, not a 413.
      expectError(await call(app(), 'POST', url, { ...headers(), ...JSON_TYPE }, atLimit), 400, 'validation_error');
    });

    it('a Content-Length over 1 MiB is 413 before the body is read', async () => {
      const res = await call(
        app(),
        'POST',
        url,
        { ...headers(), ...JSON_TYPE, 'content-length': String(BODY_LIMIT_BYTES + 1) },
        '{"name":"x"}',
      );
      expectError(res, 413, 'payload_too_large');
    });

    it.each([
      ['__proto__ at the top', '{"__proto__":{"polluted":true}}'],
      ['__proto__ next to valid fields', '{"name":"x","__proto__":{"polluted":true}}'],
      ['__proto__ nested', '{"name":"x","meta":{"a":[{"__proto__":{"polluted":true}}]}}'],
      ['__proto__ escaped', '{"\\u005f_proto__":{"polluted":true}}'],
      ['constructor.prototype', '{"constructor":{"prototype":{"polluted":true}}}'],
      ['constructor.prototype nested in arrays', '[[{"constructor":{"prototype":{"polluted":true}}}]]'],
    ])('prototype poisoning (%s) is 400 invalid_json, and pollutes nothing', async (_label, body) => {
      expectError(await call(app(), 'POST', url, { ...headers(), ...JSON_TYPE }, body), 400, 'invalid_json');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  it('an empty body with Content-Type: application/json counts as no body: the schema decides (400 validation_error)', async () => {
    const res = expectError(await call(bodyApp, 'POST', ECHO_URL, { ...JSON_TYPE, 'content-length': '0' }), 400, 'validation_error');
    expect(res.details).toEqual([expect.objectContaining({ path: 'body' })]);
  });
});
