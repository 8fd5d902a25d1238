import { useCallback, useEffect, useState } from 'react';
import { getSyncStatus, type SyncStatus } from '../../../../shared/console-sync.js';
import { call, type ApiFailure } from '../../api.js';
import { createStatusFeed } from './feed.js';

/** The status this page load knows: the indicator and the Sync page show the same one. */
export const syncFeed = createStatusFeed<SyncStatus>();

/**
 * Fetches the status and shows it wherever it is shown, unless a newer one is already; returns the
 * failure, if any. An action calls it to show its effect at once (a discard lowers the count).
 */
export async function refreshSyncStatus(): Promise<ApiFailure | null> {
  const token = syncFeed.begin();
  const result = await call(getSyncStatus);
  if (!result.ok) return result;
  syncFeed.offer(token, result.data);
  return null;
}

/**
 * The cabinet's sync status, fetched now and every `intervalMs` while the component is mounted
 * (skipped while the tab is hidden, fetched again as soon as it shows). `failure` is the last
 * fetch's failure, cleared by the next success; `status` stays the last one known meanwhile.
 */
export function useSyncStatus(intervalMs: number): { status: SyncStatus | null; failure: ApiFailure | null } {
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);

  const refresh = useCallback(async () => setFailure(await refreshSyncStatus()), []);

  useEffect(() => {
    const unsubscribe = syncFeed.subscribe(setStatus);
    let stopped = false;
    let timer: number | undefined;
    const tick = async () => {
      if (!document.hidden) await refresh();
      if (!stopped) timer = window.setTimeout(() => void tick(), intervalMs);
    };
    const onVisibility = () => {
      if (!document.hidden) void refresh();
    };
    void tick();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      unsubscribe();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [intervalMs, refresh]);

  return { status, failure };
}
