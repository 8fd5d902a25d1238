import type { Clock } from '../deps.js';

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** End of the current window, ms since epoch. */
  resetAtMs: number;
  /** Whole seconds until the window ends, for RateLimit-Reset and Retry-After. */
  resetInSeconds: number;
}

export interface RateLimiter {
  hit(id: string): RateLimitState;
}

/**
 * Fixed windows aligned on multiples of the window length, so that every response of a window
 * reports the same reset time. State lives in this instance only: one server process counts.
 */
export function createRateLimiter(options: { limit: number; windowMs: number; clock: Clock }): RateLimiter {
  const { limit, windowMs, clock } = options;
  const windows = new Map<string, { start: number; count: number }>();
  return {
    hit(id) {
      const now = clock.now();
      const start = now - (now % windowMs);
      let window = windows.get(id);
      if (!window || window.start !== start) {
        if (windows.size > 10_000) for (const [k, w] of windows) if (w.start !== start) windows.delete(k);
        window = { start, count: 0 };
        windows.set(id, window);
      }
      const allowed = window.count < limit;
      if (allowed) window.count += 1;
      return {
        allowed,
        limit,
        remaining: limit - window.count,
        resetAtMs: start + windowMs,
        resetInSeconds: Math.ceil((start + windowMs - now) / 1000),
      };
    },
  };
}
