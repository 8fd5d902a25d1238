import type { PageProps } from '../../slices/types.js';
import { indicatorOf, indicatorTitle } from './format.js';
import { SYNC_STRINGS } from './strings.js';
import { useSyncStatus } from './useSyncStatus.js';

/** The header's refresh: a glance, not a monitor (the Sync page refreshes every few seconds). */
const INDICATOR_POLL_MS = 30_000;

export const SYNC_PAGE_PATH = '/console/sync';

/**
 * In the shell's header, for everyone: how the cabinet's sync is doing, in a few words ("Synced",
 * "Offline — 2 changes waiting", "Catching up after a restored backup"), the last problem as its
 * tooltip; a link to the Sync page for administrators. Nothing while the cabinet does not sync. The
 * region stays in the page, empty or not, so that screen readers announce a change.
 */
export function SyncIndicator({ lang, session }: PageProps) {
  const s = SYNC_STRINGS[lang];
  const { status } = useSyncStatus(INDICATOR_POLL_MS);
  const shown = status === null ? null : indicatorOf(status, s);
  const title = status === null ? s.indicatorLabel : indicatorTitle(status, s, lang);
  const className = shown ? `sync-pill sync-tone-${shown.tone}` : '';
  return (
    <div className="sync-indicator" role="status" aria-label={s.indicatorLabel} data-testid="sync-indicator">
      {shown &&
        (session.user.role === 'admin' ? (
          <a className={className} href={SYNC_PAGE_PATH} title={title}>
            {shown.text}
          </a>
        ) : (
          <span className={className} title={title}>
            {shown.text}
          </span>
        ))}
    </div>
  );
}
