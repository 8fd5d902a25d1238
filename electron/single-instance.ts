/**
 * One Courtier per user session: a second launch (a double click, a shortcut, start at login)
 * hands over to the first, which shows its window, and quits.
 */

export interface SingleInstanceApp {
  requestSingleInstanceLock(): boolean;
  quit(): void;
  on(event: 'second-instance', listener: (event: unknown, argv: string[], workingDirectory: string) => void): unknown;
}

/**
 * Takes the lock. Without it (another instance runs) the app quits and this returns false; with it,
 * `onSecondInstance` runs whenever another launch is attempted.
 */
export function acquireSingleInstance(app: SingleInstanceApp, onSecondInstance: (argv: string[]) => void): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', (_event, argv) => onSecondInstance(argv));
  return true;
}

/** Launched at login (hidden: only the tray) rather than by the broker. */
export function launchedHidden(argv: readonly string[], wasOpenedAtLogin = false): boolean {
  return wasOpenedAtLogin || argv.includes('--hidden');
}
