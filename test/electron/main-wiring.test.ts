import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * main.ts with `electron` mocked: checks that the thin layer wires the tested decisions to
 * Electron's APIs (single instance, the utility process, the window and its sign-in, notifications,
 * clean stop). Electron itself cannot run here.
 */

interface Fakes {
  locked: boolean;
  userData: string;
  app: EventEmitter & { quit: ReturnType<typeof vi.fn> };
  forks: {
    path: string;
    options: { env: Record<string, string> };
    child: EventEmitter & { postMessage: ReturnType<typeof vi.fn>; kill: ReturnType<typeof vi.fn> };
  }[];
  windows: { options: Record<string, unknown>; loadURL: ReturnType<typeof vi.fn>; url: string }[];
  notifications: (EventEmitter & { options: { title: string; body: string }; show: ReturnType<typeof vi.fn> })[];
}

const fakes = vi.hoisted(() => ({ current: null as unknown as Fakes }));

vi.mock('electron-updater', () => ({ default: { autoUpdater: { on: vi.fn(), setFeedURL: vi.fn(), checkForUpdatesAndNotify: vi.fn() } } }));
vi.mock('electron', async () => {
  const { EventEmitter: Emitter } = await import('node:events');
  // Read lazily: each test imports main.ts afresh with its own fakes.
  const f = {
    get windows() {
      return fakes.current.windows;
    },
    get notifications() {
      return fakes.current.notifications;
    },
    get forks() {
      return fakes.current.forks;
    },
  };
  const ses = { setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn(), webRequest: { onHeadersReceived: vi.fn() } };
  class BrowserWindow extends Emitter {
    url = 'about:blank';
    webContents = { getURL: () => this.url };
    loadURL = vi.fn(async (url: string) => {
      this.url = url;
    });
    constructor(readonly options: Record<string, unknown>) {
      super();
      f.windows.push(this as never);
    }
    show = vi.fn();
    hide = vi.fn();
    focus = vi.fn();
    restore = vi.fn();
    isMinimized = () => false;
    isFocused = () => false;
  }
  class Notification extends Emitter {
    static isSupported = () => true;
    show = vi.fn();
    constructor(readonly options: { title: string; body: string }) {
      super();
      f.notifications.push(this as never);
    }
  }
  class Tray extends Emitter {
    setToolTip = vi.fn();
    setContextMenu = vi.fn();
  }
  return {
    get app() {
      return fakes.current.app;
    },
    BrowserWindow,
    Notification,
    Tray,
    Menu: { buildFromTemplate: (items: unknown[]) => items },
    nativeImage: { createFromDataURL: () => ({}) },
    session: { defaultSession: ses, fromPartition: () => ses },
    shell: { openExternal: vi.fn() },
    ipcMain: { handle: vi.fn() },
    utilityProcess: {
      fork: (path: string, _args: string[], options: { env: Record<string, string> }) => {
        const child = Object.assign(new Emitter(), { postMessage: vi.fn(), kill: vi.fn(() => true), stdout: null, stderr: null });
        f.forks.push({ path, options, child });
        return child;
      },
    },
  };
});

function makeFakes(locked: boolean): Fakes {
  const userData = mkdtempSync(join(tmpdir(), 'courtier-desktop-'));
  const app = Object.assign(new EventEmitter(), {
    requestSingleInstanceLock: vi.fn(() => locked),
    quit: vi.fn(),
    exit: vi.fn(),
    whenReady: () => Promise.resolve(),
    isReady: () => true,
    isPackaged: false,
    getLocale: () => 'fr-FR',
    getPath: (name: string) => join(userData, name === 'userData' ? '' : name),
    getVersion: () => '0.1.0',
    getLoginItemSettings: () => ({ wasOpenedAtLogin: false }),
    setLoginItemSettings: vi.fn(),
    setAppUserModelId: vi.fn(),
    dock: undefined,
  });
  return { locked, userData, app, forks: [], windows: [], notifications: [] };
}

const flush = () => new Promise((r) => setTimeout(r, 20));

afterEach(() => {
  vi.resetModules();
});

describe('electron/main.ts (electron mocked)', () => {
  it('a second instance quits without starting anything', async () => {
    fakes.current = makeFakes(false);
    await import('../../electron/main.js');
    await flush();
    expect(fakes.current.app.quit).toHaveBeenCalled();
    expect(fakes.current.forks).toEqual([]);
  });

  it('starts the server in a utility process, signs the window in with a one-time token, notifies MFA, stops on quit', async () => {
    fakes.current = makeFakes(true);
    const f = fakes.current;
    await import('../../electron/main.js');
    await flush();
    expect(f.forks).toHaveLength(1);
    const { path, options, child } = f.forks[0]!;
    expect(path).toMatch(/utility-bootstrap\.cjs$/);
    expect(options.env).toMatchObject({
      COURTIER_HOST: '127.0.0.1',
      COURTIER_PORT: '0',
      COURTIER_DATA_DIR: join(f.userData, 'data'),
      COURTIER_KEYCHAIN_SERVICE: 'Courtier (development)',
    });
    const hash = options.env.COURTIER_DESKTOP_LOGIN_TOKEN_SHA256!;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);

    child.emit('message', { type: 'listening', port: 45678, host: '127.0.0.1', secret_store: 'keychain', secret_store_warning: null });
    await flush();
    expect(f.windows).toHaveLength(1);
    const win = f.windows[0]!;
    expect(win.options).toMatchObject({ webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false } });
    const url = new URL(win.loadURL.mock.calls[0]![0] as string);
    expect(url.origin).toBe('http://127.0.0.1:45678');
    expect(url.pathname).toBe('/console/desktop-login');
    expect(createHash('sha256').update(url.searchParams.get('token')!).digest('hex')).toBe(hash);

    child.emit('message', {
      type: 'status',
      status: {
        robots_enabled: true,
        kill_switch_reason: null,
        jobs: [
          {
            job_id: 'job-1',
            cabinet_id: 'c',
            status: 'mfa_required',
            compagnie: 'sandbox',
            produit: 'auto',
            progress_percent: 30,
            mfa_challenge: 'SMS',
            mfa_kind: 'otp',
          },
        ],
      },
    });
    await flush();
    expect(f.notifications).toHaveLength(1);
    expect(f.notifications[0]!.options.title).toBe('Code requis : sandbox (auto)');
    expect(f.notifications[0]!.show).toHaveBeenCalled();
    win.url = 'http://127.0.0.1:45678/console/';
    f.notifications[0]!.emit('click');
    await flush();
    expect(win.loadURL).toHaveBeenLastCalledWith('http://127.0.0.1:45678/console/jobs?job=job-1');

    const quitEvent = { preventDefault: vi.fn() };
    f.app.emit('before-quit', quitEvent);
    expect(quitEvent.preventDefault).toHaveBeenCalled();
    expect(child.postMessage).toHaveBeenCalledWith({ type: 'stop' });
    child.emit('exit', 0);
    await flush();
    expect(f.app.quit).toHaveBeenCalled();
    expect(f.forks).toHaveLength(1);
  });
});
