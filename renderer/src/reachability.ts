import { useEffect, useState } from 'react';
import { getHealth } from '../../shared/meta.js';
import { pathTo } from '../../shared/endpoint.js';

/**
 * Whether the service answers. A call that gets no answer at all says so (reportUnreachable); the
 * shell then shows it in place and asks the health check every few seconds until it answers.
 */

const UNREACHABLE = 'courtier:unreachable';
const RETRY_MS = 3000;

export function reportUnreachable(): void {
  window.dispatchEvent(new Event(UNREACHABLE));
}

/**
 * A live connection to the service dropped (its event stream): asks the health check at once, and
 * says the service is unreachable if it does not answer, so that even an idle page knows within a
 * second or two rather than at its next call.
 */
export function checkReachable(): void {
  void answers().then((ok) => {
    if (!ok) reportUnreachable();
  });
}

async function answers(): Promise<boolean> {
  try {
    return (await fetch(pathTo(getHealth), { cache: 'no-store' })).ok;
  } catch {
    return false;
  }
}

/** reachable, and how many times it came back (a key that reloads the page's data). */
export function useServiceReachable(): { reachable: boolean; recoveries: number } {
  const [reachable, setReachable] = useState(true);
  const [recoveries, setRecoveries] = useState(0);

  useEffect(() => {
    const lost = () => setReachable(false);
    window.addEventListener(UNREACHABLE, lost);
    window.addEventListener('offline', lost);
    return () => {
      window.removeEventListener(UNREACHABLE, lost);
      window.removeEventListener('offline', lost);
    };
  }, []);

  useEffect(() => {
    if (reachable) return;
    let stopped = false;
    const timer = window.setInterval(() => {
      void answers().then((ok) => {
        if (!ok || stopped) return;
        setReachable(true);
        setRecoveries((n) => n + 1);
      });
    }, RETRY_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
  }, [reachable]);

  return { reachable, recoveries };
}
