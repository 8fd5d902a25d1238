import { and, eq, sql } from 'drizzle-orm';
import { ApiError } from '../errors.js';
import { sha256Hex } from './credentials.js';
import type { HubDeps } from './deps.js';
import { assertWithinQuota } from './quota.js';
import { hubBlobs, hubCabinets, hubErasureLinks } from './schema.js';

/**
 * Quote PDFs, by content: a blob is named by its SHA-256, so storing it twice stores it once, and
 * a device cannot store bytes under another name. Blobs belong to a cabinet: the same PDF in two
 * cabinets is two rows, and a device reads its own cabinet's only.
 */
export async function storeBlob(
  deps: HubDeps,
  cabinetId: string,
  sha256: string,
  content: Buffer,
): Promise<{ sha256: string; size: number }> {
  const actual = sha256Hex(content);
  if (actual !== sha256) {
    throw new ApiError('blob_hash_mismatch', `The body's SHA-256 is ${actual}, not the ${sha256} named in the path; nothing was stored.`, {
      sha256: actual,
    });
  }
  const erased = async (tx: Pick<HubDeps['db'], 'select'>) =>
    (
      await tx
        .select({ sha256: hubErasureLinks.recordId })
        .from(hubErasureLinks)
        .where(and(eq(hubErasureLinks.cabinetId, cabinetId), eq(hubErasureLinks.kind, 'blob'), eq(hubErasureLinks.recordId, sha256)))
    ).length > 0;
  await deps.db.transaction(async (tx) => {
    // The cabinet's row first, as a push (whose erasure deletes PDFs) and compaction lock it: PDFs
    // then cabinet here would let the two deadlock. An erasure is then either committed and seen
    // below, or waits for this upload and finds the PDF.
    await tx.select({ id: hubCabinets.id }).from(hubCabinets).where(eq(hubCabinets.id, cabinetId)).for('no key update');
    // A PDF a client's erasure deleted (an unsigned quote's) is not stored again: a device that had
    // not heard of the erasure, or replays an upload, is answered as if it were, and stores nothing.
    if (await erased(tx)) return;
    // Sent again, it is about to be named again: its grace period before compaction may collect it
    // starts over, in the same statement (a collection between an insert and an update would lose it).
    const now = new Date(deps.clock.now());
    const [stored] = await tx
      .insert(hubBlobs)
      .values({ cabinetId, sha256, content, size: content.length, createdAt: now })
      .onConflictDoUpdate({ target: [hubBlobs.cabinetId, hubBlobs.sha256], set: { createdAt: now } })
      .returning({ inserted: sql<boolean>`(xmax = 0)` });
    if (!stored?.inserted) return;
    // Counted in the transaction that stores it: refused, nothing stays.
    const [counts] = await tx
      .update(hubCabinets)
      .set({ blobsCount: sql`${hubCabinets.blobsCount} + 1`, blobsBytes: sql`${hubCabinets.blobsBytes} + ${content.length}` })
      .where(eq(hubCabinets.id, cabinetId))
      .returning({ blobsCount: hubCabinets.blobsCount, blobsBytes: hubCabinets.blobsBytes });
    assertWithinQuota('blobs', counts?.blobsCount ?? 0, deps.limits.cabinetBlobs);
    assertWithinQuota('blob_bytes', counts?.blobsBytes ?? 0, deps.limits.cabinetBlobBytes);
  });
  return { sha256, size: content.length };
}

export async function readBlob(deps: HubDeps, cabinetId: string, sha256: string): Promise<Buffer> {
  const [blob] = await deps.db
    .select({ content: hubBlobs.content })
    .from(hubBlobs)
    .where(and(eq(hubBlobs.cabinetId, cabinetId), eq(hubBlobs.sha256, sha256)));
  if (!blob) throw new ApiError('not_found', 'No blob with this SHA-256 in this cabinet.');
  return blob.content;
}
