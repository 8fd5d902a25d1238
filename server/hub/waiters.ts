import type { Sql } from 'postgres';
import { CHANGES_CHANNEL } from './store.js';

/** Why a wait ended. */
type WaitEnd = 'woken' | 'timeout' | 'aborted' | 'closed';

export interface ChangeWaiters {
  /** Waits for a push to the cabinet; `done` settles once, whichever comes first. */
  wait(cabinetId: string, ms: number, signal: AbortSignal): { done: Promise<WaitEnd>; cancel(): void };
  /** A push to the cabinet committed (on any hub process). */
  wake(cabinetId: string): void;
  /** Notifications may have been missed (LISTEN reconnected): every waiter reads again. */
  wakeAll(): void;
  /** The hub stops: every waiter answers now, and later waits end at once. */
  close(): void;
  /** Pulls waiting right now. */
  count(): number;
}

/** The long polls of one hub app, by cabinet. Owned by the app instance: two apps in a process never share it. */
export function createChangeWaiters(): ChangeWaiters {
  const byCabinet = new Map<string, Set<(end: WaitEnd) => void>>();
  let closed = false;
  const settleAll = (end: WaitEnd) => {
    for (const set of [...byCabinet.values()]) for (const settle of [...set]) settle(end);
  };
  return {
    wait(cabinetId, ms, signal) {
      let settle: (end: WaitEnd) => void = () => undefined;
      const done = new Promise<WaitEnd>((resolve) => {
        if (closed || signal.aborted) return resolve(closed ? 'closed' : 'aborted');
        const set = byCabinet.get(cabinetId) ?? new Set();
        byCabinet.set(cabinetId, set);
        const onAbort = () => settle('aborted');
        const timer = setTimeout(() => settle('timeout'), Math.max(0, ms));
        settle = (end) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          set.delete(settle);
          if (set.size === 0 && byCabinet.get(cabinetId) === set) byCabinet.delete(cabinetId);
          resolve(end);
        };
        set.add(settle);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return { done, cancel: () => settle('aborted') };
    },
    wake(cabinetId) {
      for (const settle of [...(byCabinet.get(cabinetId) ?? [])]) settle('woken');
    },
    wakeAll: () => settleAll('woken'),
    close() {
      closed = true;
      settleAll('closed');
    },
    count: () => [...byCabinet.values()].reduce((n, set) => n + set.size, 0),
  };
}

/**
 * One LISTEN connection per hub app: PostgreSQL delivers each committed push's NOTIFY to every
 * hub process, which wakes its own waiters for that cabinet. postgres.js reconnects and listens
 * again by itself; since notifications sent meanwhile are lost, every waiter then reads again.
 */
export async function listenForChanges(sql: Sql, waiters: ChangeWaiters): Promise<{ unlisten(): Promise<void> }> {
  let listening = false;
  const meta = await sql.listen(CHANGES_CHANNEL, (cabinetId) => waiters.wake(cabinetId), () => {
    if (listening) waiters.wakeAll();
    listening = true;
  });
  return { unlisten: () => meta.unlisten() };
}
