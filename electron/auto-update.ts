import { log, type AppUpdater } from './desktop-context.js';
import type { EffectiveSettings } from './settings.js';
import { CHECK_INTERVAL_MS, FIRST_CHECK_DELAY_MS, updateFeed } from './updates.js';

/** Automatic updates from the IT policy's generic feed (updates.ts decides whether, and where from). */
export function setUpUpdates(
  settings: EffectiveSettings,
  context: { packaged: boolean; platform: NodeJS.Platform; env: NodeJS.ProcessEnv; autoUpdater: () => AppUpdater },
): void {
  const feed = updateFeed(settings, { packaged: context.packaged, platform: context.platform, env: context.env });
  if (!feed.enabled) {
    log('info', `automatic updates off: ${feed.reason}`);
    return;
  }
  const autoUpdater = context.autoUpdater();
  autoUpdater.setFeedURL({ provider: 'generic', url: feed.url, channel: feed.channel });
  autoUpdater.channel = feed.channel;
  autoUpdater.allowPrerelease = feed.allowPrerelease;
  autoUpdater.allowDowngrade = false;
  autoUpdater.autoDownload = true;
  autoUpdater.autoInstallOnAppQuit = true;
  autoUpdater.on('error', (err) => log('warn', 'update check failed', { err: String(err) }));
  const check = () => void autoUpdater.checkForUpdatesAndNotify().catch((err: unknown) => log('warn', 'update check failed', { err: String(err) }));
  setTimeout(check, FIRST_CHECK_DELAY_MS).unref();
  setInterval(check, CHECK_INTERVAL_MS).unref();
}

