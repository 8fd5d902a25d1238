import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { timeOrderedUuid } from '../../server/platform/db/time-ordered-id.js';

/** The ids of opportunities and events (server/platform/db/time-ordered-id.ts): UUIDs of version 7. */
describe('time-ordered UUIDs', () => {
  const NOW = Date.parse('2026-11-25T10:00:00.000Z');

  it('are UUIDs of version 7 and RFC 9562 variant, which the contract schemas accept', () => {
    const id = timeOrderedUuid(NOW, randomBytes);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(z.uuid().parse(id)).toBe(id);
  });

  it('carry their creation time in their first 48 bits', () => {
    const id = timeOrderedUuid(NOW, randomBytes);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(NOW);
  });

  it('sort as their times do, whatever the random bits', () => {
    const bytes = fc.uint8Array({ minLength: 16, maxLength: 16 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 2 }), fc.integer({ min: 1, max: 10_000 }), bytes, bytes, (t, later, a, b) => {
        const earlier = timeOrderedUuid(t, () => Buffer.from(a));
        const next = timeOrderedUuid(Math.min(2 ** 48 - 1, t + later), () => Buffer.from(b));
        expect(earlier < next).toBe(true);
      }),
    );
  });

  it('differ within one millisecond (74 random bits)', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid(NOW, randomBytes)));
    expect(ids.size).toBe(10_000);
  });
});
