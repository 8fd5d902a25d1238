import { describe, expect, it } from 'vitest';
import {
  CONSOLE_HOME,
  desktopStatus,
  freshPendingToken,
  isConsoleSender,
  onWindowClose,
  openConsoleStep,
  PENDING_TOKEN_MAX_AGE_MS,
  signInUrl,
} from '../../electron/console-access.js';
import type { ServerState } from '../../electron/server-process.js';

const ORIGIN = 'http://127.0.0.1:45678';
const running: ServerState = {
  phase: 'running',
  port: 45678,
  host: '127.0.0.1',
  url: ORIGIN,
  secretStore: 'keychain',
  secretStoreWarning: null,
};

describe('the one-time sign-in', () => {
  it('reuses the token handed over at start while the server still accepts it, by the time given', () => {
    const pending = { token: 'tok', issuedAt: 1_000_000 };
    expect(freshPendingToken(pending, 1_000_000)).toBe('tok');
    expect(freshPendingToken(pending, 1_000_000 + PENDING_TOKEN_MAX_AGE_MS - 1)).toBe('tok');
    expect(freshPendingToken(pending, 1_000_000 + PENDING_TOKEN_MAX_AGE_MS)).toBeNull();
    expect(freshPendingToken(null, 0)).toBeNull();
  });

  it('signs in through /console/desktop-login with the page to return to, both encoded; without a token, the page itself', () => {
    const url = new URL(signInUrl(ORIGIN, '/console/jobs?job=a&b', 'x+y/z'));
    expect(url.origin).toBe(ORIGIN);
    expect(url.pathname).toBe('/console/desktop-login');
    expect(url.searchParams.get('token')).toBe('x+y/z');
    expect(url.searchParams.get('return_to')).toBe('/console/jobs?job=a&b');
    expect(signInUrl(ORIGIN, '/console/', null)).toBe(`${ORIGIN}/console/`);
  });
});

describe('opening the console', () => {
  it('no window: one is made and signed in', () => {
    expect(openConsoleStep(null, ORIGIN, CONSOLE_HOME)).toEqual({ kind: 'create-and-sign-in' });
    expect(openConsoleStep(null, null, '/console/jobs')).toEqual({ kind: 'create-and-sign-in' });
  });

  it('a window on the console: the home page just comes to the front, another page is loaded there', () => {
    expect(openConsoleStep(`${ORIGIN}/console/webhooks`, ORIGIN, CONSOLE_HOME)).toEqual({ kind: 'show' });
    expect(openConsoleStep(`${ORIGIN}/console/`, ORIGIN, '/console/jobs?job=j')).toEqual({
      kind: 'load',
      url: `${ORIGIN}/console/jobs?job=j`,
    });
  });

  it('a window on anything else (blank, an older server’s port, before the server listens): sign in again', () => {
    expect(openConsoleStep('about:blank', ORIGIN, CONSOLE_HOME)).toEqual({ kind: 'sign-in' });
    expect(openConsoleStep('http://127.0.0.1:40000/console/', ORIGIN, '/console/jobs')).toEqual({ kind: 'sign-in' });
    expect(openConsoleStep(`${ORIGIN}/console/`, null, CONSOLE_HOME)).toEqual({ kind: 'sign-in' });
  });

  it('closing the window hides it in the tray, unless the app is quitting', () => {
    expect(onWindowClose(false)).toBe('hide');
    expect(onWindowClose(true)).toBe('close');
  });
});

describe('the preload’s API', () => {
  it('answers frames of the console’s origin only, and nothing before the server listens', () => {
    expect(isConsoleSender(`${ORIGIN}/console/settings`, ORIGIN)).toBe(true);
    expect(isConsoleSender('http://127.0.0.1:1/console/', ORIGIN)).toBe(false);
    expect(isConsoleSender('file:///etc/passwd', ORIGIN)).toBe(false);
    expect(isConsoleSender(undefined, ORIGIN)).toBe(false);
    expect(isConsoleSender(`${ORIGIN}/console/`, null)).toBe(false);
  });

  it('the status: the secret store while running, the keychain fallback before the policy’s problems', () => {
    const base = {
      version: '1.2.3',
      locale: 'en' as const,
      policyProblems: ['policy.json: unknown field'],
      managed: ['lanSharing'],
      robotsHeaded: true,
    };
    expect(desktopStatus({ ...base, server: running })).toEqual({
      version: '1.2.3',
      secret_store: 'keychain',
      warnings: ['policy.json: unknown field'],
      managed: ['lanSharing'],
      robots_headed: true,
    });
    const fallback = desktopStatus({ ...base, server: { ...running, secretStore: 'encrypted-file' } });
    expect(fallback.secret_store).toBe('encrypted-file');
    expect(fallback.warnings).toEqual([
      'OS keychain unavailable: insurer passwords are in the encrypted file of the data folder',
      'policy.json: unknown field',
    ]);
    expect(desktopStatus({ ...base, server: { phase: 'starting', attempt: 1 } })).toMatchObject({
      secret_store: null,
      warnings: ['policy.json: unknown field'],
    });
  });
});
