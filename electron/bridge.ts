/**
 * What the preload script exposes to the console as `window.courtierDesktop` (only in the desktop
 * app; the console must work without it). Every call is validated in the preload and again in the
 * main process, which also checks that it comes from the console's origin.
 */

import type { DesktopStatus } from '../shared/desktop.js';

export const IPC = {
  getStatus: 'courtier:get-status',
  openExternal: 'courtier:open-external',
} as const;
export type IpcChannel = (typeof IPC)[keyof typeof IPC];

export type { DesktopStatus };

export interface DesktopBridge {
  readonly isDesktop: true;
  getStatus(): Promise<DesktopStatus>;
  /** Opens an http(s) or mailto link in the system browser. */
  openExternal(url: string): Promise<void>;
}

/** The check both sides make on a link to open outside. */
export function isExternalLinkAllowed(url: unknown): url is string {
  if (typeof url !== 'string' || url.length > 2048) return false;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'mailto:') return true;
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}
