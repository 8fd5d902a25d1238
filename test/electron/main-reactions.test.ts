import { describe, expect, it } from 'vitest';
import {
  idleRestartDue,
  localeOf,
  reactToServerState,
  reactToTrayAction,
  startupChoices,
  trayInput,
} from '../../electron/main-reactions.js';
import type { ActiveJob, ServerStatus } from '../../electron/protocol.js';
import type { ServerState } from '../../electron/server-process.js';
import { DEFAULT_USER_SETTINGS, effectiveSettings } from '../../electron/settings.js';

const running: ServerState = {
  phase: 'running',
  port: 45678,
  host: '127.0.0.1',
  url: 'http://127.0.0.1:45678',
  secretStore: 'keychain',
  secretStoreWarning: null,
};
const view = { lastPort: 0, windowOpen: false, startHidden: false, locale: 'fr' as const };
const job: ActiveJob = {
  job_id: 'j',
  cabinet_id: 'c',
  status: 'running',
  compagnie: 'sandbox',
  produit: 'auto',
  progress_percent: 10,
  mfa_challenge: null,
  mfa_kind: null,
};
const status = (jobs: ActiveJob[]): ServerStatus => ({ robots_enabled: true, kill_switch_reason: null, jobs });

describe('the start', () => {
  it('French for a French system, English otherwise', () => {
    expect(localeOf('fr-FR')).toBe('fr');
    expect(localeOf('FR')).toBe('fr');
    expect(localeOf('en-GB')).toBe('en');
    expect(localeOf('de')).toBe('en');
  });

  it('a model id on Windows, no dock icon at login on macOS, neither on Linux', () => {
    expect(startupChoices('win32')).toEqual({ appUserModelId: 'fr.courtier.desktop', hideDockWhenOpenedAtLogin: false });
    expect(startupChoices('darwin')).toEqual({ appUserModelId: null, hideDockWhenOpenedAtLogin: true });
    expect(startupChoices('linux')).toEqual({ appUserModelId: null, hideDockWhenOpenedAtLogin: false });
  });
});

describe('server states', () => {
  it('listening: the console’s origin, the port kept for next time, the window opened and signed in', () => {
    expect(reactToServerState(running, view)).toEqual({
      logLevel: 'info',
      consoleOrigin: 'http://127.0.0.1:45678',
      saveLastPort: 45678,
      warning: null,
      window: 'open',
      notification: null,
    });
  });

  it('an open window signs in again; started hidden, nothing opens; the same port or LAN sharing saves nothing', () => {
    expect(reactToServerState(running, { ...view, windowOpen: true }).window).toBe('sign-in-again');
    expect(reactToServerState(running, { ...view, startHidden: true }).window).toBe('none');
    expect(reactToServerState(running, { ...view, lastPort: 45678 }).saveLastPort).toBeNull();
    expect(reactToServerState({ ...running, secretStoreWarning: 'keychain refused' }, view).warning).toBe('keychain refused');
  });

  it('restarting is a warning; given up, the broker is notified in their language; the origin is kept meanwhile', () => {
    const restarting = reactToServerState(
      { phase: 'restarting', delayMs: 2000, consecutiveCrashes: 2, lastExitCode: 1, reason: 'crash' },
      { ...view, windowOpen: true },
    );
    expect(restarting).toEqual({
      logLevel: 'warn',
      consoleOrigin: null,
      saveLastPort: null,
      warning: null,
      window: 'none',
      notification: null,
    });
    const failed: ServerState = { phase: 'failed', consecutiveCrashes: 9, reason: 'the port is taken' };
    expect(reactToServerState(failed, view)).toMatchObject({
      logLevel: 'warn',
      notification: { title: 'Courtier', body: 'Le service s’est arrêté : the port is taken' },
    });
    expect(reactToServerState(failed, { ...view, locale: 'en' }).notification?.body).toBe('The service stopped: the port is taken');
    expect(reactToServerState({ phase: 'starting', attempt: 1 }, view).logLevel).toBe('info');
  });

  it('a restart that waits for the robots is due once no job runs', () => {
    expect(idleRestartDue(true, status([]))).toBe(true);
    expect(idleRestartDue(true, status([job]))).toBe(false);
    expect(idleRestartDue(false, status([]))).toBe(false);
  });
});

