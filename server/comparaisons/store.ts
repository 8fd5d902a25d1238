import { and, desc, eq, gt } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { comparaisons } from './schema.js';

export type ComparisonRow = typeof comparaisons.$inferSelect;

export function insertComparison(orm: Orm, row: ComparisonRow): void {
  orm.insert(comparaisons).values(row).run();
}

export function findComparison(orm: Orm, cabinetId: string, id: string): ComparisonRow | undefined {
  return orm
    .select()
    .from(comparaisons)
    .where(and(eq(comparaisons.cabinetId, cabinetId), eq(comparaisons.id, id)))
    .get();
}

export function listComparisons(
  orm: Orm,
  cabinetId: string,
  filters: { clientId?: string; createdAfter?: number; after?: CursorPosition },
  limit: number,
): ComparisonRow[] {
  return orm
    .select()
    .from(comparaisons)
    .where(
      and(
        eq(comparaisons.cabinetId, cabinetId),
        filters.clientId ? eq(comparaisons.clientId, filters.clientId) : undefined,
        filters.createdAfter !== undefined ? gt(comparaisons.createdAt, filters.createdAfter) : undefined,
        before(comparaisons.createdAt, comparaisons.id, filters.after),
      ),
    )
    .orderBy(desc(comparaisons.createdAt), desc(comparaisons.id))
    .limit(limit)
    .all();
}
