// The Electron main process: a thin layer over the plain modules beside it (main-reactions,
// console-access, server-process, server-log, window, tray, notifications, policy, settings, updates,
// single-instance), which hold every decision and are tested in Node. This file wires the server's
// supervision, the tray and notifications; console-window.ts the window and its sign-in,
// server-child.ts the utility process, auto-update.ts the updater, desktop-context.ts what they share.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, nativeImage, Notification, session, shell, Tray, utilityProcess } from 'electron';
import electronUpdater from 'electron-updater';
import { setUpUpdates } from './auto-update.js';
import { createConsoleWindow } from './console-window.js';
import { log, sha256, type DesktopDeps, type DesktopState } from './desktop-context.js';
import { TRAY_ICON_PNG_BASE64 } from './icon.js';
import { keychainService } from './keychain.js';
import {
  idleRestartDue,
  localeOf,
  reactToServerState,
  reactToTrayAction,
  startupChoices,
  trayInput,
  type TrayEffect,
} from './main-reactions.js';
import { createMfaNotifier, type NotificationIntent } from './notifications.js';
import { loadPolicy, policyFilePath } from '../server/policy.js';
import type { ChildMessage } from './protocol.js';
import { forkServer } from './server-child.js';
import { openServerLog } from './server-log.js';
import { createSupervisor, type ServerState } from './server-process.js';
import { DEFAULT_USER_SETTINGS, effectiveSettings, parseUserSettings, serverEnvironment, type UserSettings } from './settings.js';
import { acquireSingleInstance, launchedHidden } from './single-instance.js';
import { buildTrayModel, menuTemplate, type TrayAction } from './tray.js';

export interface DesktopApp {
  start(): Promise<void>;
  /** Shows the window on a console page (the home page by default), signing in first when needed. */
  openConsole(path?: string): Promise<void>;
}

