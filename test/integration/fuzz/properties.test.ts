/**
 * Property-based fuzzing of the HTTP surface: no request, however malformed, may be answered with a
 * 5xx, and every 4xx must carry the one error body shape {error, message, details?, request_id}
 * whose `error` is a code of ERROR_STATUS answered with that code's status (checkOutcome, in
 * test/helpers/fuzz.ts with the apps). The example-based cases are beside this file: json-body,
 * plugins, and regressions (what these properties found).
 *
 * Three properties:
 *  - the real app (startTestServer) driven through app.inject, the whole Fastify pipeline: every
 *    route of PUBLIC_ENDPOINTS (bodies, queries and path parameters generated from the route's own
 *    zod schemas, then mutated), /healthz, random and odd paths, headers, content types, bodies;
 *  - a second app built with buildApp on the same deps plus throwaway routes (a body route without
 *    auth, a path-parameter route with a scope), which the example-based cases also use;
 *  - the real app over real TCP (node:http), for request targets that inject would normalise
 *    (`..`, `//`, absolute-form, `*`) and for Node's own parsing.
 * Identifiers returned by 2xx answers are kept in a pool and reused in later paths and bodies, so
 * that reads, updates and signatures of existing records are fuzzed too, not only 404s. Webhook
 * deliveries go to an in-process stub: nothing leaves the machine.
 *
 * FUZZ_RUNS scales the number of runs (default 500 per inject property, a third of it over TCP);
 * FUZZ_SEED and FUZZ_PATH replay a failure from the seed and path fast-check prints.
 */
import { request as httpRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { PUBLIC_ENDPOINTS } from '../../../shared/catalogue.js';
import { PUBLIC_API_PREFIX, type Endpoint } from '../../../shared/endpoint.js';
import { EVENT_TYPES } from '../../../shared/events.js';
import { BODY_LIMIT_BYTES } from '../../../server/app.js';
import {
  ABSENT_ID,
  ALLOWED_ORIGIN,
  bodyApp,
  checkOutcome,
  describeExchange,
  FUZZ_ENDPOINTS,
  keys,
  KNOWN_THING_ID,
  port,
  server,
  useFuzzApps,
  type KeyName,
  type Outcome,
} from '../../helpers/fuzz.js';

useFuzzApps();

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
/** FUZZ_SEED replays the seed a failure printed (with FUZZ_PATH for its shrunk counterexample). */
const REPLAY: fc.Parameters<unknown> = {
  ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}),
  ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
};
/** Per property: generous, a run takes about a millisecond. */
const PROPERTY_TIMEOUT_MS = Math.max(20_000, RUNS * 20);

// ---------------------------------------------------------------------------------------------
// The identifier pool: UUIDs seen in 2xx answers, by field name (client_id, devis_id, ...).
// Generated values refer to it with markers resolved when the request is sent.
// ---------------------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const pool = new Map<string, string[]>();

function harvest(value: unknown, depth = 0): void {
  if (depth > 4 || value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' && UUID.test(v) && /(^|_)id$/.test(key)) {
      const list = pool.get(key) ?? [];
      if (!list.includes(v)) list.push(v);
      if (list.length > 50) list.shift();
      pool.set(key, list);
    } else {
      harvest(v, depth + 1);
    }
  }
}

function fromPool(name: string, index: number): string {
  const list = pool.get(name) ?? pool.get('id') ?? [];
  return list.length === 0 ? ABSENT_ID : (list[index % list.length] ?? ABSENT_ID);
}

/** In generated text: ⟦pool:client_id:3⟧ (an id from the pool), ⟦deep::5000⟧ (nested arrays), ⟦long::300000⟧ (a long string). */
const MARKER = /"?⟦(pool|deep|long):([a-z_]*):?(\d+)⟧"?/g;

function resolveMarkers(text: string, inJson: boolean): string {
  return text.replace(MARKER, (whole, kind: string, name: string, n: string) => {
    const count = Number(n);
    const quoted = whole.startsWith('"');
    switch (kind) {
      case 'pool': {
        const id = fromPool(name, count);
        return quoted ? JSON.stringify(id) : id;
      }
      case 'deep':
        return inJson ? `${'['.repeat(count)}1${']'.repeat(count)}` : 'deep';
      default:
        return quoted || inJson ? `"${'x'.repeat(count)}"` : 'x'.repeat(count);
    }
  });
}

const poolRef = (name: string) => fc.nat(49).map((i) => `⟦pool:${name}:${i}⟧`);

// ---------------------------------------------------------------------------------------------
// Values from a route's own schemas: zod → JSON Schema → arbitrary. Mostly valid values, so that
// handlers run; mutations below break them again.
// ---------------------------------------------------------------------------------------------

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

function toJsonSchema(schema: z.ZodType): JsonSchema | null {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  } catch {
    return null;
  }
}

