import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The console window: its options, its content security policy and the navigation rules. Plain
 * decisions; main.ts applies them to Electron's events.
 */

export function mainWindowOptions(preloadPath: string, options: { show: boolean; title?: string }): BrowserWindowConstructorOptions {
  return {
    width: 1280,
    height: 820,
    minWidth: 900,
    minHeight: 600,
    show: options.show,
    title: options.title ?? 'Courtier',
    backgroundColor: '#ffffff',
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: true,
      safeDialogs: true,
      // The console keeps its cookies in a persistent partition of its own.
      partition: 'persist:courtier',
    },
  };
}

/**
 * The shell's own policy, added to any response of the console's origin that carries none (error
 * pages, the "not built" page). The console's pages carry the server's CONSOLE_CSP, at least as strict.
 */
export const DESKTOP_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The response headers to use: DESKTOP_CSP added to the console origin's responses that have no CSP. */
export function withCsp(url: string, consoleOrigin: string | null, headers: Record<string, string[]>): Record<string, string[]> {
  if (consoleOrigin === null || originOf(url) !== consoleOrigin) return headers;
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'content-security-policy')) return headers;
  return { ...headers, 'Content-Security-Policy': [DESKTOP_CSP] };
}

export function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** Links that may leave for the system browser: the web and e-mail, nothing else (no file:, no custom schemes). */
const EXTERNAL_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

export type NavigationDecision = 'allow' | 'open-external' | 'deny';

/**
 * A navigation of the window (link, redirect, form, script): within the console's origin it goes
 * ahead; a web or e-mail link goes to the system browser; anything else is refused.
 */
export function decideNavigation(targetUrl: string, consoleOrigin: string | null): NavigationDecision {
  let target: URL;
  try {
    target = new URL(targetUrl);
  } catch {
    return 'deny';
  }
  if (consoleOrigin !== null && (target.protocol === 'http:' || target.protocol === 'https:') && target.origin === consoleOrigin)
    return 'allow';
  if (!EXTERNAL_PROTOCOLS.has(target.protocol)) return 'deny';
  if (target.protocol !== 'mailto:' && (target.username !== '' || target.password !== '')) return 'deny';
  return 'open-external';
}

/**
 * window.open and target=_blank: never a new Electron window. The console's own pages open in the
 * same window; other web links in the system browser.
 */
export function decideWindowOpen(targetUrl: string, consoleOrigin: string | null): 'navigate-here' | 'open-external' | 'deny' {
  const decision = decideNavigation(targetUrl, consoleOrigin);
  return decision === 'allow' ? 'navigate-here' : decision;
}

/** Camera, microphone, notifications from the page, geolocation…: the console needs none. */
export function decidePermission(_permission: string): boolean {
  return false;
}

/** The console page a notification or the tray opens (the jobs page, on one job). */
export function jobPath(jobId: string): string {
  return `/console/jobs?job=${encodeURIComponent(jobId)}`;
}

/** Whether the window shows this job's page (/console/jobs?job=<id>). */
export function isShowingJob(currentUrl: string | null, jobId: string): boolean {
  if (!currentUrl) return false;
  try {
    const url = new URL(currentUrl);
    return url.pathname.replace(/\/+$/, '') === '/console/jobs' && url.searchParams.get('job') === jobId;
  } catch {
    return false;
  }
}