describe('the tray', () => {
  it('its input: jobs and switch from the status, the policy’s problems then the keychain fallback, start at login where the OS has it', () => {
    const settings = effectiveSettings({ ...DEFAULT_USER_SETTINGS, startAtLogin: true }, { robotsDisabled: true });
    const input = trayInput({
      server: { ...running, secretStore: 'encrypted-file' },
      status: { robots_enabled: false, kill_switch_reason: 'policy', jobs: [job] },
      settings,
      policyProblems: ['policy.json: bad field'],
      platform: 'linux',
      locale: 'en',
    });
    expect(input).toMatchObject({
      jobs: [job],
      robotsEnabled: false,
      killSwitchReason: 'policy',
      robotsDisabledByPolicy: true,
      startAtLogin: true,
      startAtLoginSupported: false,
      warnings: ['policy.json: bad field', 'OS keychain unavailable: insurer passwords are in the encrypted file of the data folder'],
      locale: 'en',
    });
    const before = trayInput({
      server: { phase: 'starting', attempt: 1 },
      status: null,
      settings,
      policyProblems: [],
      platform: 'darwin',
      locale: 'fr',
    });
    expect(before).toMatchObject({ jobs: [], robotsEnabled: null, killSwitchReason: null, startAtLoginSupported: true, warnings: [] });
  });

  it('clicks: the console or a job’s page, the kill switch with a reason in the broker’s language', () => {
    const state = { userSettings: DEFAULT_USER_SETTINGS, runningJobs: 0, locale: 'fr' as const };
    expect(reactToTrayAction({ type: 'open-console' }, state)).toEqual([{ type: 'open-console', path: '/console/' }]);
    expect(reactToTrayAction({ type: 'open-job', jobId: 'a b' }, state)).toEqual([
      { type: 'open-console', path: '/console/jobs?job=a%20b' },
    ]);
    expect(reactToTrayAction({ type: 'pause-robots' }, state)).toEqual([
      { type: 'set-robots', enabled: false, reason: 'Suspendu depuis l’application de bureau.' },
    ]);
    expect(reactToTrayAction({ type: 'resume-robots' }, { ...state, locale: 'en' })).toEqual([
      { type: 'set-robots', enabled: true, reason: 'Paused from the desktop app.' },
    ]);
    expect(reactToTrayAction({ type: 'quit' }, state)).toEqual([{ type: 'quit' }]);
    expect(reactToTrayAction({ type: 'restart-server' }, state)).toEqual([{ type: 'restart-server' }, { type: 'refresh-tray' }]);
  });

  it('settings: saved, start at login told to the OS, and showing the robots restarts the server now or once the jobs are done', () => {
    const settings = { ...DEFAULT_USER_SETTINGS, startAtLogin: false, robotsHeaded: false, mfaNotifications: true };
    const state = { userSettings: settings, runningJobs: 0, locale: 'fr' as const };
    expect(reactToTrayAction({ type: 'toggle-start-at-login' }, state)).toEqual([
      { type: 'set-login-item', openAtLogin: true },
      { type: 'save-settings', settings: { ...settings, startAtLogin: true } },
      { type: 'refresh-tray' },
    ]);
    expect(reactToTrayAction({ type: 'toggle-mfa-notifications' }, state)).toEqual([
      { type: 'save-settings', settings: { ...settings, mfaNotifications: false } },
      { type: 'refresh-tray' },
    ]);
    expect(reactToTrayAction({ type: 'toggle-robots-headed' }, state)).toEqual([
      { type: 'save-settings', settings: { ...settings, robotsHeaded: true } },
      { type: 'restart-server' },
      { type: 'refresh-tray' },
    ]);
    expect(reactToTrayAction({ type: 'toggle-robots-headed' }, { ...state, runningJobs: 2 })[1]).toEqual({ type: 'restart-when-idle' });
  });
});