/** 14 digits with a valid Luhn key (the check digit is the one that makes the sum a multiple of 10). */
const siret = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 13, maxLength: 13 }).map((digits) => {
  const luhn = (all: number[]) =>
    all.reduceRight((sum, digit, i) => {
      const doubled = (all.length - 1 - i) % 2 === 1 ? digit * 2 : digit;
      return sum + (doubled > 9 ? doubled - 9 : doubled);
    }, 0);
  const check = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].find((d) => luhn([...digits, d]) % 10 === 0) ?? 0;
  return [...digits, check].join('');
});

/** A value for a free-form field (additionalProperties: {}), sometimes very deep or very long. */
const freeValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 8 },
  // Around the server's nesting limit, and far past it.
  { arbitrary: fc.oneof(fc.integer({ min: 30, max: 100 }), fc.integer({ min: 1000, max: 150_000 })).map((n) => `⟦deep::${n}⟧`), weight: 1 },
  { arbitrary: fc.integer({ min: 1000, max: 200_000 }).map((n) => `⟦long::${n}⟧`), weight: 1 },
);

const isoDate = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });

function stringFor(schema: JsonSchema, name: string): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, 300);
  switch (schema.format) {
    case 'uuid':
      return /_id$|^id$/.test(name) ? fc.oneof(poolRef(name), fc.uuid({ version: 4 })) : fc.uuid({ version: 4 });
    case 'date-time':
      return isoDate.map((d) => d.toISOString());
    case 'date':
      return isoDate.map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc
        .tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.constantFrom('example.fr', 'cabinet.test', 'a.b.example'))
        .map(([local, domain]) => `${local}@${domain}`);
  }
  if (name === 'siret') return siret;
  if (name === 'url') {
    return fc.oneof(
      fc.webUrl({ validSchemes: ['https'] }),
      fc.constantFrom(
        'https://hooks.example.test/courtier',
        'http://hooks.example.test/',
        'https://127.0.0.1/',
        'https://user:pw@a.test/',
        'https://[::1]/',
      ),
      fc.string({ maxLength: 40 }),
    );
  }
  if (name === 'events')
    return fc.oneof({ arbitrary: fc.constantFrom(...EVENT_TYPES, '*'), weight: 9 }, { arbitrary: fc.string({ maxLength: 20 }), weight: 1 });
  if (schema.pattern !== undefined) {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
  }
  return fc.string({ unit: 'grapheme', minLength: Math.max(min, 0), maxLength: Math.max(max, min) }).filter((s) => s.trim().length >= min);
}

function arbitraryFor(schema: JsonSchema | boolean | undefined, root: JsonSchema, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true || depth > 6) return freeValue;
  if (schema === false) return fc.constant(null);
  if (schema.$ref !== undefined) {
    const target = root.$defs?.[schema.$ref.replace('#/$defs/', '')];
    return target ? arbitraryFor(target, root, name, depth + 1) : freeValue;
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((s) => arbitraryFor(s, root, name, depth + 1)));
  if (schema.allOf && schema.allOf.length > 0) return arbitraryFor(schema.allOf[0], root, name, depth + 1);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryFor({ ...schema, type }, root, name, depth + 1)));
  switch (types[0]) {
    case 'object': {
      const properties = schema.properties ?? {};
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(properties)) model[key] = arbitraryFor(sub, root, key, depth + 1);
      const known = fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in model) });
      const extra = schema.additionalProperties;
      if (extra === undefined || extra === false) return known;
      return fc
        .tuple(known, fc.dictionary(fc.string({ maxLength: 12 }), arbitraryFor(extra, root, '', depth + 1), { maxKeys: 4 }))
        .map(([k, e]) => ({ ...e, ...k }));
    }
    case 'array':
      return fc.array(arbitraryFor(schema.items, root, name, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, 5),
      });
    case 'string':
      return stringFor(schema, name);
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1e6, -1e6), max: Math.min(schema.maximum ?? 1e6, 1e6) });
    case 'number':
      return fc.oneof(
        fc.integer({ min: Math.max(Math.ceil(schema.minimum ?? -1e6), -1e6), max: Math.min(Math.floor(schema.maximum ?? 1e6), 1e6) }),
        fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true }),
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return freeValue;
  }
}

function schemaArbitrary(schema: z.ZodType | undefined): fc.Arbitrary<unknown> | null {
  if (!schema) return null;
  const json = toJsonSchema(schema);
  return json ? arbitraryFor(json, json) : null;
}

// ---------------------------------------------------------------------------------------------
// Building blocks: header values, path segments, queries, credentials, content types, bodies
// ---------------------------------------------------------------------------------------------

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'] as const;
/** Methods Node and Fastify know but no route declares. */
const RARE_METHODS = ['QUERY', 'TRACE', 'PROPFIND', 'SEARCH', 'PURGE', 'LOCK'] as const;

const TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split('');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.split('');

function charRange(from: number, to: number): fc.Arbitrary<string> {
  return fc.integer({ min: from, max: to }).map((c) => String.fromCharCode(c));
}

