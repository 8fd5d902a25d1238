/**
 * Says "something was committed" (an outbox event, a claimable job). notify() may be called
 * inside a transaction: listeners run on a later turn of the event loop, after the commit, so
 * that they read what was committed; notifications in one turn coalesce into one call.
 */
export interface AfterCommitSignal {
  notify(): void;
  listen(listener: () => void): () => void;
}

export function createAfterCommitSignal(): AfterCommitSignal {
  const listeners = new Set<() => void>();
  let scheduled = false;
  return {
    notify() {
      if (scheduled || listeners.size === 0) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        for (const listener of listeners) listener();
      });
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
