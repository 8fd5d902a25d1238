import { ApiError } from '../errors.js';
import { sha256Hex } from './credentials.js';
import type { HubDeps } from './deps.js';
import { assertWithinQuota } from './quota.js';

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
  await deps.sql.begin(async (tx) => {
    // The cabinet's row first, as a push (whose erasure deletes PDFs) and compaction lock it: PDFs
    // then cabinet here would let the two deadlock. An erasure is then either committed and seen
    // below, or waits for this upload and finds the PDF.
    await tx`SELECT id FROM hub_cabinets WHERE id = ${cabinetId} FOR NO KEY UPDATE`;
    // A PDF a client's erasure deleted (an unsigned quote's) is not stored again: a device that had
    // not heard of the erasure, or replays an upload, is answered as if it were, and stores nothing.
    const erased = await tx`
      SELECT record_id FROM hub_erasure_links WHERE cabinet_id = ${cabinetId} AND kind = 'blob' AND record_id = ${sha256}`;
    if (erased.length > 0) return;
    // Sent again, it is about to be named again: its grace period before compaction may collect it
    // starts over, in the same statement (a collection between an insert and an update would lose it).
    const now = new Date(deps.clock.now()).toISOString();
    const [stored] = await tx<{ inserted: boolean }[]>`
      INSERT INTO hub_blobs (cabinet_id, sha256, content, size, created_at)
      VALUES (${cabinetId}, ${sha256}, ${content}, ${content.length}, ${now}::timestamptz)
      ON CONFLICT (cabinet_id, sha256) DO UPDATE SET created_at = ${now}::timestamptz
      RETURNING (xmax = 0) AS inserted`;
    if (!stored?.inserted) return;
    // Counted in the transaction that stores it: refused, nothing stays.
    const [counts] = await tx<{ blobs_count: string; blobs_bytes: string }[]>`
      UPDATE hub_cabinets SET blobs_count = blobs_count + 1, blobs_bytes = blobs_bytes + ${content.length}
      WHERE id = ${cabinetId}
      RETURNING blobs_count, blobs_bytes`;
    assertWithinQuota('blobs', Number(counts?.blobs_count ?? 0), deps.limits.cabinetBlobs);
    assertWithinQuota('blob_bytes', Number(counts?.blobs_bytes ?? 0), deps.limits.cabinetBlobBytes);
  });
  return { sha256, size: content.length };
}

export async function readBlob(deps: HubDeps, cabinetId: string, sha256: string): Promise<Buffer> {
  const [blob] = await deps.sql<{ content: Buffer }[]>`
    SELECT content FROM hub_blobs WHERE cabinet_id = ${cabinetId} AND sha256 = ${sha256}`;
  if (!blob) throw new ApiError('not_found', 'No blob with this SHA-256 in this cabinet.');
  return blob.content;
}
