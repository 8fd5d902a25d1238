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
import { createSupervisor, type ChildHandle, type ServerState } from './server-process.js';
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

function log(level: 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), process: 'desktop-main', msg, ...extra });
  (level === 'info' ? console.log : console.error)(line);
}

const startHidden = launchedHidden(process.argv);
if (acquireSingleInstance(app, () => void openConsole())) {
  void start().catch((err: unknown) => {
    log('error', 'the desktop app could not start', { err: String(err) });
    app.exit(1);
  });
}

// ---- state ----
let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let quitting = false;
let consoleOrigin: string | null = null;
let serverState: ServerState = { phase: 'stopped' };
let status: ServerStatus | null = null;
let pendingToken: string | null = null;
let pendingTokenAt = 0;
/** The server accepts a token for two minutes from its start; past this, a new one is handed over. */
const PENDING_TOKEN_MAX_AGE_MS = 90_000;
let restartWhenIdle = false;
let locale: 'fr' | 'en' = 'fr';
let settingsFile = '';
let userSettings: UserSettings = DEFAULT_USER_SETTINGS;
let policyProblems: string[] = [];
let managed: readonly string[] = [];
let policy: LoadedPolicy = { policy: {}, path: '', present: false, problems: [] };
let serverLog: WriteStream | null = null;
const liveNotifications = new Set<Notification>();
const notifier = createMfaNotifier({ enabled: () => userSettings.mfaNotifications, locale: () => locale });

function current() {
  return effectiveSettings(userSettings, policy.policy);
}

function saveSettings(next: UserSettings): void {
  userSettings = next;
  writeFileSync(settingsFile, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function start(): Promise<void> {
  await app.whenReady();
  if (process.platform === 'win32') app.setAppUserModelId('fr.courtier.desktop');
  locale = app.getLocale().toLowerCase().startsWith('fr') ? 'fr' : 'en';
  const userData = app.getPath('userData');
  const dataDir = join(userData, 'data');
  mkdirSync(dataDir, { recursive: true });
  settingsFile = join(userData, 'settings.json');
  const loaded = parseUserSettings(existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null);
  userSettings = loaded.settings;
  policy = loadPolicy({ readFile: (p) => readFileSync(p) }, policyFilePath(process.platform, process.env));
  policyProblems = [...policy.problems, ...(loaded.problem ? [loaded.problem] : [])];
  for (const problem of policyProblems) log('warn', problem);
  managed = current().managed;
  if (process.platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin) app.dock?.hide();

  hardenSession();
  registerIpc();
  serverLog = openServerLog(app.getPath('logs'));

  const supervisor = createSupervisor({
    spawn: (env) => forkServer(env),
    environment: () => {
      pendingToken = randomBytes(32).toString('base64url');
      pendingTokenAt = Date.now();
      return {
        ...serverEnvironment(process.env, current(), { dataDir, loginTokenSha256: sha256(pendingToken) }),
        COURTIER_KEYCHAIN_SERVICE: keychainService(app.isPackaged),
      };
    },
    onState: (state) => onServerState(state),
    onMessage: (message) => onServerMessage(message),
    onWarning: (text) => log('warn', text),
  });
  serverControl = supervisor;
  supervisor.start();

  tray = new Tray(nativeImage.createFromDataURL(`data:image/png;base64,${TRAY_ICON_PNG_BASE64}`));
  tray.on('click', () => void openConsole());
  refreshTray();

  app.on('activate', () => void openConsole());
  app.on('window-all-closed', () => {
    // The service keeps running in the tray; quitting is explicit.
  });
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    void supervisor.stop().finally(() => {
      serverLog?.end();
      app.quit();
    });
  });
  setUpUpdates();
}

let serverControl: ReturnType<typeof createSupervisor> | null = null;

