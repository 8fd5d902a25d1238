import { createHash } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import type { app, BrowserWindow, ipcMain, Menu, nativeImage, Notification, session, shell, Tray, utilityProcess } from 'electron';
import type electronUpdater from 'electron-updater';
import type { PendingToken } from './console-access.js';
import type { LoadedPolicy } from '../server/policy.js';
import type { ServerStatus } from './protocol.js';
import type { ServerState, Supervisor } from './server-process.js';
import type { EffectiveSettings, UserSettings } from './settings.js';

/** One JSON line per event of the desktop's main process (the server's own log is server.log). */
export function log(level: 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), process: 'desktop-main', msg, ...extra });
  (level === 'info' ? console.log : console.error)(line);
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

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

export type AppUpdater = typeof electronUpdater.autoUpdater;

export interface DesktopState {
  window: BrowserWindow | null;
  tray: Tray | null;
  quitting: boolean;
  consoleOrigin: string | null;
  serverState: ServerState;
  status: ServerStatus | null;
  /** The sign-in token handed to the server at its start, until the window uses it. */
  pendingToken: PendingToken;
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

/** What the parts of the main process share: Electron, the state, and the settings in force. */
export interface DesktopContext {
  deps: DesktopDeps;
  state: DesktopState;
  /** The broker's settings with the IT policy's on top. */
  current(): EffectiveSettings;
}
