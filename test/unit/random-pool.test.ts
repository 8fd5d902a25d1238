import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pooledRandomBytes } from '../../server/platform/random-pool.js';

/** deps.randomBytes (server/platform/random-pool.ts): ids, salts and tokens come from it. */
describe('pooled random bytes', () => {
  it('hand out each pooled byte once: ids taken across many refills never repeat', () => {
    const take = pooledRandomBytes(64);
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const bytes = take(16);
      expect(bytes.length).toBe(16);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(10_000);
  });

  it('serve any size, across the refill boundary and past the pool size, with bytes that are not zeros', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 50 }), (sizes) => {
        const take = pooledRandomBytes(64);
        for (const size of sizes) {
          const bytes = take(size);
          expect(bytes.length).toBe(size);
          // 16 zero bytes or more in a row from a CSPRNG: a chance of 2^-128.
          if (size >= 16) expect(bytes.equals(Buffer.alloc(size))).toBe(false);
        }
      }),
    );
  });

  it('give the caller its own buffer: writing into it changes neither the pool nor what comes next', () => {
    const take = pooledRandomBytes(64);
    const first = take(16);
    first.fill(0xff);
    const second = take(16);
    expect(second.equals(Buffer.alloc(16, 0xff))).toBe(false);
    expect(second.equals(Buffer.alloc(16))).toBe(false);
  });
});