/** `arbitrary` in `percent` % of the runs, null otherwise. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: fc.constant(null), weight: 100 - percent }, { arbitrary, weight: percent });
}

/** What a header value may hold on the wire: HTAB, visible ASCII, space, obs-text. */
const headerValueChar = fc.oneof(
  { arbitrary: charRange(0x20, 0x7e), weight: 20 },
  { arbitrary: fc.constant('\t'), weight: 1 },
  { arbitrary: charRange(0x80, 0xff), weight: 2 },
);
const headerValue = fc.oneof(
  { arbitrary: fc.string({ unit: headerValueChar, maxLength: 40 }), weight: 10 },
  { arbitrary: fc.integer({ min: 1000, max: 12_000 }).map((n) => 'v'.repeat(n)), weight: 1 },
);
const headerName = fc.string({ unit: fc.constantFrom(...TCHAR), minLength: 1, maxLength: 24 });
/** Headers that change the framing, or that the request model sets itself, are not random extras. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'te', 'trailer']);
const extraHeader = fc
  .tuple(
    fc.oneof(
      { arbitrary: headerName, weight: 6 },
      {
        arbitrary: fc.constantFrom(
          '__proto__',
          'constructor',
          'hasOwnProperty',
          'x-forwarded-for',
          'x-forwarded-host',
          'x-forwarded-proto',
          'forwarded',
          'accept',
          'accept-encoding',
          'content-encoding',
          'cookie',
          'idempotency-key',
          'x-request-id',
          'x-http-method-override',
          'if-none-match',
          'range',
          'accept-version',
          'mcp-protocol-version',
          'x-api-key',
          'authorization',
          'content-type',
          'origin',
        ),
        weight: 4,
      },
    ),
    headerValue,
  )
  .filter(([name]) => !FRAMING_HEADERS.has(name.toLowerCase()));

/** Path segments: ordinary, odd, percent-encoded (often invalid UTF-8), very long. */
const pathSegment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.webSegment(), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      '..',
      '.',
      '',
      '%',
      '%zz',
      '%2',
      '%2F',
      '%2f',
      '%00',
      '%25',
      '%2525',
      '%C3%A9',
      '%E2%82',
      '%FF',
      '%u0041',
      '%3F',
      '%23',
      '+',
      '*',
      '@',
      ':',
      ';',
      ';jsessionid=1',
      '~',
      '!',
      '$',
      "'",
      '(',
      ')',
      ',',
      '=',
      '&',
      '[',
      ']',
      '\\',
      'é',
      '😀',
      '%F0%9F%98%80',
      'me',
      'ME',
      'docs',
      'openapi.json',
      'pdf',
      'sign',
      '__proto__',
      'constructor',
      'prototype',
      'hasOwnProperty',
      ':id',
      '{id}',
      KNOWN_THING_ID,
      KNOWN_THING_ID.toUpperCase(),
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ),
    weight: 4,
  },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }), weight: 2 },
  {
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 6 })
      .map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0').toUpperCase()}`).join('')),
    weight: 2,
  },
  { arbitrary: fc.integer({ min: 150, max: 4000 }).map((n) => 'a'.repeat(n)), weight: 1 },
);

/** A route's URL with its parameters filled: from the pool, from the schema, or any segment. */
function endpointPath(endpoint: Endpoint): fc.Arbitrary<string> {
  const params = endpoint.params ? toJsonSchema(endpoint.params) : null;
  const parts = endpoint.path.split(/(\{[^}]+\})/).filter((p) => p !== '');
  const arbitraries = parts.map((part) => {
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    if (name === undefined) return fc.constant(part);
    const fromSchema = params?.properties?.[name] ? arbitraryFor(params.properties[name], params, name).map(String) : fc.uuid();
    return fc.oneof(
      { arbitrary: poolRef(name), weight: 4 },
      { arbitrary: fromSchema, weight: 2 },
      { arbitrary: fc.constant(KNOWN_THING_ID), weight: 1 },
      { arbitrary: pathSegment, weight: 2 },
    );
  });
  return fc.tuple(...arbitraries).map((xs) => PUBLIC_API_PREFIX + xs.join(''));
}