export function createDesktopApp(deps: DesktopDeps): DesktopApp {
  const { app, Menu, nativeImage, Notification, Tray, utilityProcess, platform, env, startHidden } = deps;
  const state: DesktopState = {
    window: null,
    tray: null,
    quitting: false,
    consoleOrigin: null,
    serverState: { phase: 'stopped' },
    status: null,
    pendingToken: null,
    restartWhenIdle: false,
    locale: 'fr',
    settingsFile: '',
    userSettings: DEFAULT_USER_SETTINGS,
    policyProblems: [],
    managed: [],
    policy: { policy: {}, path: '', present: false, problems: [] },
    serverLog: null,
    serverControl: null,
    liveNotifications: new Set<Notification>(),
  };
  const consoleWindow = createConsoleWindow({ deps, state, current });
  const { openConsole } = consoleWindow;
  const notifier = createMfaNotifier({ enabled: () => state.userSettings.mfaNotifications, locale: () => state.locale });

  function current() {
    return effectiveSettings(state.userSettings, state.policy.policy);
  }

  function saveSettings(next: UserSettings): void {
    state.userSettings = next;
    writeFileSync(state.settingsFile, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  }

  async function start(): Promise<void> {
    await app.whenReady();
    const choices = startupChoices(platform);
    if (choices.appUserModelId) app.setAppUserModelId(choices.appUserModelId);
    state.locale = localeOf(app.getLocale());
    const userData = app.getPath('userData');
    const dataDir = join(userData, 'data');
    mkdirSync(dataDir, { recursive: true });
    state.settingsFile = join(userData, 'settings.json');
    const loaded = parseUserSettings(existsSync(state.settingsFile) ? readFileSync(state.settingsFile, 'utf8') : null);
    state.userSettings = loaded.settings;
    state.policy = loadPolicy({ readFile: (p) => readFileSync(p) }, policyFilePath(platform, env));
    const policyFile = state.policy.path;
    state.policyProblems = [...state.policy.problems, ...(loaded.problem ? [loaded.problem] : [])];
    for (const problem of state.policyProblems) log('warn', problem);
    state.managed = current().managed;
    if (choices.hideDockWhenOpenedAtLogin && app.getLoginItemSettings().wasOpenedAtLogin) app.dock?.hide();

    consoleWindow.harden();
    state.serverLog = openServerLog(app.getPath('logs'));

    const supervisor = createSupervisor({
      spawn: (childEnv) => forkServer(utilityProcess, childEnv, state.serverLog),
      environment: () => {
        const token = randomBytes(32).toString('base64url');
        state.pendingToken = { token, issuedAt: Date.now() };
        return {
          ...serverEnvironment(env, current(), { dataDir, loginTokenSha256: sha256(token), policyFile }),
          COURTIER_KEYCHAIN_SERVICE: keychainService(app.isPackaged),
        };
      },
      onState: (next) => onServerState(next),
      onMessage: (message) => onServerMessage(message),
      onWarning: (text) => log('warn', text),
    });
    state.serverControl = supervisor;
    supervisor.start();

    const tray = new Tray(nativeImage.createFromDataURL(`data:image/png;base64,${TRAY_ICON_PNG_BASE64}`));
    state.tray = tray;
    tray.on('click', () => void openConsole());
    refreshTray();

    app.on('activate', () => void openConsole());
    app.on('window-all-closed', () => {
      // The service keeps running in the tray; quitting is explicit.
    });
    app.on('before-quit', (event) => {
      if (state.quitting) return;
      state.quitting = true;
      event.preventDefault();
      void supervisor.stop().finally(() => {
        state.serverLog?.end();
        app.quit();
      });
    });
    setUpUpdates(current(), { packaged: app.isPackaged, platform, env, autoUpdater: deps.autoUpdater });
  }

  // ---- the server ----

  function onServerState(next: ServerState): void {
    state.serverState = next;
    const view = { lastPort: state.userSettings.lastPort, windowOpen: state.window !== null, startHidden, locale: state.locale };
    const reaction = reactToServerState(next, view);
    log(reaction.logLevel, `server ${next.phase}`, { state: next });
    if (reaction.consoleOrigin) state.consoleOrigin = reaction.consoleOrigin;
    if (reaction.saveLastPort !== null) saveSettings({ ...state.userSettings, lastPort: reaction.saveLastPort });
    if (reaction.warning) log('warn', reaction.warning);
    if (reaction.window === 'sign-in-again') void consoleWindow.signInAgain();
    else if (reaction.window === 'open') void openConsole();
    if (reaction.notification && Notification.isSupported()) show(new Notification(reaction.notification));
    refreshTray();
  }

  function onServerMessage(message: ChildMessage): void {
    if (message.type === 'fatal') log('error', `server: ${message.message}`);
    if (message.type !== 'status') return;
    const status = message.status;
    state.status = status;
    const focused = state.window !== null && state.window.isFocused();
    for (const intent of notifier.update(status.jobs, { focused, url: state.window?.webContents.getURL() ?? null })) notify(intent);
    if (idleRestartDue(state.restartWhenIdle, status)) {
      state.restartWhenIdle = false;
      void state.serverControl?.restart();
    }
    refreshTray();
  }

  // ---- notifications ----

  function show(notification: Notification): void {
    // Kept referenced until closed: a collected notification loses its click handler (Windows).
    state.liveNotifications.add(notification);
    notification.on('close', () => state.liveNotifications.delete(notification));
    notification.show();
  }

  function notify(intent: NotificationIntent): void {
    if (!Notification.isSupported()) return;
    const notification = new Notification({ title: intent.title, body: intent.body, urgency: 'critical', timeoutType: 'never' });
    notification.on('click', () => {
      state.liveNotifications.delete(notification);
      void openConsole(intent.target);
    });
    show(notification);
  }

  // ---- the tray ----

  function refreshTray(): void {
    const tray = state.tray;
    if (!tray) return;
    const { serverState: server, status, policyProblems, locale } = state;
    const model = buildTrayModel(trayInput({ server, status, settings: current(), policyProblems, platform, locale }));
    tray.setToolTip(model.tooltip);
    tray.setContextMenu(Menu.buildFromTemplate(menuTemplate(model.items, (action) => void onTrayAction(action))));
  }

  async function onTrayAction(action: TrayAction): Promise<void> {
    const effects = reactToTrayAction(action, {
      userSettings: state.userSettings,
      runningJobs: state.status?.jobs.length ?? 0,
      locale: state.locale,
    });
    for (const effect of effects) await perform(effect);
  }

  async function perform(effect: TrayEffect): Promise<void> {
    switch (effect.type) {
      case 'open-console':
        return openConsole(effect.path);
      case 'set-robots':
        await state.serverControl
          ?.request({ type: 'set-robots', enabled: effect.enabled, reason: effect.reason })
          .catch((err: unknown) => log('warn', 'the kill switch could not be changed', { err: String(err) }));
        return;
      case 'set-login-item':
        app.setLoginItemSettings({ openAtLogin: effect.openAtLogin, args: ['--hidden'] });
        return;
      case 'save-settings':
        return saveSettings(effect.settings);
      case 'restart-server':
        void state.serverControl?.restart();
        return;
      case 'restart-when-idle':
        state.restartWhenIdle = true;
        return;
      case 'refresh-tray':
        return refreshTray();
      case 'quit':
        app.quit();
        return;
    }
  }

  return { start, openConsole };
}

// ---- the process ----

const desktop = createDesktopApp({
  app,
  BrowserWindow,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  session,
  shell,
  Tray,
  utilityProcess,
  autoUpdater: () => electronUpdater.autoUpdater,
  platform: process.platform,
  env: process.env,
  startHidden: launchedHidden(process.argv),
});
if (acquireSingleInstance(app, () => void desktop.openConsole())) {
  void desktop.start().catch((err: unknown) => {
    log('error', 'the desktop app could not start', { err: String(err) });
    app.exit(1);
  });
}
