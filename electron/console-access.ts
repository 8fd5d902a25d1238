import type { DesktopStatus } from './bridge.js';
import { keychainWarning } from './keychain.js';
import type { ServerState } from './server-process.js';
import { originOf } from './window.js';
import { CONSOLE_HOME, desktopSignIn } from '../shared/console-pages.js';
import { pathTo } from '../shared/endpoint.js';

/**
 * How the window reaches the console: its one-time sign-in, which step opening it takes, what
 * closing it does, who may call the preload's API and what it answers. Plain decisions, time
 * passed in; console-window.ts applies them to Electron.
 */

export { CONSOLE_HOME };
/** The server accepts a token for two minutes from its start; past this, a new one is handed over. */
export const PENDING_TOKEN_MAX_AGE_MS = 90_000;

/** The token given to the server at its start, until the window uses it (or null: none, or used). */
export type PendingToken = { token: string; issuedAt: number } | null;

/** The handed-over token if it is still fresh enough to sign in with; null: hand the server a new one. */
export function freshPendingToken(pending: PendingToken, now: number): string | null {
  return pending !== null && now - pending.issuedAt < PENDING_TOKEN_MAX_AGE_MS ? pending.token : null;
}

/** The URL that signs the window in with a token and lands on `path`; without a token, the page itself. */
export function signInUrl(origin: string, path: string, token: string | null): string {
  return token ? `${origin}${pathTo(desktopSignIn, {}, { token, return_to: path })}` : `${origin}${path}`;
}

export type OpenConsoleStep =
  /** No window yet: make one and sign it in. */
  | { kind: 'create-and-sign-in' }
  /** The window shows the console already: load the asked page there. */
  | { kind: 'load'; url: string }
  /** The window shows the console and the home page is asked: just bring it to the front. */
  | { kind: 'show' }
  /** The window shows something else (a blank page, an older server's origin): sign in again. */
  | { kind: 'sign-in' };

/** What opening the console on `path` takes, from what the window shows now (null: no window). */
export function openConsoleStep(windowUrl: string | null, consoleOrigin: string | null, path: string): OpenConsoleStep {
  if (windowUrl === null) return { kind: 'create-and-sign-in' };
  if (consoleOrigin === null || originOf(windowUrl) !== consoleOrigin) return { kind: 'sign-in' };
  return path === CONSOLE_HOME ? { kind: 'show' } : { kind: 'load', url: `${consoleOrigin}${path}` };
}

/** Closing the window leaves the service (and its robots) running in the tray, unless the app is quitting. */
export function onWindowClose(quitting: boolean): 'close' | 'hide' {
  return quitting ? 'close' : 'hide';
}

/** Whether an IPC call comes from a frame of the console's origin (nothing is, before the server listens). */
export function isConsoleSender(senderUrl: unknown, consoleOrigin: string | null): boolean {
  return consoleOrigin !== null && typeof senderUrl === 'string' && originOf(senderUrl) === consoleOrigin;
}

/** What the preload's getStatus() answers: the keychain fallback first among the warnings. */
export function desktopStatus(input: {
  version: string;
  server: ServerState;
  locale: 'fr' | 'en';
  policyProblems: readonly string[];
  managed: readonly string[];
  robotsHeaded: boolean;
}): DesktopStatus {
  const store = input.server.phase === 'running' ? input.server.secretStore : null;
  const warning = store ? keychainWarning(store, input.locale) : null;
  return {
    version: input.version,
    secret_store: store,
    warnings: [...(warning ? [warning] : []), ...input.policyProblems],
    managed: [...input.managed],
    robots_headed: input.robotsHeaded,
  };
}
