import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toIso } from '../../server/platform/iso-time.js';

/** server/deps.ts toIso: every date the API writes. It must write exactly what Date#toISOString writes. */
describe('toIso', () => {
  const dateWrites = (time: number) => new Date(time).toISOString();

  it('writes what toISOString writes for any time of the four-digit years, fractions of a millisecond included', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (time) => {
        expect(toIso(time)).toBe(dateWrites(time));
      }),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.double({ min: -62_167_219_200_000, max: 253_402_300_799_999, noNaN: true }), (time) => {
        expect(toIso(time)).toBe(dateWrites(time));
      }),
      { numRuns: 5_000 },
    );
  });

  it('writes the edges of days, months, leap years and centuries as Date does', () => {
    const edges = [
      0, -1, 1, 86_399_999, 86_400_000, -86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 4_107_628_799_999,
      -2_203_891_200_000, -62_167_219_200_000, 253_402_300_799_999, -0.5, 1.7,
    ];
    for (const time of edges) expect(toIso(time), String(time)).toBe(dateWrites(time));
    expect(toIso(Date.UTC(2026, 10, 28, 9, 5, 7, 42))).toBe('2026-11-28T09:05:07.042Z');
  });

  it('leaves other years to Date, and throws its RangeError for an invalid time', () => {
    for (const time of [-62_167_219_200_001, 253_402_300_800_000, 8.64e15, -8.64e15]) expect(toIso(time)).toBe(dateWrites(time));
    for (const time of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) expect(() => toIso(time)).toThrow(RangeError);
  });
});