function pathArbitrary(endpoints: readonly Endpoint[]): fc.Arbitrary<string> {
  const registered = fc.oneof(fc.constant('/healthz'), ...endpoints.map(endpointPath));
  return fc.oneof(
    { arbitrary: registered, weight: 10 },
    {
      arbitrary: fc
        .tuple(registered, fc.constantFrom('/', '//', '/.', '/..', '?', '#', '%20', '.json', '~', ';a=b'))
        .map(([p, s]) => p + s),
      weight: 2,
    },
    { arbitrary: registered.map((p) => p.toUpperCase()), weight: 1 },
    { arbitrary: registered.map((p) => p.replace(/\//g, '//')), weight: 1 },
    { arbitrary: fc.array(pathSegment, { minLength: 1, maxLength: 5 }).map((s) => `${PUBLIC_API_PREFIX}/${s.join('/')}`), weight: 5 },
    { arbitrary: fc.array(pathSegment, { minLength: 0, maxLength: 4 }).map((s) => `/${s.join('/')}`), weight: 2 },
    { arbitrary: fc.constantFrom('/', '/api', '/api/v1', PUBLIC_API_PREFIX, `${PUBLIC_API_PREFIX}/`, '/healthz/', '/HEALTHZ'), weight: 1 },
  );
}

const queryKey = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '__proto__',
      '__proto__[polluted]',
      'constructor',
      'constructor[prototype][polluted]',
      'prototype',
      'a[]',
      'a[0]',
      'a[b]',
      'limit',
      'cursor',
      'created_after',
      'stage',
      'status',
      'type',
      'client_id',
      'cabinet_id',
      'expires',
      'signature',
      'expand',
      'dry_run',
      'key',
      'api_key',
      'token',
      '',
      '%zz',
      '%',
      '😀',
    ),
    weight: 3,
  },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }), weight: 2 },
);
const queryValue = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '1',
      '0',
      '-1',
      '100',
      '101',
      '1e3',
      '1e400',
      '0x10',
      'NaN',
      'Infinity',
      'true',
      'false',
      'null',
      '',
      '%zz',
      '%',
      '%00',
      '[]',
      '{}',
      '😀',
      '.',
      'a.b',
      'a.b.c',
      '9999999999999999',
      '2026-02-30T00:00:00Z',
      KNOWN_THING_ID,
    ),
    weight: 3,
  },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }), weight: 2 },
  { arbitrary: fc.integer({ min: 100, max: 5000 }).map((n) => 'q'.repeat(n)), weight: 1 },
);
const randomQuery: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.tuple(queryKey, queryValue).map(([k, v]) => `${k}=${v}`),
      queryKey,
      fc.tuple(queryKey, queryValue).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
    ),
    { maxLength: 8 },
  )
  .chain((pairs) => fc.constantFrom('&', '&&', ';').map((sep) => pairs.join(sep)));

/** A query from the route's own schema (values as strings, arrays as repeated keys), sometimes with random pairs. */
function endpointQuery(endpoint: Endpoint): fc.Arbitrary<string | null> {
  const fromSchema = schemaArbitrary(endpoint.query);
  if (!fromSchema) return fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: randomQuery, weight: 1 });
  const valid = fromSchema.map((value) => {
    if (value === null || typeof value !== 'object') return '';
    const pairs: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      for (const item of Array.isArray(v) ? v : [v]) {
        const text = typeof item === 'string' ? item : JSON.stringify(item);
        pairs.push(`${encodeURIComponent(k)}=${text.startsWith('⟦') ? text : encodeURIComponent(text)}`);
      }
    }
    return pairs.join('&');
  });
  return fc.oneof(
    { arbitrary: valid, weight: 6 },
    { arbitrary: fc.tuple(valid, randomQuery).map(([a, b]) => [a, b].filter(Boolean).join('&')), weight: 2 },
    { arbitrary: fc.constant(null), weight: 2 },
  );
}

const queryString: fc.Arbitrary<string | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 6 },
  { arbitrary: fc.webQueryParameters(), weight: 1 },
  { arbitrary: randomQuery, weight: 4 },
);

type Credential =
  { kind: 'key'; key: KeyName; mutate: 'none' | 'pad' | 'lower' | 'truncate' | 'suffix' } | { kind: 'literal'; value: string };

type Placement = 'x-api-key' | 'bearer' | 'bearer-lower' | 'bearer-spaces' | 'basic' | 'token-scheme' | 'bare' | 'both';

const credential: fc.Arbitrary<Credential> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('key' as const),
      key: fc.constantFrom<KeyName>('full', 'full', 'full', 'noscope', 'revoked', 'iplocked'),
      mutate: fc.constantFrom('none', 'none', 'none', 'pad', 'lower', 'truncate', 'suffix'),
    }),
    weight: 8,
  },
  {
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '',
          ' ',
          'null',
          'undefined',
          'svc_prod_',
          'svc_test_',
          'Bearer',
          'svc_dev_0000000000000000000000000000000000000000',
        ),
        fc
          .tuple(
            fc.constantFrom('svc_prod_', 'svc_test_', 'svc_live_', ''),
            fc.string({ unit: fc.constantFrom(...BASE62), minLength: 38, maxLength: 42 }),
          )
          .map(([p, r]) => p + r),
        fc.string({ unit: headerValueChar, maxLength: 60 }),
        fc.integer({ min: 1000, max: 12_000 }).map((n) => 'k'.repeat(n)),
      )
      .map((value) => ({ kind: 'literal' as const, value })),
    weight: 3,
  },
);
const credentialAndPlacement = fc.record({
  credential,
  placement: fc.constantFrom<Placement>(
    'x-api-key',
    'x-api-key',
    'bearer',
    'bearer',
    'bearer-lower',
    'bearer-spaces',
    'basic',
    'token-scheme',
    'bare',
    'both',
  ),
});
const VALID_CREDENTIAL = {
  credential: { kind: 'key' as const, key: 'full' as const, mutate: 'none' as const },
  placement: 'x-api-key' as const,
};

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/json;;',
  'application/json; foo',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/jsonx',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'application/octet-stream',
  '*/*',
  '',
  ' ',
  ';',
  ';charset=utf-8',
  'application/',
  '/json',
  'json',
  'application/json, text/plain',
];
const contentType: fc.Arbitrary<string | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 3 },
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 6 },
  { arbitrary: fc.string({ unit: headerValueChar, maxLength: 30 }), weight: 1 },
);

