import { and, eq, inArray, lt } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { syncStagedBlobs } from './schema.js';

/**
 * The PDFs a pull page names, fetched from the hub before the page's transaction (which cannot
 * wait on the network) and read by it: kept until the page is applied, or a crash's leftovers
 * are cleared.
 */

export function stageBlob(orm: Orm, cabinetId: string, sha256: string, bytes: Buffer, now: number): void {
  orm.insert(syncStagedBlobs).values({ cabinetId, sha256, bytes, stagedAt: now }).onConflictDoNothing().run();
}

export function readStagedBlob(orm: Orm, cabinetId: string, sha256: string): Buffer | undefined {
  return orm
    .select({ bytes: syncStagedBlobs.bytes })
    .from(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), eq(syncStagedBlobs.sha256, sha256)))
    .get()?.bytes;
}

export function hasStagedBlob(orm: Orm, cabinetId: string, sha256: string): boolean {
  return (
    orm
      .select({ sha256: syncStagedBlobs.sha256 })
      .from(syncStagedBlobs)
      .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), eq(syncStagedBlobs.sha256, sha256)))
      .get() !== undefined
  );
}

/** Deletes the staged PDFs of a page once it is applied. */
export function clearStagedBlobs(orm: Orm, cabinetId: string, sha256s: readonly string[]): void {
  if (sha256s.length === 0) return;
  orm
    .delete(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), inArray(syncStagedBlobs.sha256, [...sha256s])))
    .run();
}

/** Deletes what a crash left staged: PDFs older than any pull still applying them (the service's and a CLI's may run at once). */
export function clearStaleStagedBlobs(orm: Orm, cabinetId: string, before: number): void {
  orm
    .delete(syncStagedBlobs)
    .where(and(eq(syncStagedBlobs.cabinetId, cabinetId), lt(syncStagedBlobs.stagedAt, before)))
    .run();
}
