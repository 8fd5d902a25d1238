// The Electron main process: a thin layer over the plain modules beside it (server-process,
// window, tray, notifications, policy, settings, updates, single-instance), which hold every decision
// and are tested in Node. This file wires the server's supervision, the tray and notifications;
// console-window.ts the window and its sign-in, server-child.ts the utility process, auto-update.ts
// the updater, desktop-context.ts what they share.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, nativeImage, Notification, session, shell, Tray, utilityProcess, type MenuItemConstructorOptions } from 'electron';
import electronUpdater from 'electron-updater';
import { setUpUpdates } from './auto-update.js';
import { createConsoleWindow } from './console-window.js';
import { log, sha256, type DesktopDeps, type DesktopState } from './desktop-context.js';
import { TRAY_ICON_PNG_BASE64 } from './icon.js';
import { keychainService, keychainWarning } from './keychain.js';
import { createMfaNotifier, type NotificationIntent } from './notifications.js';
import { loadPolicy, policyFilePath } from './policy.js';
import type { ChildMessage } from './protocol.js';
import { forkServer, openServerLog } from './server-child.js';
import { createSupervisor, type ServerState } from './server-process.js';
import { DEFAULT_USER_SETTINGS, effectiveSettings, parseUserSettings, serverEnvironment, type UserSettings } from './settings.js';
import { acquireSingleInstance, launchedHidden } from './single-instance.js';
import { buildTrayModel, type TrayAction, type TrayItem } from './tray.js';

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
    pendingTokenAt: 0,
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
    if (platform === 'win32') app.setAppUserModelId('fr.courtier.desktop');
    state.locale = app.getLocale().toLowerCase().startsWith('fr') ? 'fr' : 'en';
    const userData = app.getPath('userData');
    const dataDir = join(userData, 'data');
    mkdirSync(dataDir, { recursive: true });
    state.settingsFile = join(userData, 'settings.json');
    const loaded = parseUserSettings(existsSync(state.settingsFile) ? readFileSync(state.settingsFile, 'utf8') : null);
    state.userSettings = loaded.settings;
    state.policy = loadPolicy({ readFile: (p) => readFileSync(p) }, policyFilePath(platform, env));
    state.policyProblems = [...state.policy.problems, ...(loaded.problem ? [loaded.problem] : [])];
    for (const problem of state.policyProblems) log('warn', problem);
    state.managed = current().managed;
    if (platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin) app.dock?.hide();

    consoleWindow.harden();
    state.serverLog = openServerLog(app.getPath('logs'));

    const supervisor = createSupervisor({
      spawn: (childEnv) => forkServer(utilityProcess, childEnv, state.serverLog),
      environment: () => {
        const token = randomBytes(32).toString('base64url');
        state.pendingToken = token;
        state.pendingTokenAt = Date.now();
        return {
          ...serverEnvironment(env, current(), { dataDir, loginTokenSha256: sha256(token) }),
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
    log(next.phase === 'failed' || next.phase === 'restarting' ? 'warn' : 'info', `server ${next.phase}`, { state: next });
    if (next.phase === 'running') {
      state.consoleOrigin = next.url;
      const settings = current();
      if (!settings.lanSharing && state.userSettings.lastPort !== next.port) saveSettings({ ...state.userSettings, lastPort: next.port });
      if (next.secretStoreWarning) log('warn', next.secretStoreWarning);
      // The token handed over at this start signs the window in (now, or when it is first opened).
      if (state.window) void consoleWindow.signInAgain();
      else if (!startHidden) void openConsole();
    } else if (next.phase === 'failed' && Notification.isSupported()) {
      show(new Notification({ title: 'Courtier', body: state.locale === 'fr' ? `Le service s’est arrêté : ${next.reason}` : `The service stopped: ${next.reason}` }));
    }
    refreshTray();
  }

  function onServerMessage(message: ChildMessage): void {
    if (message.type === 'fatal') log('error', `server: ${message.message}`);
    if (message.type !== 'status') return;
    const status = message.status;
    state.status = status;
    const focused = state.window !== null && state.window.isFocused();
    for (const intent of notifier.update(status.jobs, { focused, url: state.window?.webContents.getURL() ?? null })) notify(intent);
    if (state.restartWhenIdle && status.jobs.length === 0) {
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
    const settings = current();
    const server = state.serverState;
    const status = state.status;
    const warnings = [...state.policyProblems];
    if (server.phase === 'running') {
      const warning = keychainWarning(server.secretStore, state.locale);
      if (warning) warnings.push(warning);
    }
    const model = buildTrayModel({
      server,
      jobs: status?.jobs ?? [],
      robotsEnabled: status ? status.robots_enabled : null,
      killSwitchReason: status?.kill_switch_reason ?? null,
      robotsDisabledByPolicy: settings.robotsDisabledByPolicy,
      startAtLogin: settings.startAtLogin,
      startAtLoginSupported: platform === 'win32' || platform === 'darwin',
      robotsHeaded: settings.robotsHeaded,
      mfaNotifications: settings.mfaNotifications,
      warnings,
      locale: state.locale,
    });
    tray.setToolTip(model.tooltip);
    tray.setContextMenu(Menu.buildFromTemplate(model.items.map((item) => toMenuItem(item, (action) => void onTrayAction(action)))));
  }

  async function onTrayAction(action: TrayAction): Promise<void> {
    switch (action.type) {
      case 'open-console':
        return openConsole();
      case 'open-job':
        return openConsole(`/console/jobs?job=${encodeURIComponent(action.jobId)}`);
      case 'pause-robots':
      case 'resume-robots':
        await state.serverControl
          ?.request({ type: 'set-robots', enabled: action.type === 'resume-robots', reason: state.locale === 'fr' ? 'Suspendu depuis l’application de bureau.' : 'Paused from the desktop app.' })
          .catch((err: unknown) => log('warn', 'the kill switch could not be changed', { err: String(err) }));
        return;
      case 'toggle-start-at-login': {
        const openAtLogin = !state.userSettings.startAtLogin;
        app.setLoginItemSettings({ openAtLogin, args: ['--hidden'] });
        saveSettings({ ...state.userSettings, startAtLogin: openAtLogin });
        break;
      }
      case 'toggle-robots-headed':
        saveSettings({ ...state.userSettings, robotsHeaded: !state.userSettings.robotsHeaded });
        // The robots' browser starts with the server: restart now, or once the running jobs are done.
        if ((state.status?.jobs.length ?? 0) === 0) void state.serverControl?.restart();
        else state.restartWhenIdle = true;
        break;
      case 'toggle-mfa-notifications':
        saveSettings({ ...state.userSettings, mfaNotifications: !state.userSettings.mfaNotifications });
        break;
      case 'restart-server':
        void state.serverControl?.restart();
        break;
      case 'quit':
        app.quit();
        return;
    }
    refreshTray();
  }

  return { start, openConsole };
}

function toMenuItem(item: TrayItem, onAction: (action: TrayAction) => void): MenuItemConstructorOptions {
  switch (item.kind) {
    case 'separator':
      return { type: 'separator' };
    case 'label':
      return { label: item.label, enabled: false };
    case 'action':
      return { label: item.label, enabled: item.enabled, click: () => onAction(item.action) };
    case 'checkbox':
      return { label: item.label, type: 'checkbox', checked: item.checked, enabled: item.enabled, click: () => onAction(item.action) };
  }
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
