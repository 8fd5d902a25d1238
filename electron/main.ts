// The Electron main process: a thin layer over the plain modules beside it (server-process,
// window, tray, notifications, policy, settings, updates, single-instance), which hold every decision
// and are tested in Node. Nothing here decides; it wires those decisions to Electron's APIs.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
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
  type IpcMainInvokeEvent,
  type MenuItemConstructorOptions,
  type WebContents,
} from 'electron';
import electronUpdater from 'electron-updater';
import { IPC, isExternalLinkAllowed, type DesktopStatus } from './bridge.js';
import { TRAY_ICON_PNG_BASE64 } from './icon.js';
import { keychainService, keychainWarning } from './keychain.js';
import { createMfaNotifier, type NotificationIntent } from './notifications.js';
import { loadPolicy, policyFilePath, type LoadedPolicy } from './policy.js';
import type { ChildMessage, ServerStatus } from './protocol.js';
import { createSupervisor, type ChildHandle, type ServerState, type Supervisor } from './server-process.js';
import { DEFAULT_USER_SETTINGS, effectiveSettings, parseUserSettings, serverEnvironment, type UserSettings } from './settings.js';
import { acquireSingleInstance, launchedHidden } from './single-instance.js';
import { buildTrayModel, type TrayAction, type TrayItem } from './tray.js';
import { CHECK_INTERVAL_MS, FIRST_CHECK_DELAY_MS, updateFeed } from './updates.js';
import { decideNavigation, decidePermission, decideWindowOpen, mainWindowOptions, originOf, withCsp } from './window.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const PRELOAD = join(here, 'preload.cjs');
const UTILITY_ENTRY = join(here, 'utility-bootstrap.cjs');
const PARTITION = 'persist:courtier';
const DESKTOP_LOGIN_PATH = '/console/desktop-login';
/** The server accepts a token for two minutes from its start; past this, a new one is handed over. */
const PENDING_TOKEN_MAX_AGE_MS = 90_000;

function log(level: 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), process: 'desktop-main', msg, ...extra });
  (level === 'info' ? console.log : console.error)(line);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Electron's APIs (and the process facts) the desktop app works with: passed in, so nothing here reaches for them. */
export interface DesktopDeps {
  app: typeof app;
  BrowserWindow: typeof BrowserWindow;
  ipcMain: typeof ipcMain;
  Menu: typeof Menu;
  nativeImage: typeof nativeImage;
  Notification: typeof Notification;
  session: typeof session;
  shell: typeof shell;
  Tray: typeof Tray;
  utilityProcess: typeof utilityProcess;
  /** Read only when updates are on (electron-updater builds its updater on first access). */
  autoUpdater: () => AppUpdater;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  /** Launched at login: only the tray until the console is asked for. */
  startHidden: boolean;
}

type AppUpdater = typeof electronUpdater.autoUpdater;

interface DesktopState {
  window: BrowserWindow | null;
  tray: Tray | null;
  quitting: boolean;
  consoleOrigin: string | null;
  serverState: ServerState;
  status: ServerStatus | null;
  pendingToken: string | null;
  pendingTokenAt: number;
  restartWhenIdle: boolean;
  locale: 'fr' | 'en';
  settingsFile: string;
  userSettings: UserSettings;
  policyProblems: string[];
  managed: readonly string[];
  policy: LoadedPolicy;
  serverLog: WriteStream | null;
  serverControl: Supervisor | null;
  liveNotifications: Set<Notification>;
}

export interface DesktopApp {
  start(): Promise<void>;
  /** Shows the window on a console page (the home page by default), signing in first when needed. */
  openConsole(path?: string): Promise<void>;
}

