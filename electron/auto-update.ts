import { log, type AppUpdater } from './desktop-context.js';
import type { EffectiveSettings } from './settings.js';
import { CHECK_INTERVAL_MS, FIRST_CHECK_DELAY_MS, updateFeed, updaterConfiguration } from './updates.js';

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
  const configuration = updaterConfiguration(feed);
  autoUpdater.setFeedURL(configuration.feed);
  autoUpdater.channel = configuration.channel;
  autoUpdater.allowPrerelease = configuration.allowPrerelease;
  autoUpdater.allowDowngrade = configuration.allowDowngrade;
  autoUpdater.autoDownload = configuration.autoDownload;
  autoUpdater.autoInstallOnAppQuit = configuration.autoInstallOnAppQuit;
  autoUpdater.on('error', (err) => log('warn', 'update check failed', { err: String(err) }));
  const check = () =>
    void autoUpdater.checkForUpdatesAndNotify().catch((err: unknown) => log('warn', 'update check failed', { err: String(err) }));
  setTimeout(check, FIRST_CHECK_DELAY_MS).unref();
  setInterval(check, CHECK_INTERVAL_MS).unref();
}
