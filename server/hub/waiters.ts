import type { Sql } from 'postgres';
import { CHANGES_CHANNEL, DEVICES_CHANNEL } from './store.js';

/** Why a wait ended. */
type WaitEnd = 'woken' | 'timeout' | 'aborted' | 'closed' | 'revoked';

export interface ChangeWaiters {
  /** A device waits for a push to its cabinet; `done` settles once, whichever comes first. */
  wait(cabinetId: string, deviceId: string, ms: number, signal: AbortSignal): { done: Promise<WaitEnd>; cancel(): void };
  /** A push to the cabinet committed (on any hub process). */
  wake(cabinetId: string): void;
  /** The device was revoked (on any hub process): its waits end now, with nothing. */
  revoke(deviceId: string): void;
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
  const byDevice = new Map<string, Set<(end: WaitEnd) => void>>();
  let closed = false;
  const settleAll = (end: WaitEnd) => {
    for (const set of [...byCabinet.values()]) for (const settle of [...set]) settle(end);
  };
  const join = (map: Map<string, Set<(end: WaitEnd) => void>>, key: string, settle: (end: WaitEnd) => void) => {
    const set = map.get(key) ?? new Set();
    map.set(key, set);
    set.add(settle);
    return () => {
      set.delete(settle);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  };
  return {
    wait(cabinetId, deviceId, ms, signal) {
      let settle: (end: WaitEnd) => void = () => undefined;
      const done = new Promise<WaitEnd>((resolve) => {
        if (closed || signal.aborted) return resolve(closed ? 'closed' : 'aborted');
        const onAbort = () => settle('aborted');
        const timer = setTimeout(() => settle('timeout'), Math.max(0, ms));
        let leaveCabinet = () => undefined as void;
        let leaveDevice = () => undefined as void;
        settle = (end) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          leaveCabinet();
          leaveDevice();
          resolve(end);
        };
        leaveCabinet = join(byCabinet, cabinetId, settle);
        leaveDevice = join(byDevice, deviceId, settle);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return { done, cancel: () => settle('aborted') };
    },
    wake(cabinetId) {
      for (const settle of [...(byCabinet.get(cabinetId) ?? [])]) settle('woken');
    },
    revoke(deviceId) {
      for (const settle of [...(byDevice.get(deviceId) ?? [])]) settle('revoked');
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
 * One LISTEN connection per hub app (two channels on it): PostgreSQL delivers the NOTIFY that a
 * push sends once committed to every hub process, this one included, which wakes its own waiters
 * for that cabinet. postgres.js reconnects and listens again by itself; since notifications sent
 * meanwhile are lost, every waiter then reads again.
 */
export async function listenForChanges(sql: Sql, waiters: ChangeWaiters): Promise<{ unlisten(): Promise<void> }> {
  let listening = false;
  const changes = await sql.listen(
    CHANGES_CHANNEL,
    (cabinetId) => waiters.wake(cabinetId),
    () => {
      if (listening) waiters.wakeAll();
      listening = true;
    },
  );
  // A revocation by any hub process (the operator's command, a device leaving) ends that device's waits here too.
  const devices = await sql.listen(DEVICES_CHANNEL, (deviceId) => waiters.revoke(deviceId));
  return {
    unlisten: async () => {
      await changes.unlisten();
      await devices.unlisten();
    },
  };
}
