import { and, desc, eq, gt, inArray, isNull, or } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { comparaisonJobs, comparaisons, conseils } from './schema.js';

export type ComparisonRow = typeof comparaisons.$inferSelect;
export type ConseilRow = typeof conseils.$inferSelect;

/** The comparison and which job is whose. */
export function insertComparison(orm: Orm, row: ComparisonRow, jobIds: readonly string[]): void {
  orm.insert(comparaisons).values(row).run();
  orm
    .insert(comparaisonJobs)
    .values(jobIds.map((jobId) => ({ jobId, comparaisonId: row.id, cabinetId: row.cabinetId })))
    .run();
}

/** The comparisons not yet completed that these jobs belong to. */
export function openComparisonsOfJobs(orm: Orm, jobIds: readonly string[]): ComparisonRow[] {
  if (jobIds.length === 0) return [];
  const ids = orm
    .selectDistinct({ id: comparaisonJobs.comparaisonId })
    .from(comparaisonJobs)
    .where(inArray(comparaisonJobs.jobId, [...jobIds]))
    .all()
    .map((row) => row.id);
  if (ids.length === 0) return [];
  return orm
    .select()
    .from(comparaisons)
    .where(and(inArray(comparaisons.id, ids), isNull(comparaisons.completedAt)))
    .all();
}

/** Every comparison not yet completed (after a restart, those whose last job ended meanwhile). */
export function openComparisons(orm: Orm): ComparisonRow[] {
  return orm.select().from(comparaisons).where(isNull(comparaisons.completedAt)).all();
}

/** Marks it completed, once: false when it already was. */
export function markCompleted(orm: Orm, id: string, at: number): boolean {
  return (
    orm
      .update(comparaisons)
      .set({ completedAt: at })
      .where(and(eq(comparaisons.id, id), isNull(comparaisons.completedAt)))
      .run().changes > 0
  );
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

export function insertConseil(orm: Orm, row: ConseilRow): void {
  orm.insert(conseils).values(row).run();
}

export function findConseil(orm: Orm, cabinetId: string, id: string): ConseilRow | undefined {
  return orm
    .select()
    .from(conseils)
    .where(and(eq(conseils.cabinetId, cabinetId), eq(conseils.id, id)))
    .get();
}

export function listConseils(
  orm: Orm,
  cabinetId: string,
  filters: { clientId?: string; createdAfter?: number; after?: CursorPosition },
  limit: number,
): ConseilRow[] {
  return orm
    .select()
    .from(conseils)
    .where(
      and(
        eq(conseils.cabinetId, cabinetId),
        filters.clientId ? eq(conseils.clientId, filters.clientId) : undefined,
        filters.createdAfter !== undefined ? gt(conseils.createdAt, filters.createdAfter) : undefined,
        before(conseils.createdAt, conseils.id, filters.after),
      ),
    )
    .orderBy(desc(conseils.createdAt), desc(conseils.id))
    .limit(limit)
    .all();
}

/** Empties the risk (its driver's or policyholder's name, birth date…) of the comparisons for this client or of these jobs. */
export function emptyRisksOf(orm: Orm, cabinetId: string, clientId: string, jobIds: readonly string[]): number {
  const ofJobs = orm
    .select({ id: comparaisonJobs.comparaisonId })
    .from(comparaisonJobs)
    .where(inArray(comparaisonJobs.jobId, [...jobIds]));
  return orm
    .update(comparaisons)
    .set({ risque: '{}' })
    .where(
      and(
        eq(comparaisons.cabinetId, cabinetId),
        jobIds.length > 0 ? or(eq(comparaisons.clientId, clientId), inArray(comparaisons.id, ofJobs)) : eq(comparaisons.clientId, clientId),
      ),
    )
    .run().changes;
}
