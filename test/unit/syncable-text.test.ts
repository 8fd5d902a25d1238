import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unsyncableTextIssues } from '../../server/platform/http/syncable-text.js';

/**
 * The rule the API's door applies (server/platform/http/syncable-text.ts): a string, value or key, is
 * refused when it holds U+0000 or a surrogate without its pair, as the hub refuses it.
 */

/** ES2024's own test of pairing, which the project's ES2023 types do not declare. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function syncable(text: string): boolean {
  return isWellFormed(text) && !text.includes('\u0000');
}

/** Every string of a JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)]);
}

describe('unsyncableTextIssues', () => {
  it('finds something exactly when some string or key is not syncable', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 }), (value) => {
        expect(unsyncableTextIssues(value, 'body').length === 0).toBe(strings(value).every(syncable));
      }),
      { numRuns: 500 },
    );
  });

  it('names values and keys by their path, pairs and other control characters pass', () => {
    const input = { ok: 'tab\tnewline\n😀 \ud83d\ude00', list: ['fine', 'a\u0000'], nested: { ['k\udc00']: 'x', low: '\ud83d' } };
    expect(unsyncableTextIssues(input, 'body').map((i) => [i.path, i.message.startsWith('a key') ? 'key' : 'value'])).toEqual([
      ['body.list.1', 'value'],
      ['body.nested.k\udc00', 'key'],
      ['body.nested.low', 'value'],
    ]);
  });

  it('a low surrogate before a high one is two unpaired halves', () => {
    expect(unsyncableTextIssues('\udc00\ud800', 'query')).toHaveLength(1);
    expect(unsyncableTextIssues('\ud800\udc00', 'query')).toEqual([]);
  });

  it('names at most 20 places, and skips raw bytes', () => {
    expect(
      unsyncableTextIssues(
        Array.from({ length: 50 }, () => '\u0000'),
        'body',
      ),
    ).toHaveLength(20);
    expect(unsyncableTextIssues(Buffer.from([0, 0xed, 0xa0, 0x80]), 'body')).toEqual([]);
  });
});
