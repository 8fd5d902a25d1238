import { z } from 'zod';
import { CODE_PATTERN } from '../../shared/devis.js';

/**
 * The pieces of the schemas that check a pulled change's fields: values as SQLite stores them
 * (times in ms, booleans as 0/1 or true/false, JSON as text), each module's sync.ts composing its
 * table's row from them. A change another install sends is checked as strictly as a local write,
 * because a device's credential can be stolen: what these refuse is set aside, never applied.
 */

/** Longest text a synced column holds (a quote's dicData, an event's data): far above any real one. */
const MAX_TEXT = 64 * 1024;

/** What a portal said (a quote's suspens, a robot's error): the robots keep this much of it, and the sync takes it. */
export const MAX_PORTAL_TEXT = 10_000;

export const storedTime = z.int().min(0).max(8_640_000_000_000_000);
export const storedCount = z.int().min(0).max(1_000_000_000_000);
export const storedText = (max = 1000) => z.string().max(max);
export const storedBoolean = z.union([z.boolean(), z.literal(0), z.literal(1)]);
export const storedId = z.uuid();
/** An insurer or product code as the services store it (codeSchema's output). */
export const storedCode = z.string().regex(CODE_PATTERN);
export const storedSha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256, 64 lowercase hex digits');

/** A JSON column: text that parses to what the module's reads expect. */
export function storedJson(schema: z.ZodType, what: string) {
  return z
    .string()
    .max(MAX_TEXT)
    .refine((text) => {
      try {
        return schema.safeParse(JSON.parse(text)).success;
      } catch {
        return false;
      }
    }, `not ${what} as JSON`);
}

/** A JSON object of any keys (a product's dicData, an event's data). */
export const anyJsonObject = z.record(z.string(), z.unknown());