function forkServer(env: Record<string, string>): ChildHandle {
  const child = utilityProcess.fork(UTILITY_ENTRY, [], { env, serviceName: 'Courtier server', stdio: 'pipe' });
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

// ---- the server ----

function onServerState(state: ServerState): void {
  serverState = state;
  log(state.phase === 'failed' || state.phase === 'restarting' ? 'warn' : 'info', `server ${state.phase}`, { state });
  if (state.phase === 'running') {
    consoleOrigin = state.url;
    const settings = current();
    if (!settings.lanSharing && userSettings.lastPort !== state.port) saveSettings({ ...userSettings, lastPort: state.port });
    if (state.secretStoreWarning) log('warn', state.secretStoreWarning);
    // The token handed over at this start signs the window in (now, or when it is first opened).
    if (window) void loginToken().then((token) => window && signIn(window, '/console/', token));
    else if (!startHidden) void openConsole();
  } else if (state.phase === 'failed' && Notification.isSupported()) {
    show(new Notification({ title: 'Courtier', body: locale === 'fr' ? `Le service s’est arrêté : ${state.reason}` : `The service stopped: ${state.reason}` }));
  }
  refreshTray();
}

function onServerMessage(message: ChildMessage): void {
  if (message.type === 'fatal') log('error', `server: ${message.message}`);
  if (message.type !== 'status') return;
  status = message.status;
  const focused = window !== null && window.isFocused();
  for (const intent of notifier.update(status.jobs, { focused, url: window?.webContents.getURL() ?? null })) notify(intent);
  if (restartWhenIdle && status.jobs.length === 0) {
    restartWhenIdle = false;
    void serverControl?.restart();
  }
  refreshTray();
}

// ---- the window ----

/** A fresh one-time token: the one handed over at start if unused, else a new one given to the server. */
async function loginToken(): Promise<string | null> {
  const handedOver = pendingToken;
  pendingToken = null;
  if (handedOver && Date.now() - pendingTokenAt < PENDING_TOKEN_MAX_AGE_MS) return handedOver;
  const token = randomBytes(32).toString('base64url');
  try {
    await serverControl?.request({ type: 'allow-login', sha256: sha256(token) });
    return token;
  } catch (err) {
    log('warn', 'could not hand a sign-in token to the server', { err: String(err) });
    return null;
  }
}

async function signIn(win: BrowserWindow, path: string, token: string | null): Promise<void> {
  if (!consoleOrigin) return;
  const url = token
    ? `${consoleOrigin}${DESKTOP_LOGIN_PATH}?token=${encodeURIComponent(token)}&return_to=${encodeURIComponent(path)}`
    : `${consoleOrigin}${path}`;
  await win.loadURL(url).catch((err: unknown) => log('warn', 'the console did not load', { err: String(err) }));
}

/** Shows the window on a console page (the home page by default), signing in first when needed. */
async function openConsole(path = '/console/'): Promise<void> {
  if (!app.isReady()) return;
  if (process.platform === 'darwin') void app.dock?.show();
  if (!window) {
    window = createWindow();
    await signIn(window, path, await loginToken());
  } else if (consoleOrigin && originOf(window.webContents.getURL()) === consoleOrigin) {
    if (path !== '/console/' || window.webContents.getURL() === 'about:blank') await window.loadURL(`${consoleOrigin}${path}`);
  } else {
    await signIn(window, path, await loginToken());
  }
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow(mainWindowOptions(PRELOAD, { show: false }));
  win.once('ready-to-show', () => win.show());
  win.on('close', (event) => {
    // Closing the window leaves the service (and its robots) running in the tray.
    if (quitting) return;
    event.preventDefault();
    win.hide();
  });
  win.on('closed', () => {
    if (window === win) window = null;
  });
  return win;
}

function guardContents(contents: WebContents): void {
  contents.on('will-navigate', (event, url) => applyNavigation(event, url));
  contents.on('will-redirect', (event, url) => applyNavigation(event, url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const decision = decideWindowOpen(url, consoleOrigin);
    if (decision === 'navigate-here') void contents.loadURL(url);
    else if (decision === 'open-external') void shell.openExternal(url);
    return { action: 'deny' };
  });
}

function applyNavigation(event: { preventDefault(): void }, url: string): void {
  const decision = decideNavigation(url, consoleOrigin);
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
      callback({ responseHeaders: withCsp(details.url, consoleOrigin, (details.responseHeaders ?? {}) as Record<string, string[]>) });
    });
  }
}

function senderIsConsole(event: IpcMainInvokeEvent): boolean {
  const url = event.senderFrame?.url;
  return consoleOrigin !== null && typeof url === 'string' && originOf(url) === consoleOrigin;
}

