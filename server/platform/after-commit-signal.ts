/**
 * Says "something was committed" (an outbox event, a claimable job). notify() may be called
 * inside a transaction: listeners run on a later turn of the event loop, after the commit, so
 * that they read what was committed; notifications in one turn coalesce into one call.
 */
export interface AfterCommitSignal {
  notify(): void;
  listen(listener: () => void): () => void;
}

/** A monotonic clock and a timer: real ones by default, a test's to drive the spacing. */
export interface SignalTimer {
  now(): number;
  after(ms: number, run: () => void): void;
}

const REAL_TIMER: SignalTimer = {
  now: () => performance.now(),
  after: (ms, run) => void setTimeout(run, ms),
};

export interface SignalOptions {
  /**
   * Listeners run at most once per this many ms: a notification soon after a run waits for the
   * rest of the interval, and every notification meanwhile joins it. A notification after a quiet
   * spell runs on the next turn, as without it. 0 (the default): once per turn.
   */
  minIntervalMs?: number;
  timer?: SignalTimer;
}

export function createAfterCommitSignal(options: SignalOptions = {}): AfterCommitSignal {
  const { minIntervalMs = 0, timer = REAL_TIMER } = options;
  const listeners = new Set<() => void>();
  let scheduled = false;
  let lastRun = Number.NEGATIVE_INFINITY;
  const run = () => {
    scheduled = false;
    lastRun = timer.now();
    for (const listener of listeners) listener();
  };
  return {
    notify() {
      if (scheduled || listeners.size === 0) return;
      scheduled = true;
      const wait = lastRun + minIntervalMs - timer.now();
      if (wait > 0) timer.after(wait, run);
      else setImmediate(run);
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
