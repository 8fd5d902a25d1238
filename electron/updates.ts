import type { EffectiveSettings } from './settings.js';

/**
 * Automatic updates through electron-updater's generic provider: a static HTTPS folder holding the
 * installers and latest.yml / latest-mac.yml (what `npm run dist` writes to release/). The feed URL
 * and the channel come from the IT policy; without a URL there are no automatic updates.
 */

export type UpdateFeed =
  { enabled: true; provider: 'generic'; url: string; channel: string; allowPrerelease: boolean } | { enabled: false; reason: string };

export function updateFeed(
  settings: Pick<EffectiveSettings, 'autoUpdate'>,
  context: { packaged: boolean; platform: NodeJS.Platform; env?: NodeJS.ProcessEnv },
): UpdateFeed {
  if (!context.packaged) return { enabled: false, reason: 'development build (npm run desktop): no automatic updates' };
  if (settings.autoUpdate.enabled === false) return { enabled: false, reason: 'automatic updates are turned off by the IT policy' };
  if (!settings.autoUpdate.url) return { enabled: false, reason: 'no update feed: set autoUpdate.url in the IT policy' };
  // AppImage updates itself only when run as an AppImage; a distribution package is updated by its package manager.
  if (context.platform === 'linux' && !context.env?.APPIMAGE) return { enabled: false, reason: 'not running as an AppImage' };
  const channel = settings.autoUpdate.channel;
  return { enabled: true, provider: 'generic', url: settings.autoUpdate.url, channel, allowPrerelease: channel !== 'latest' };
}

/** How the updater is set for an enabled feed: downloads on its own, installs on quit, never downgrades. */
export function updaterConfiguration(feed: Extract<UpdateFeed, { enabled: true }>) {
  return {
    feed: { provider: feed.provider, url: feed.url, channel: feed.channel },
    channel: feed.channel,
    allowPrerelease: feed.allowPrerelease,
    allowDowngrade: false,
    autoDownload: true,
    autoInstallOnAppQuit: true,
  } as const;
}

/** First check a minute after the start, then every 6 hours. */
export const FIRST_CHECK_DELAY_MS = 60_000;
export const CHECK_INTERVAL_MS = 6 * 3600_000;
