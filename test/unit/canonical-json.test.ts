import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../server/platform/http/canonical-json.js';

/**
 * The text idempotency and the job queue hash (server/platform/http/canonical-json.ts). It must never change
 * for a value: a stored request hash that no longer matches would turn a replay into 422
 * idempotency_key_reused. The reference is the text as first specified: members sorted by key,
 * each written by JSON.stringify, joined.
 */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The same members inserted in reverse order, deep. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).reverse()) copy[key] = reversed((value as Record<string, unknown>)[key]);
  return copy;
}

describe('canonicalJson', () => {
  it('writes the reference text for any JSON value, unicode keys and strings included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the same text whatever the order of the keys, and the text parses back to the value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(reversed(value))).toBe(text);
        expect(JSON.parse(text)).toStrictEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 1000 },
    );
  });

  it('sorts keys by UTF-16 code units (integer-like keys too), leaves undefined members out, and writes them as null in arrays', () => {
    expect(canonicalJson({ b: 1, a: [undefined, { d: undefined, c: 'é"\n' }], 10: true, 9: null })).toBe(
      '{"10":true,"9":null,"a":[null,{"c":"é\\"\\n"}],"b":1}',
    );
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({ x: undefined })).toBe('{}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});
