// The console window's preload (sandboxed, context-isolated). It runs as a plain script in a
// sandbox: it may require('electron') and nothing else, so it holds its own small checks instead of
// importing them. It exposes exactly the calls of DesktopBridge (electron/bridge.ts), nothing more.
import electron = require('electron');
import type { DesktopBridge, DesktopStatus, IpcChannel } from './bridge.js';

const { contextBridge, ipcRenderer } = electron;
const GET_STATUS: IpcChannel = 'courtier:get-status';
const OPEN_EXTERNAL: IpcChannel = 'courtier:open-external';

function externalLinkAllowed(url: unknown): url is string {
  if (typeof url !== 'string' || url.length > 2048) return false;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'mailto:') return true;
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

const bridge: DesktopBridge = {
  isDesktop: true,
  getStatus: () => ipcRenderer.invoke(GET_STATUS) as Promise<DesktopStatus>,
  openExternal: (url: string) => {
    if (!externalLinkAllowed(url)) return Promise.reject(new TypeError('only http(s) and mailto links open outside'));
    return ipcRenderer.invoke(OPEN_EXTERNAL, url) as Promise<void>;
  },
};

contextBridge.exposeInMainWorld('courtierDesktop', bridge);
