import { useEffect, useState } from 'react';
import { getConsoleStatus } from '../../../../shared/console-admin.js';
import { call } from '../../api.js';
import type { PageProps } from '../../slices/types.js';
import { ADMIN_STRINGS } from './strings.js';

/** How often every page reads whether the cabinet's robots are paused (an admin elsewhere may pause them). */
const CHECK_EVERY_MS = 30_000;
const CHANGED = 'courtier:robot-pause';

/** Tells every banner of this tab that the pause changed here, so that it reads it again at once. */
export function announceRobotPause(): void {
  window.dispatchEvent(new Event(CHANGED));
}

/**
 * A banner above every page while the cabinet's robots are paused (by an admin of the cabinet),
 * so that nobody prices wondering why nothing moves; it links to where they are resumed.
 */
export function RobotsPausedBanner({ lang, session }: PageProps) {
  const s = ADMIN_STRINGS[lang];
  const [paused, setPaused] = useState(false);
  // Until a forced password change is done, the console asks for nothing else (the service would refuse it).
  const mustChange = session.user.must_change_password;
  useEffect(() => {
    if (mustChange) return;
    let cancelled = false;
    const check = () =>
      void call(getConsoleStatus).then((result) => {
        if (!cancelled && result.ok) setPaused(result.data.cabinet_pause !== null);
      });
    check();
    const timer = window.setInterval(check, CHECK_EVERY_MS);
    window.addEventListener(CHANGED, check);
    return () => {
      cancelled = true;
      window.clearInterval(timer);
      window.removeEventListener(CHANGED, check);
    };
  }, [mustChange]);
  if (!paused || mustChange) return null;
  return (
    <p className="admin-paused-banner" role="status">
      {s.pausedBanner} <a href="/console/wallet">{s.pausedBannerLink}</a>
    </p>
  );
}