/** Bodies are descriptors, built at send time, so that fast-check's counterexamples stay readable. */
type BodySpec =
  | { kind: 'none' }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  | { kind: 'deep'; depth: number; opener: '[' | '{"a":'; balanced: boolean }
  | { kind: 'long-string'; length: number; char: string }
  | { kind: 'oversize'; extra: number };

const jsonText = fc.json({ maxDepth: 4 });
const text = (t: string): BodySpec => ({ kind: 'text', text: t });

/** Bodies of every kind, unrelated to any route; `big` bounds the deep-nesting and long-string ones. */
function bodySpecArbitrary(big: number): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { arbitrary: fc.constant({ kind: 'none' as const }), weight: 6 },
    { arbitrary: jsonText.map(text), weight: 4 },
    { arbitrary: fc.anything({ maxDepth: 3 }).map((v) => text(JSON.stringify(v) ?? 'undefined')), weight: 2 },
    {
      // Truncated JSON.
      arbitrary: fc
        .tuple(jsonText, fc.nat())
        .filter(([t]) => t.length > 1)
        .map(([t, n]) => text(t.slice(0, 1 + (n % (t.length - 1))))),
      weight: 2,
    },
    {
      // Prototype poisoning, at the top and nested.
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            (v: string) => `{"__proto__":${v}}`,
            (v: string) => `{"constructor":{"prototype":${v}}}`,
            (v: string) => `{"name":"x","meta":{"__proto__":${v}}}`,
            (v: string) => `[{"a":[{"constructor":{"prototype":${v}}}]}]`,
            (v: string) => `{"name":"x","__proto__":${v},"constructor":{"prototype":${v}}}`,
            (v: string) => `{"\\u005f_proto__":${v}}`,
            (v: string) => `{"constructor":${v}}`,
          ),
          fc.oneof(fc.constant('{"polluted":true}'), fc.constant('{"isAdmin":true,"toString":1}'), jsonText),
        )
        .map(([wrap, v]) => text(wrap(v))),
      weight: 3,
    },
    {
      arbitrary: fc
        .constantFrom(
          '',
          ' ',
          '\n',
          'null',
          'true',
          '0',
          '""',
          '[]',
          '{}',
          'a=1&b=2',
          '{"name":',
          '{"name":"x",}',
          "{'name':'x'}",
          '\uFEFF{"name":"x"}',
          '{"name":"\\ud800"}',
          '{"name":"x"}{"name":"y"}',
          'NaN',
          '1e999',
          '-',
        )
        .map(text),
      weight: 2,
    },
    { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => ({ kind: 'bytes' as const, bytes: [...b] })), weight: 1 },
    {
      arbitrary: fc.record({
        kind: fc.constant('deep' as const),
        depth: fc.integer({ min: 1, max: big / 5 }),
        opener: fc.constantFrom<'[' | '{"a":'>('[', '{"a":'),
        balanced: fc.boolean(),
      }),
      weight: 1,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('long-string' as const),
        length: fc.integer({ min: 1000, max: big / 4 }),
        char: fc.constantFrom('x', 'é', '\\\\', '\\u0000', '😀'),
      }),
      weight: 1,
    },
  );
}

/** Bodies for one route: valid per its schema (mostly), then sometimes broken in one place. */
function endpointBody(endpoint: Endpoint, fallback: fc.Arbitrary<BodySpec>, validWeight: number): fc.Arbitrary<BodySpec> {
  const fromSchema = schemaArbitrary(endpoint.body);
  if (!fromSchema) return fallback;
  const mutated = fc.tuple(fromSchema, fc.string({ maxLength: 12 }), freeValue).map(([value, key, junk]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return junk;
    const keys = Object.keys(value);
    const target = keys.length > 0 && key.length % 2 === 0 ? (keys[key.length % keys.length] ?? key) : key;
    return { ...value, [target]: junk };
  });
  return fc.oneof(
    { arbitrary: fromSchema.map((v) => text(JSON.stringify(v) ?? 'null')), weight: validWeight },
    { arbitrary: mutated.map((v) => text(JSON.stringify(v) ?? 'null')), weight: 3 },
    { arbitrary: fallback, weight: 2 },
  );
}

