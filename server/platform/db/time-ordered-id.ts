/**
 * A UUID of version 7 (RFC 9562): the creation time in Unix milliseconds (48 bits), then 74 random
 * bits. The ids of rows created one after another sort next to each other, so a row's insert into
 * its id's unique index lands on the index's last page instead of a random one: the creates that
 * commit together (db/commit-group.ts) then dirty that one page between them, not one page each,
 * and write fewer pages each to the WAL. The time it shows is the row's created_at, already public.
 */
export function timeOrderedUuid(nowMs: number, randomBytes: (size: number) => Buffer): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Math.max(0, Math.trunc(nowMs)), 0, 6);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
