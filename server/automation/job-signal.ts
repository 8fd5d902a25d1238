import { createAfterCommitSignal, type AfterCommitSignal } from '../platform/after-commit-signal.js';

/**
 * The automation module's in-process signals. Both may be notified inside a transaction: listeners
 * run on a later turn of the event loop, once the transaction (and a POST's stored response) has
 * committed, so that they read what was committed. A signal only says "look again"; the database
 * stays the truth, and the worker's tick still finds anything a signal missed (another process's
 * enqueue, a lease that ran out).
 */

/** One job row that changed (status, progress, MFA wait, result, artifacts). */
export interface JobChange {
  cabinetId: string;
  jobId: string;
}

/**
 * Says "these job rows changed", for the console's live feed. Listeners get, once per turn, every
 * job changed meanwhile (a job that changed five times in a turn is listed once).
 */
export interface JobSignal {
  notify(cabinetId: string, jobId: string): void;
  listen(listener: (changes: readonly JobChange[]) => void): () => void;
}

export function createJobSignal(): JobSignal {
  const listeners = new Set<(changes: readonly JobChange[]) => void>();
  let pending = new Map<string, JobChange>();
  return {
    notify(cabinetId, jobId) {
      if (listeners.size === 0) return;
      const first = pending.size === 0;
      pending.set(jobId, { cabinetId, jobId });
      if (!first) return;
      setImmediate(() => {
        const changes = [...pending.values()];
        pending = new Map();
        for (const listener of listeners) listener(changes);
      });
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Says "a job may be claimable now" (one was enqueued, or robots were switched back on), for the
 * worker: it claims at once rather than at its next tick. Callers never wake the worker
 * themselves; the service that made the job claimable notifies. Notifications within a turn
 * coalesce into one call.
 */
export type JobQueueSignal = AfterCommitSignal;

export const createJobQueueSignal: () => JobQueueSignal = createAfterCommitSignal;
