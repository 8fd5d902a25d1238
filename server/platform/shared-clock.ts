import type { Clock } from '../deps.js';

/**
 * A clock whose time lives in shared memory (one BigInt64 of milliseconds): a test sets it on the
 * main thread and the webhook dispatcher's thread reads the same time.
 */
export interface SharedClock extends Clock {
  readonly buffer: SharedArrayBuffer;
  set(ms: number): void;
}

export function createSharedClock(startMs: number): SharedClock {
  const buffer = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const time = new BigInt64Array(buffer);
  Atomics.store(time, 0, BigInt(startMs));
  return { buffer, now: () => Number(Atomics.load(time, 0)), set: (ms) => void Atomics.store(time, 0, BigInt(ms)) };
}

/** Reads, on another thread, the time a SharedClock holds. */
export function readSharedClock(buffer: SharedArrayBuffer): Clock {
  const time = new BigInt64Array(buffer);
  return { now: () => Number(Atomics.load(time, 0)) };
}
