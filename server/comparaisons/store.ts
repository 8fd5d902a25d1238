import { and, desc, eq, gt, inArray, isNull, ne, or } from 'drizzle-orm';
import { before } from '../platform/db/keyset.js';
import type { Orm } from '../platform/db/open.js';
import type { CursorPosition } from '../platform/http/cursor.js';
import { comparaisonJobs, comparaisons, conseils } from './schema.js';

export type ComparisonRow = typeof comparaisons.$inferSelect;
export type ConseilRow = typeof conseils.$inferSelect;
/** A comparison's risk once its client was erased. */
export const EMPTIED_RISK = '{}';

/** Which job is whose: a job's end finds its comparison here. */
export function insertComparisonJobs(orm: Orm, comparaisonId: string, cabinetId: string, jobIds: readonly string[]): void {
  orm
    .insert(comparaisonJobs)
    .values(jobIds.map((jobId) => ({ jobId, comparaisonId, cabinetId })))
    .run();
}

/** The comparisons started here and not yet completed that these jobs belong to. */
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
    .where(and(inArray(comparaisons.id, ids), isNull(comparaisons.completedAt), eq(comparaisons.madeHere, true)))
    .all();
}

/** Every comparison started here and not yet completed (after a restart, those whose last job ended meanwhile). */
export function openComparisons(orm: Orm): ComparisonRow[] {
  return orm
    .select()
    .from(comparaisons)
    .where(and(isNull(comparaisons.completedAt), eq(comparaisons.madeHere, true)))
    .all();
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

/** The PDF of one of the cabinet's advice documents, by its SHA-256: what the sync uploads. */
export function conseilPdfBySha(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined {
  return (
    orm
      .select({ pdf: conseils.pdf })
      .from(conseils)
      .where(and(eq(conseils.cabinetId, cabinetId), eq(conseils.pdfSha256, sha256)))
      .get()?.pdf ?? undefined
  );
}

/** A pulled document's PDF, once it arrived (the column stays on each install: the record names it by hash). */
export function setConseilPdf(orm: Orm, cabinetId: string, id: string, pdf: Buffer): void {
  orm
    .update(conseils)
    .set({ pdf })
    .where(and(eq(conseils.cabinetId, cabinetId), eq(conseils.id, id)))
    .run();
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

/** The comparisons for this client or of these jobs whose risk still holds their data. */
export function comparisonsWithRiskOf(orm: Orm, cabinetId: string, clientId: string, jobIds: readonly string[]): string[] {
  const ofJobs = orm
    .select({ id: comparaisonJobs.comparaisonId })
    .from(comparaisonJobs)
    .where(inArray(comparaisonJobs.jobId, [...jobIds]));
  return orm
    .select({ id: comparaisons.id })
    .from(comparaisons)
    .where(
      and(
        eq(comparaisons.cabinetId, cabinetId),
        ne(comparaisons.risque, EMPTIED_RISK),
        jobIds.length > 0 ? or(eq(comparaisons.clientId, clientId), inArray(comparaisons.id, ofJobs)) : eq(comparaisons.clientId, clientId),
      ),
    )
    .all()
    .map((row) => row.id);
}