export function createDesktopApp(deps: DesktopDeps): DesktopApp {
  const { app, BrowserWindow, ipcMain, Menu, nativeImage, Notification, session, shell, Tray, utilityProcess, platform, env, startHidden } = deps;
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

    hardenSession();
    registerIpc();
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
      if (state.window) void loginToken().then((token) => state.window && signIn(state.window, '/console/', token));
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

  // ---- the window ----

  /** A fresh one-time token: the one handed over at start if unused, else a new one given to the server. */
  async function loginToken(): Promise<string | null> {
    const handedOver = state.pendingToken;
    state.pendingToken = null;
    if (handedOver && Date.now() - state.pendingTokenAt < PENDING_TOKEN_MAX_AGE_MS) return handedOver;
    const token = randomBytes(32).toString('base64url');
    try {
      await state.serverControl?.request({ type: 'allow-login', sha256: sha256(token) });
      return token;
    } catch (err) {
      log('warn', 'could not hand a sign-in token to the server', { err: String(err) });
      return null;
    }
  }

  async function signIn(win: BrowserWindow, path: string, token: string | null): Promise<void> {
    const origin = state.consoleOrigin;
    if (!origin) return;
    const url = token
      ? `${origin}${DESKTOP_LOGIN_PATH}?token=${encodeURIComponent(token)}&return_to=${encodeURIComponent(path)}`
      : `${origin}${path}`;
    await win.loadURL(url).catch((err: unknown) => log('warn', 'the console did not load', { err: String(err) }));
  }

  async function openConsole(path = '/console/'): Promise<void> {
    if (!app.isReady()) return;
    if (platform === 'darwin') void app.dock?.show();
    let win = state.window;
    if (!win) {
      win = createWindow();
      state.window = win;
      await signIn(win, path, await loginToken());
    } else if (state.consoleOrigin && originOf(win.webContents.getURL()) === state.consoleOrigin) {
      if (path !== '/console/' || win.webContents.getURL() === 'about:blank') await win.loadURL(`${state.consoleOrigin}${path}`);
    } else {
      await signIn(win, path, await loginToken());
    }
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  }

  function createWindow(): BrowserWindow {
    const win = new BrowserWindow(mainWindowOptions(PRELOAD, { show: false }));
    win.once('ready-to-show', () => win.show());
    win.on('close', (event) => {
      // Closing the window leaves the service (and its robots) running in the tray.
      if (state.quitting) return;
      event.preventDefault();
      win.hide();
    });
    win.on('closed', () => {
      if (state.window === win) state.window = null;
    });
    return win;
  }

  function guardContents(contents: WebContents): void {
    contents.on('will-navigate', (event, url) => applyNavigation(event, url));
    contents.on('will-redirect', (event, url) => applyNavigation(event, url));
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = decideWindowOpen(url, state.consoleOrigin);
      if (decision === 'navigate-here') void contents.loadURL(url);
      else if (decision === 'open-external') void shell.openExternal(url);
      return { action: 'deny' };
    });
  }

  function applyNavigation(event: { preventDefault(): void }, url: string): void {
    const decision = decideNavigation(url, state.consoleOrigin);
    if (decision === 'allow') return;
    event.preventDefault();
    if (decision === 'open-external') void shell.openExternal(url);
    else log('warn', 'navigation refused', { url: url.slice(0, 200) });
  }

  function hardenSession(): void {
    app.on('web-contents-created', (_event, contents) => guardContents(contents));
    for (const ses of [session.defaultSession, session.fromPartition(PARTITION)]) {
      ses.setPermissionRequestHandler((_contents, permission, callback) => callback(decidePermission(permission)));
      ses.setPermissionCheckHandler((_contents, permission) => decidePermission(permission));
      ses.webRequest.onHeadersReceived((details, callback) => {
        callback({ responseHeaders: withCsp(details.url, state.consoleOrigin, (details.responseHeaders ?? {}) as Record<string, string[]>) });
      });
    }
  }

  function senderIsConsole(event: IpcMainInvokeEvent): boolean {
    const url = event.senderFrame?.url;
    return state.consoleOrigin !== null && typeof url === 'string' && originOf(url) === state.consoleOrigin;
  }

  function registerIpc(): void {
    ipcMain.handle(IPC.getStatus, (event): DesktopStatus => {
      if (!senderIsConsole(event)) throw new Error('not the console');
      const server = state.serverState;
      const store = server.phase === 'running' ? server.secretStore : null;
      const warning = store ? keychainWarning(store, state.locale) : null;
      return {
        version: app.getVersion(),
        secret_store: store,
        warnings: [...(warning ? [warning] : []), ...state.policyProblems],
        managed: [...state.managed],
        robots_headed: current().robotsHeaded,
      };
    });
    ipcMain.handle(IPC.openExternal, async (event, url: unknown) => {
      if (!senderIsConsole(event) || !isExternalLinkAllowed(url)) throw new Error('refused');
      await shell.openExternal(url);
    });
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

function forkServer(utility: typeof utilityProcess, env: Record<string, string>, serverLog: WriteStream | null): ChildHandle {
  const child = utility.fork(UTILITY_ENTRY, [], { env, serviceName: 'Courtier server', stdio: 'pipe' });
  if (serverLog) {
    child.stdout?.pipe(serverLog, { end: false });
    child.stderr?.pipe(serverLog, { end: false });
  }
  return {
    on: (event: 'exit' | 'message', listener: (arg: never) => void) => child.on(event as 'exit', listener as (code: number) => void),
    postMessage: (message) => child.postMessage(message),
    kill: () => child.kill(),
  } as ChildHandle;
}

/** The server's output, in the OS's log folder (kept to ~10 MB: the previous one is server.log.1). */
function openServerLog(dir: string): WriteStream {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'server.log');
  if (existsSync(file) && statSync(file).size > 10 * 1024 * 1024) renameSync(file, `${file}.1`);
  return createWriteStream(file, { flags: 'a', mode: 0o600 });
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

// ---- updates ----

function setUpUpdates(
  settings: ReturnType<typeof effectiveSettings>,
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