const hostArbitrary: fc.Arbitrary<string | null> = fc.oneof(
  { arbitrary: fc.constant('127.0.0.1'), weight: 16 },
  { arbitrary: fc.constantFrom('127.0.0.1:{port}', 'localhost:{port}', '[::1]:{port}', 'LOCALHOST', 'localhost', '[::1]'), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      'evil.example',
      'evil.example:{port}',
      '127.0.0.1:1',
      '127.0.0.1:99999',
      '127.0.0.1:',
      '127.0.0.2',
      '127.0.0.1.nip.io',
      '[::1',
      '::1',
      '[::ffff:127.0.0.1]',
      '',
      ':',
      ':80',
      'localhost:abc',
      'localhost.',
      'user@localhost',
      'localhost, evil.example',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: headerValueChar, maxLength: 30 }), weight: 1 },
);

const originArbitrary: fc.Arbitrary<string | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      ALLOWED_ORIGIN,
      `${ALLOWED_ORIGIN}/`,
      'HTTP://ALLOWED.EXAMPLE',
      'http://127.0.0.1',
      'http://127.0.0.1:{port}',
      'http://localhost',
      'https://evil.example',
      'null',
      '',
      'file://',
      'chrome-extension://abc',
      'http://[::1',
      'not a url',
    ),
    weight: 3,
  },
  { arbitrary: fc.string({ unit: headerValueChar, maxLength: 30 }), weight: 1 },
);

const idempotencyKey: fc.Arbitrary<string | null> = sometimes(
  fc.oneof(
    // A few shared keys, so that replays (200) and reuse with another body (422) happen.
    { arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3'), weight: 6 },
    { arbitrary: fc.uuid(), weight: 2 },
    { arbitrary: fc.constantFrom('', ' ', 'a b', 'é', 'k'.repeat(256), '\t'), weight: 1 },
    { arbitrary: headerValue, weight: 1 },
  ),
  30,
);

// ---------------------------------------------------------------------------------------------
// The request model
// ---------------------------------------------------------------------------------------------

interface FuzzRequest {
  method: string;
  path: string;
  /** Raw query string, without '?'; null for none. */
  query: string | null;
  /** '{port}' becomes the server's port; null leaves Host to the client. */
  host: string | null;
  credential: { credential: Credential; placement: Placement } | null;
  contentType: string | null;
  /** Inject only: a Content-Length that may disagree with the body. */
  contentLength: string | null;
  origin: string | null;
  idempotencyKey: string | null;
  secFetch: { site: string; mode: string } | null;
  preflight: string | null;
  extraHeaders: [string, string][];
  body: BodySpec;
}

const anyMethod = fc.oneof(
  { arbitrary: fc.constantFrom(...METHODS), weight: 12 },
  { arbitrary: fc.constantFrom(...RARE_METHODS), weight: 1 },
);

/**
 * 40 % of the requests are anything at all; the others aim at one route with its own method and a
 * body, query and parameters from its schemas, with noisy headers (30 %) or clean ones (30 %), so
 * that authentication, parsing, validation, idempotency and handlers are all reached.
 */
function fuzzRequest(endpoints: readonly Endpoint[], body: fc.Arbitrary<BodySpec>, allowContentLength: boolean): fc.Arbitrary<FuzzRequest> {
  const common = {
    contentLength: allowContentLength
      ? sometimes(fc.constantFrom('0', '1', '-1', 'abc', '1.5', ' 2', '', '99999999999', '1048577', '00'), 5)
      : fc.constant(null),
    idempotencyKey,
    secFetch: sometimes(
      fc.record({
        site: fc.constantFrom('cross-site', 'same-site', 'same-origin', 'none', 'CROSS-SITE', ''),
        mode: fc.constantFrom('navigate', 'cors', 'no-cors', 'same-origin', ''),
      }),
      8,
    ),
    preflight: sometimes(fc.constantFrom('GET', 'POST', 'DELETE', 'FOO', ''), 8),
    extraHeaders: fc.array(extraHeader, { maxLength: 3 }),
  };
  const anything = fc.record({
    ...common,
    method: anyMethod,
    path: pathArbitrary(endpoints),
    query: queryString,
    host: hostArbitrary,
    credential: sometimes(credentialAndPlacement, 70),
    contentType,
    origin: originArbitrary,
    body,
  });
  /** One route of the list, its own method most of the time, its parameters, query and body. */
  const route = (validBodyWeight: number) =>
    fc
      .constantFrom(...endpoints)
      .chain((e) =>
        fc.tuple(
          fc.oneof({ arbitrary: fc.constant<string>(e.method), weight: 9 }, { arbitrary: anyMethod, weight: 1 }),
          endpointPath(e),
          endpointQuery(e),
          endpointBody(e, body, validBodyWeight),
        ),
      );
  const aimed = fc
    .record({
      ...common,
      route: route(6),
      host: fc.oneof({ arbitrary: fc.constant('127.0.0.1'), weight: 9 }, { arbitrary: hostArbitrary, weight: 1 }),
      credential: fc.oneof(
        { arbitrary: fc.constant(VALID_CREDENTIAL), weight: 6 },
        { arbitrary: sometimes(credentialAndPlacement, 80), weight: 4 },
      ),
      contentType: fc.oneof({ arbitrary: fc.constant('application/json'), weight: 7 }, { arbitrary: contentType, weight: 3 }),
      origin: fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: originArbitrary, weight: 1 }),
    })
    .map(({ route: [method, path, query, routeBody], ...rest }): FuzzRequest => ({ ...rest, method, path, query, body: routeBody }));
  /** Everything around the route as an integrator sends it: only the route, its values and the key vary. */
  const clean = fc
    .record({
      route: route(20),
      credential: fc.oneof({ arbitrary: fc.constant(VALID_CREDENTIAL), weight: 9 }, { arbitrary: credentialAndPlacement, weight: 1 }),
      idempotencyKey,
    })
    .map(({ route: [method, path, query, routeBody], credential: cred, idempotencyKey: key }): FuzzRequest => ({
      method,
      path,
      query,
      body: routeBody,
      credential: cred,
      idempotencyKey: key,
      host: '127.0.0.1',
      contentType: 'application/json',
      contentLength: null,
      origin: null,
      secFetch: null,
      preflight: null,
      extraHeaders: [],
    }));
  return fc.oneof({ arbitrary: anything, weight: 4 }, { arbitrary: aimed, weight: 3 }, { arbitrary: clean, weight: 3 });
}

