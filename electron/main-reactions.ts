import { CONSOLE_HOME } from './console-access.js';
import { keychainWarning } from './keychain.js';
import type { ServerStatus } from './protocol.js';
import type { ServerState } from './server-process.js';
import type { EffectiveSettings, UserSettings } from './settings.js';
import type { TrayAction, TrayInput } from './tray.js';
import { jobPath } from './window.js';

/**
 * What the main process does about each event (the start, a server state, a status, a tray click):
 * pure functions of the event and the state, returning what to do; main.ts does it with Electron.
 */

export type Locale = 'fr' | 'en';

/** French for a French system, English otherwise. */
export function localeOf(appLocale: string): Locale {
  return appLocale.toLowerCase().startsWith('fr') ? 'fr' : 'en';
}

/** What the platform asks of the app as it starts. */
export function startupChoices(platform: NodeJS.Platform): {
  /** Windows groups notifications and the taskbar under this id. */
  appUserModelId: string | null;
  /** macOS: started at login, the app lives in the menu bar only (no dock icon). */
  hideDockWhenOpenedAtLogin: boolean;
} {
  return { appUserModelId: platform === 'win32' ? 'fr.courtier.desktop' : null, hideDockWhenOpenedAtLogin: platform === 'darwin' };
}

export interface ServerStateReaction {
  logLevel: 'info' | 'warn';
  /** The console's new origin once the server listens; null: unchanged. */
  consoleOrigin: string | null;
  /** The port to start on next time (on loopback, so that the console keeps its origin and storage); null: unchanged. */
  saveLastPort: number | null;
  /** A warning about the server worth a log line (its secret store fell back). */
  warning: string | null;
  /** The window signs in again with the token of this start, or opens (unless started hidden). */
  window: 'sign-in-again' | 'open' | 'none';
  /** The server gave up: the broker must know, even with the window closed. */
  notification: { title: string; body: string } | null;
}

export function reactToServerState(
  next: ServerState,
  view: { lastPort: number; windowOpen: boolean; startHidden: boolean; locale: Locale },
): ServerStateReaction {
  const reaction: ServerStateReaction = {
    logLevel: next.phase === 'failed' || next.phase === 'restarting' ? 'warn' : 'info',
    consoleOrigin: null,
    saveLastPort: null,
    warning: null,
    window: 'none',
    notification: null,
  };
  if (next.phase === 'running') {
    return {
      ...reaction,
      consoleOrigin: next.url,
      saveLastPort: view.lastPort !== next.port ? next.port : null,
      warning: next.secretStoreWarning,
      // The token handed over at this start signs the window in (now, or when it is first opened).
      window: view.windowOpen ? 'sign-in-again' : view.startHidden ? 'none' : 'open',
    };
  }
  if (next.phase === 'failed') {
    const body = view.locale === 'fr' ? `Le service s’est arrêté : ${next.reason}` : `The service stopped: ${next.reason}`;
    return { ...reaction, notification: { title: 'Courtier', body } };
  }
  return reaction;
}

/** A restart that waited for the robots (showing their browser needs a new server) is due once no job runs. */
export function idleRestartDue(waiting: boolean, status: ServerStatus): boolean {
  return waiting && status.jobs.length === 0;
}

/** The tray's input from the state: the policy's problems, then the keychain fallback, among the warnings. */
export function trayInput(input: {
  server: ServerState;
  status: ServerStatus | null;
  settings: EffectiveSettings;
  policyProblems: readonly string[];
  platform: NodeJS.Platform;
  locale: Locale;
}): TrayInput {
  const { server, status, settings, locale } = input;
  const keychain = server.phase === 'running' ? keychainWarning(server.secretStore, locale) : null;
  return {
    server,
    jobs: status?.jobs ?? [],
    robotsEnabled: status ? status.robots_enabled : null,
    killSwitchReason: status?.kill_switch_reason ?? null,
    robotsDisabledByPolicy: settings.robotsDisabledByPolicy,
    startAtLogin: settings.startAtLogin,
    // setLoginItemSettings exists on Windows and macOS only.
    startAtLoginSupported: input.platform === 'win32' || input.platform === 'darwin',
    robotsHeaded: settings.robotsHeaded,
    mfaNotifications: settings.mfaNotifications,
    warnings: [...input.policyProblems, ...(keychain ? [keychain] : [])],
    locale,
  };
}

/** One thing main.ts does for a tray click, in the order given. */
export type TrayEffect =
  | { type: 'open-console'; path: string }
  | { type: 'set-robots'; enabled: boolean; reason: string }
  | { type: 'set-login-item'; openAtLogin: boolean }
  | { type: 'save-settings'; settings: UserSettings }
  | { type: 'restart-server' }
  | { type: 'restart-when-idle' }
  | { type: 'refresh-tray' }
  | { type: 'quit' };

export function reactToTrayAction(
  action: TrayAction,
  state: { userSettings: UserSettings; runningJobs: number; locale: Locale },
): TrayEffect[] {
  const settings = state.userSettings;
  switch (action.type) {
    case 'open-console':
      return [{ type: 'open-console', path: CONSOLE_HOME }];
    case 'open-job':
      return [{ type: 'open-console', path: jobPath(action.jobId) }];
    case 'pause-robots':
    case 'resume-robots': {
      const reason = state.locale === 'fr' ? 'Suspendu depuis l’application de bureau.' : 'Paused from the desktop app.';
      // The server reports the switch in its next status, which refreshes the tray.
      return [{ type: 'set-robots', enabled: action.type === 'resume-robots', reason }];
    }
    case 'toggle-start-at-login': {
      const openAtLogin = !settings.startAtLogin;
      return [
        { type: 'set-login-item', openAtLogin },
        { type: 'save-settings', settings: { ...settings, startAtLogin: openAtLogin } },
        { type: 'refresh-tray' },
      ];
    }
    case 'toggle-robots-headed':
      // The robots' browser starts with the server: restart now, or once the running jobs are done.
      return [
        { type: 'save-settings', settings: { ...settings, robotsHeaded: !settings.robotsHeaded } },
        state.runningJobs === 0 ? { type: 'restart-server' } : { type: 'restart-when-idle' },
        { type: 'refresh-tray' },
      ];
    case 'toggle-mfa-notifications':
      return [{ type: 'save-settings', settings: { ...settings, mfaNotifications: !settings.mfaNotifications } }, { type: 'refresh-tray' }];
    case 'restart-server':
      return [{ type: 'restart-server' }, { type: 'refresh-tray' }];
    case 'quit':
      return [{ type: 'quit' }];
  }
}
