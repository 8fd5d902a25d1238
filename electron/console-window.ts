import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserWindow, IpcMainInvokeEvent, WebContents } from 'electron';
import { IPC, isExternalLinkAllowed, type DesktopStatus } from './bridge.js';
import {
  CONSOLE_HOME,
  desktopStatus,
  freshPendingToken,
  isConsoleSender,
  onWindowClose,
  openConsoleStep,
  signInUrl,
} from './console-access.js';
import { log, sha256, type DesktopContext } from './desktop-context.js';
import { decideNavigation, decidePermission, decideWindowOpen, mainWindowOptions, withCsp } from './window.js';

const PRELOAD = join(fileURLToPath(new URL('.', import.meta.url)), 'preload.cjs');
const PARTITION = 'persist:courtier';

export interface ConsoleWindow {
  /** Shows the window on a console page (the home page by default), signing in first when needed. */
  openConsole(path?: string): Promise<void>;
  /** The server (re)started: an open window signs in again with the token handed over. */
  signInAgain(): Promise<void>;
  /** Guards every web contents (navigation, new windows, permissions, CSP) and answers the preload's calls. */
  harden(): void;
}

/**
 * The console's window: its one-time sign-in, and the guards on it and on every web contents, as
 * console-access.ts and window.ts decide them.
 */
export function createConsoleWindow(ctx: DesktopContext): ConsoleWindow {
  const { deps, state, current } = ctx;
  const { app, BrowserWindow, ipcMain, session, shell } = deps;

  /** A fresh one-time token: the one handed over at start if unused, else a new one given to the server. */
  async function loginToken(): Promise<string | null> {
    const handedOver = freshPendingToken(state.pendingToken, Date.now());
    state.pendingToken = null;
    if (handedOver) return handedOver;
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
    await win
      .loadURL(signInUrl(origin, path, token))
      .catch((err: unknown) => log('warn', 'the console did not load', { err: String(err) }));
  }

  async function openConsole(path = CONSOLE_HOME): Promise<void> {
    if (!app.isReady()) return;
    // The dock exists on macOS only.
    void app.dock?.show();
    const step = openConsoleStep(state.window?.webContents.getURL() ?? null, state.consoleOrigin, path);
    const win = state.window ?? createWindow();
    state.window = win;
    if (step.kind === 'create-and-sign-in' || step.kind === 'sign-in') await signIn(win, path, await loginToken());
    else if (step.kind === 'load') await win.loadURL(step.url);
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  }

  function createWindow(): BrowserWindow {
    const win = new BrowserWindow(mainWindowOptions(PRELOAD, { show: false }));
    win.once('ready-to-show', () => win.show());
    win.on('close', (event) => {
      if (onWindowClose(state.quitting) === 'close') return;
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
        callback({
          responseHeaders: withCsp(details.url, state.consoleOrigin, (details.responseHeaders ?? {}) as Record<string, string[]>),
        });
      });
    }
  }

  function senderIsConsole(event: IpcMainInvokeEvent): boolean {
    return isConsoleSender(event.senderFrame?.url, state.consoleOrigin);
  }

  function registerIpc(): void {
    ipcMain.handle(IPC.getStatus, (event): DesktopStatus => {
      if (!senderIsConsole(event)) throw new Error('not the console');
      const { serverState: server, locale, policyProblems, managed } = state;
      return desktopStatus({ version: app.getVersion(), server, locale, policyProblems, managed, robotsHeaded: current().robotsHeaded });
    });
    ipcMain.handle(IPC.openExternal, async (event, url: unknown) => {
      if (!senderIsConsole(event) || !isExternalLinkAllowed(url)) throw new Error('refused');
      await shell.openExternal(url);
    });
  }

  return {
    openConsole,
    async signInAgain() {
      const token = await loginToken();
      if (state.window) await signIn(state.window, CONSOLE_HOME, token);
    },
    harden() {
      hardenSession();
      registerIpc();
    },
  };
}