// ---------------------------------------------------------------------------------------------
// Materialising, sending, checking
// ---------------------------------------------------------------------------------------------

function credentialValue(c: Credential): string {
  if (c.kind === 'literal') return c.value;
  const key = keys[c.key];
  switch (c.mutate) {
    case 'none':
      return key;
    case 'pad':
      return `  ${key}\t`;
    case 'lower':
      return key.toLowerCase();
    case 'truncate':
      return key.slice(0, -1);
    case 'suffix':
      return `${key}x`;
  }
}

function credentialHeaders(spec: FuzzRequest['credential']): [string, string][] {
  if (spec === null) return [];
  const value = credentialValue(spec.credential);
  switch (spec.placement) {
    case 'x-api-key':
      return [['x-api-key', value]];
    case 'bearer':
      return [['authorization', `Bearer ${value}`]];
    case 'bearer-lower':
      return [['authorization', `bearer ${value}`]];
    case 'bearer-spaces':
      return [['authorization', `Bearer   ${value}   `]];
    case 'basic':
      return [['authorization', `Basic ${Buffer.from(`user:${value}`).toString('base64')}`]];
    case 'token-scheme':
      return [['authorization', `Token ${value}`]];
    case 'bare':
      return [['authorization', value]];
    case 'both':
      return [
        ['x-api-key', value],
        ['authorization', `Bearer ${keys.noscope}`],
      ];
  }
}

function bodyBytes(spec: BodySpec): Buffer | null {
  switch (spec.kind) {
    case 'none':
      return null;
    case 'text':
      return Buffer.from(resolveMarkers(spec.text, true), 'utf8');
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'deep': {
      const closer = spec.opener === '[' ? ']' : '}';
      return Buffer.from(spec.opener.repeat(spec.depth) + (spec.balanced ? `1${closer.repeat(spec.depth)}` : ''), 'utf8');
    }
    case 'long-string':
      return Buffer.from(`{"name":"${spec.char.repeat(spec.length)}"}`, 'utf8');
    case 'oversize':
      return Buffer.from(`{"name":"${'x'.repeat(BODY_LIMIT_BYTES + spec.extra - 11)}"}`, 'utf8');
  }
}

function headerList(req: FuzzRequest): [string, string][] {
  const withPort = (value: string) => value.replaceAll('{port}', String(port));
  const list: [string, string][] = [];
  if (req.host !== null) list.push(['host', withPort(req.host)]);
  list.push(...credentialHeaders(req.credential));
  if (req.contentType !== null) list.push(['content-type', req.contentType]);
  if (req.origin !== null) list.push(['origin', withPort(req.origin)]);
  if (req.idempotencyKey !== null) list.push(['idempotency-key', req.idempotencyKey]);
  if (req.secFetch !== null) list.push(['sec-fetch-site', req.secFetch.site], ['sec-fetch-mode', req.secFetch.mode]);
  if (req.preflight !== null) list.push(['access-control-request-method', req.preflight]);
  list.push(...req.extraHeaders);
  return list;
}

function target(req: FuzzRequest): string {
  const url = req.query === null ? req.path : `${req.path}?${req.query}`;
  return resolveMarkers(url, false);
}

function harvestOutcome(outcome: Outcome): void {
  if (outcome.status < 200 || outcome.status >= 300 || !String(outcome.headers['content-type']).includes('json')) return;
  try {
    harvest(JSON.parse(outcome.body));
  } catch {
    // Not JSON after all: nothing to keep.
  }
}

