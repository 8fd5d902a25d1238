import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * `randomBytes` served from a pool that the CSPRNG refills a few KiB at a time, as Node's own
 * `randomUUID` does: a call into OpenSSL costs the same whatever its size, and every event and
 * record id takes 16 bytes (two or three per finished job). Each byte is handed out once and zeroed
 * in the pool as it leaves; a request larger than the pool goes to `randomBytes` directly.
 */
export function pooledRandomBytes(poolSize = 4096): (size: number) => Buffer {
  const pool = Buffer.alloc(poolSize);
  let offset = poolSize;
  return (size) => {
    if (size > poolSize) return randomBytes(size);
    if (offset + size > poolSize) {
      randomFillSync(pool);
      offset = 0;
    }
    const bytes = Buffer.alloc(size);
    pool.copy(bytes, 0, offset, offset + size);
    pool.fill(0, offset, offset + size);
    offset += size;
    return bytes;
  };
}
