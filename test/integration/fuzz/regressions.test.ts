/**
 * Minimal reproductions of what the fuzz (properties.test.ts) found: each was a 5xx or a body outside
 * the error shape. The apps are test/helpers/fuzz.ts's.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ENDPOINTS } from '../../../shared/catalogue.js';
import { PUBLIC_API_PREFIX } from '../../../shared/endpoint.js';
import { ERROR_STATUS, type ErrorCode } from '../../../shared/errors.js';
import { expectError } from '../../helpers/api.js';
import {
  ABSENT_ID,
  bodyApp,
  call,
  checkOutcome,
  JSON_TYPE,
  keys,
  ME_URL,
  port,
  preview,
  server,
  THINGS_URL,
  useFuzzApps,
  type Outcome,
} from '../../helpers/fuzz.js';

useFuzzApps();

const byOperation = (id: string) => PUBLIC_ENDPOINTS.find((e) => e.operationId === id);

// ---------------------------------------------------------------------------------------------
// Regressions: minimal reproductions of counterexamples these properties found (all were a 5xx or
// a body outside the error shape), with the answer each should get.
// ---------------------------------------------------------------------------------------------

/** Writes raw bytes on a fresh connection and parses whatever comes back (until the server closes). */
function rawExchange(request: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      const head = split < 0 ? raw : raw.slice(0, split);
      let body = split < 0 ? '' : raw.slice(split + 4);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
        let decoded = '';
        let rest = body;
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = eol < 0 ? 0 : parseInt(rest.slice(0, eol), 16);
          if (!(size > 0)) break;
          decoded += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        body = decoded;
      }
      resolve({
        status: Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers,
        body: Buffer.from(body, 'latin1').toString('utf8'),
      });
    });
  });
}

async function expectRawError(request: string, code: ErrorCode): Promise<void> {
  const outcome = await rawExchange(request);
  checkOutcome(request.slice(0, request.indexOf(' ')), outcome, () =>
    [`  request (raw): ${preview(request, 300)}`, `  response: ${outcome.status}`, `    body: ${preview(outcome.body, 500)}`].join('\n'),
  );
  expect(outcome.status).toBe(ERROR_STATUS[code]);
  expect(JSON.parse(outcome.body)).toMatchObject({ error: code });
}

const createClientRoute = byOperation('createClient');
const createDevisRoute = byOperation('createDevis');
/** A GET route of the catalogue with a path parameter, else the throwaway one. */
const paramRoute = PUBLIC_ENDPOINTS.find((e) => e.method === 'GET' && /\{[^}]+\}/.test(e.path));

describe('regressions found by the fuzz', () => {
  it('QUERY without Content-Type (Fastify’s FST_ERR_ROUTE_MISSING_CONTENT_TYPE) is 400 bad_request, not a 500', async () => {
    expectError(await call(server.app, 'QUERY', ME_URL), 400, 'bad_request');
  });

  it('a path with an invalid percent-encoding (FST_ERR_BAD_URL) is 400 bad_request in the error shape', async () => {
    expectError(await call(server.app, 'GET', `${PUBLIC_API_PREFIX}/%zz`), 400, 'bad_request');
    expectError(await call(server.app, 'GET', `${PUBLIC_API_PREFIX}/%80%00`), 400, 'bad_request');
  });

  it('a path parameter over maxParamLength (FST_ERR_MAX_PARAM_LENGTH) is 414 uri_too_long in the error shape', async () => {
    const url = paramRoute
      ? PUBLIC_API_PREFIX + paramRoute.path.replace(/\{[^}]+\}/g, 'a'.repeat(201))
      : `${THINGS_URL}/${'a'.repeat(201)}`;
    expectError(await call(paramRoute ? server.app : bodyApp, 'GET', url, { 'x-api-key': keys.full }), 414, 'uri_too_long');
  });

  describe.skipIf(!createDevisRoute || !createClientRoute)('deeply nested JSON in a free-form field (POST /devis dicData)', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    const devisBody = (clientId: string, depth: number) =>
      `{"client_id":"${clientId}","compagnie":"sandbox","produit":"auto","dicData":{"x":${nested(depth)}}}`;
    const devisUrl = PUBLIC_API_PREFIX + (createDevisRoute?.path ?? '');

    it('with an Idempotency-Key is 400 invalid_json (canonicalJson used to overflow the stack: 500)', async () => {
      const headers = { ...JSON_TYPE, 'x-api-key': keys.full, 'idempotency-key': 'deep-1' };
      expectError(await call(server.app, 'POST', devisUrl, headers, devisBody(ABSENT_ID, 20_000)), 400, 'invalid_json');
    });

    it('for an existing client is 400 invalid_json (JSON.stringify of dicData used to overflow the stack: 500)', async () => {
      const client = await call(
        server.app,
        'POST',
        PUBLIC_API_PREFIX + (createClientRoute?.path ?? ''),
        { ...JSON_TYPE, 'x-api-key': keys.full },
        '{"last_name":"Dupont"}',
      );
      expect(client.status).toBe(201);
      const clientId = String((client.body as { id?: unknown }).id);
      expectError(
        await call(server.app, 'POST', devisUrl, { ...JSON_TYPE, 'x-api-key': keys.full }, devisBody(clientId, 20_000)),
        400,
        'invalid_json',
      );
      // Ordinary nesting is still accepted.
      expect((await call(server.app, 'POST', devisUrl, { ...JSON_TYPE, 'x-api-key': keys.full }, devisBody(clientId, 20))).status).toBe(
        201,
      );
    });
  });

  it('TCP: headers over 16 KiB are 431 request_header_fields_too_large in the error shape', async () => {
    await expectRawError(
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      'request_header_fields_too_large',
    );
  });

  it('TCP: a request Node cannot parse is 400 bad_request in the error shape', async () => {
    await expectRawError('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\nConnection: close\r\n\r\n', 'bad_request');
    await expectRawError('GARBAGE\r\n\r\n', 'bad_request');
  });

  it('TCP: HTTP/1.1 without Host reaches the local guard (421 misdirected_request), not Node’s bare 400', async () => {
    await expectRawError('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', 'misdirected_request');
  });
});