async function sendInject(app: FastifyInstance, req: FuzzRequest): Promise<void> {
  const headers = headerList(req);
  const body = bodyBytes(req.body);
  if (req.contentLength !== null) headers.push(['content-length', req.contentLength]);
  // Object.fromEntries defines own properties, so that a header named __proto__ stays a header.
  const headerObject: Record<string, string> = Object.fromEntries(headers);
  // light-my-request parses the URL with WHATWG rules, where '\' is '/' and '/\' an empty authority
  // (it would throw before the app sees anything): backslashes go encoded here, raw over TCP.
  const url = target(req).replaceAll('\\', '%5C');
  const response = await app.inject({
    method: req.method as 'GET',
    url,
    headers: headerObject,
    ...(body === null ? {} : { payload: body }),
  });
  const outcome: Outcome = { status: response.statusCode, headers: response.headers, body: response.body };
  checkOutcome(req.method, outcome, () => describeExchange(req.method, url, headers, body, outcome));
  harvestOutcome(outcome);
}

/** Node's client refuses path characters outside U+0021..U+00FF: percent-encode those, keep the rest raw. */
function wireTarget(value: string): string {
  return [...value].map((ch) => (/^[\x21-\x7e]$/.test(ch) ? ch : encodeURIComponent(ch))).join('');
}

/** Node's client refuses header values with characters above U+00FF. */
function wireHeaderValue(value: string): string {
  return [...value].map((ch) => (ch.length === 1 && ch.charCodeAt(0) <= 0xff ? ch : '?')).join('');
}

function rawRequest(method: string, path: string, headers: [string, string][], body: Buffer | null): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const outgoing: [string, string][] = body === null ? headers : [...headers, ['content-length', String(body.length)]];
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, agent: false, setHost: false, headers: outgoing.flat(), timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within 10 s to ${method} ${path}`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

async function sendRaw(req: FuzzRequest): Promise<void> {
  const headers = headerList(req).map(([k, v]): [string, string] => [k, wireHeaderValue(v)]);
  if (req.host === null) headers.unshift(['host', `127.0.0.1:${port}`]);
  const body = bodyBytes(req.body);
  const path = wireTarget(target(req));
  const outcome = await rawRequest(req.method, path, headers, body).catch((error: unknown) => {
    throw new Error(
      `no HTTP answer: ${String(error)}\n${describeExchange(req.method, path, headers, body, { status: 0, headers: {}, body: '' })}`,
    );
  });
  checkOutcome(req.method, outcome, () => describeExchange(req.method, path, headers, body, outcome));
  harvestOutcome(outcome);
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/** Bodies just over 1 MiB now and then: inject only. */
const injectBodies = fc.oneof(
  { arbitrary: bodySpecArbitrary(1_000_000), weight: 30 },
  { arbitrary: fc.integer({ min: 1, max: 4096 }).map((extra) => ({ kind: 'oversize' as const, extra })), weight: 1 },
);

describe('fuzz: no 5xx, and every 4xx is {error, message, details?, request_id} with the status of its code', () => {
  it(
    'the real app (inject): catalogue routes with schema-made bodies, /healthz, random paths, headers, queries and bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(fuzzRequest(PUBLIC_ENDPOINTS, injectBodies, true), (req) => sendInject(server.app, req)),
        { ...REPLAY, numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'an app with throwaway body, query and path-parameter routes (inject)',
    async () => {
      await fc.assert(
        fc.asyncProperty(fuzzRequest([...FUZZ_ENDPOINTS, ...PUBLIC_ENDPOINTS], injectBodies, true), (req) => sendInject(bodyApp, req)),
        { ...REPLAY, numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'the real app over TCP: request targets inject would normalise (.., //, absolute-form) and Node parsing',
    async () => {
      const absoluteForm = fc
        .tuple(
          fc.constantFrom('http://127.0.0.1', 'http://evil.example', 'https://localhost:1', 'http://'),
          pathArbitrary(PUBLIC_ENDPOINTS),
        )
        .map(([a, p]) => a + p);
      const rawPath = fc.oneof(
        { arbitrary: fc.constant(null), weight: 8 },
        { arbitrary: absoluteForm, weight: 1 },
        {
          arbitrary: fc.constantFrom(
            '*',
            '/..',
            '/../api/v1/public/me',
            `${PUBLIC_API_PREFIX}/../../healthz`,
            '/./healthz',
            '//healthz',
            '/healthz#frag',
            '/%2e%2e/healthz',
          ),
          weight: 1,
        },
      );
      // Small bodies, and requests under Node's 16 KiB header limit: past it Node answers before
      // the app does (see the transport-level cases below).
      const requests = fc
        .tuple(fuzzRequest(PUBLIC_ENDPOINTS, bodySpecArbitrary(32_000), false), rawPath)
        .map(([req, path]) => (path === null ? req : { ...req, path }))
        .filter((req) => target(req).length + headerList(req).reduce((n, [k, v]) => n + k.length + v.length + 4, 0) < 12_000);
      await fc.assert(
        fc.asyncProperty(requests, (req) => sendRaw(req)),
        { ...REPLAY, numRuns: Math.ceil(RUNS / 3) },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
