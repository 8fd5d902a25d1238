import { z } from 'zod';

const LIMIT_DEFAULT = 50;
export const LIMIT_MAX = 100;

/** limit is clamped to 1..100 rather than refused (part 4.1 rule 4); only a non-number is an error. */
export const limitSchema = z.coerce
  .number({ error: 'limit must be a whole number' })
  .int('limit must be a whole number')
  .transform((n) => Math.min(LIMIT_MAX, Math.max(1, n)))
  .default(LIMIT_DEFAULT)
  .describe('Items per page, 1 to 100 (values outside are clamped); default 50.');

export const cursorSchema = z
  .string()
  .min(1)
  .max(1000)
  .describe('The next_cursor of the previous page, unchanged. Valid only with the same filters.');

export const createdAfterSchema = z.iso
  .datetime({ offset: true, error: 'created_after must be an ISO 8601 timestamp, e.g. 2026-01-31T00:00:00Z' })
  .describe('Only items created strictly after this instant (ISO 8601).');

export const listQueryBase = {
  limit: limitSchema,
  cursor: cursorSchema.optional(),
  created_after: createdAfterSchema.optional(),
};

/** The envelope of every list (part 2.9): newest first, keyset-paginated on (created_at, id). */
export function pageSchema<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page.'),
      has_more: z.boolean(),
      count: z.int().describe('Number of items in this page.'),
    })
    .meta({ id });
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
  count: number;
}

export function idParam<N extends string>(name: N) {
  return z.object({ [name]: z.uuid({ error: `${name} must be a UUID` }) } as Record<N, z.ZodUUID>);
}