function registerIpc(): void {
  ipcMain.handle(IPC.getStatus, (event): DesktopStatus => {
    if (!senderIsConsole(event)) throw new Error('not the console');
    const store = serverState.phase === 'running' ? serverState.secretStore : null;
    const warning = store ? keychainWarning(store, locale) : null;
    return {
      version: app.getVersion(),
      secret_store: store,
      warnings: [...(warning ? [warning] : []), ...policyProblems],
      managed: [...managed],
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
  liveNotifications.add(notification);
  notification.on('close', () => liveNotifications.delete(notification));
  notification.show();
}

function notify(intent: NotificationIntent): void {
  if (!Notification.isSupported()) return;
  const notification = new Notification({ title: intent.title, body: intent.body, urgency: 'critical', timeoutType: 'never' });
  notification.on('click', () => {
    liveNotifications.delete(notification);
    void openConsole(intent.target);
  });
  show(notification);
}

// ---- the tray ----

function refreshTray(): void {
  if (!tray) return;
  const settings = current();
  const warnings = [...policyProblems];
  if (serverState.phase === 'running') {
    const warning = keychainWarning(serverState.secretStore, locale);
    if (warning) warnings.push(warning);
  }
  const model = buildTrayModel({
    server: serverState,
    jobs: status?.jobs ?? [],
    robotsEnabled: status ? status.robots_enabled : null,
    killSwitchReason: status?.kill_switch_reason ?? null,
    startAtLogin: settings.startAtLogin,
    startAtLoginSupported: process.platform === 'win32' || process.platform === 'darwin',
    robotsHeaded: settings.robotsHeaded,
    mfaNotifications: settings.mfaNotifications,
    warnings,
    locale,
  });
  tray.setToolTip(model.tooltip);
  tray.setContextMenu(Menu.buildFromTemplate(model.items.map(toMenuItem)));
}

function toMenuItem(item: TrayItem): MenuItemConstructorOptions {
  switch (item.kind) {
    case 'separator':
      return { type: 'separator' };
    case 'label':
      return { label: item.label, enabled: false };
    case 'action':
      return { label: item.label, enabled: item.enabled, click: () => void onTrayAction(item.action) };
    case 'checkbox':
      return { label: item.label, type: 'checkbox', checked: item.checked, enabled: item.enabled, click: () => void onTrayAction(item.action) };
  }
}

async function onTrayAction(action: TrayAction): Promise<void> {
  switch (action.type) {
    case 'open-console':
      return openConsole();
    case 'open-job':
      return openConsole(`/console/jobs?job=${encodeURIComponent(action.jobId)}`);
    case 'pause-robots':
    case 'resume-robots':
      await serverControl
        ?.request({ type: 'set-robots', enabled: action.type === 'resume-robots', reason: locale === 'fr' ? 'Suspendu depuis l’application de bureau.' : 'Paused from the desktop app.' })
        .catch((err: unknown) => log('warn', 'the kill switch could not be changed', { err: String(err) }));
      return;
    case 'toggle-start-at-login': {
      const openAtLogin = !userSettings.startAtLogin;
      app.setLoginItemSettings({ openAtLogin, args: ['--hidden'] });
      saveSettings({ ...userSettings, startAtLogin: openAtLogin });
      break;
    }
    case 'toggle-robots-headed':
      saveSettings({ ...userSettings, robotsHeaded: !userSettings.robotsHeaded });
      // The robots' browser starts with the server: restart now, or once the running jobs are done.
      if ((status?.jobs.length ?? 0) === 0) void serverControl?.restart();
      else restartWhenIdle = true;
      break;
    case 'toggle-mfa-notifications':
      saveSettings({ ...userSettings, mfaNotifications: !userSettings.mfaNotifications });
      break;
    case 'restart-server':
      void serverControl?.restart();
      break;
    case 'quit':
      app.quit();
      return;
  }
  refreshTray();
}

// ---- updates ----

function setUpUpdates(): void {
  const feed = updateFeed(current(), { packaged: app.isPackaged, platform: process.platform, env: process.env });
  if (!feed.enabled) {
    log('info', `automatic updates off: ${feed.reason}`);
    return;
  }
  const { autoUpdater } = electronUpdater;
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
