import { describe, expect, it, vi } from 'vitest';
import { createMfaNotifier } from '../../electron/notifications.js';
import type { ActiveJob } from '../../electron/protocol.js';
import { acquireSingleInstance, launchedHidden, type SingleInstanceApp } from '../../electron/single-instance.js';
import { buildTrayModel, menuTemplate, type TrayInput } from '../../electron/tray.js';
import { updateFeed, updaterConfiguration } from '../../electron/updates.js';
import { keychainService, keychainWarning } from '../../electron/keychain.js';

const job = (id: string, status: ActiveJob['status'], extra: Partial<ActiveJob> = {}): ActiveJob => ({
  job_id: id,
  cabinet_id: 'cab',
  status,
  compagnie: 'sandbox',
  produit: 'mrh',
  progress_percent: 40,
  mfa_challenge: status === 'running' ? null : 'Code envoyé par SMS au 06 •• •• 12',
  mfa_kind: status === 'running' ? null : 'otp',
  ...extra,
});
const away = { focused: false, url: null };

describe('MFA notifications', () => {
  it('notify once when a job starts waiting for a code, with a click target on its page', () => {
    const notifier = createMfaNotifier({ enabled: () => true });
    expect(notifier.update([job('a', 'running')], away)).toEqual([]);
    const first = notifier.update([job('a', 'mfa_required')], away);
    expect(first).toEqual([
      {
        kind: 'job',
        jobId: 'a',
        title: 'Code requis : sandbox (mrh)',
        body: 'Code envoyé par SMS au 06 •• •• 12 — cliquez pour saisir le code.',
        target: '/console/jobs?job=a',
      },
    ]);
    expect(notifier.notified('a')).toBe(true);
    // The broker opened the prompt (awaiting_mfa), a code was asked again, status repeats: no second one.
    expect(notifier.update([job('a', 'awaiting_mfa')], away)).toEqual([]);
    expect(notifier.update([job('a', 'running')], away)).toEqual([]);
    expect(notifier.update([job('a', 'mfa_required')], away)).toEqual([]);
  });

  it('a job first seen already in awaiting_mfa is notified too', () => {
    const notifier = createMfaNotifier({ enabled: () => true, locale: () => 'en' });
    expect(notifier.update([job('b', 'awaiting_mfa', { mfa_challenge: null })], away)).toEqual([
      {
        kind: 'job',
        jobId: 'b',
        title: 'Code needed: sandbox (mrh)',
        body: 'The insurer’s portal waits for a person: click to enter the code.',
        target: '/console/jobs?job=b',
      },
    ]);
  });

  it('says what each kind of step needs, in French and in English', () => {
    const steps = [
      job('p', 'mfa_required', { mfa_kind: 'app_approval', mfa_challenge: 'Validez dans l’app' }),
      job('q', 'mfa_required', { mfa_kind: 'question', mfa_challenge: 'Garage ?' }),
      job('r', 'mfa_required', { mfa_kind: 'captcha', mfa_challenge: 'Recopiez le texte' }),
    ];
    const fr = createMfaNotifier({ enabled: () => true }).update(steps, away);
    expect(fr.map((n) => [n.title, n.body])).toEqual([
      [
        'Validation requise : sandbox (mrh)',
        'Validez dans l’app — validez dans l’application de l’assureur, puis cliquez pour le confirmer.',
      ],
      ['Question du portail : sandbox (mrh)', 'Garage ? — cliquez pour répondre.'],
      ['Captcha à lire : sandbox (mrh)', 'Recopiez le texte — cliquez pour lire l’image et saisir son texte.'],
    ]);
    const en = createMfaNotifier({ enabled: () => true, locale: () => 'en' }).update(steps, away);
    expect(en.map((n) => n.title)).toEqual([
      'Approval needed: sandbox (mrh)',
      'Question from the portal: sandbox (mrh)',
      'Captcha to read: sandbox (mrh)',
    ]);
  });

  it('not when the focused window already shows that job (and not later either)', () => {
    const notifier = createMfaNotifier({ enabled: () => true });
    const view = { focused: true, url: 'http://127.0.0.1:4000/console/jobs?job=c' };
    expect(notifier.update([job('c', 'mfa_required')], view)).toEqual([]);
    expect(notifier.update([job('c', 'mfa_required')], away)).toEqual([]);
    // The same page, unfocused (another app in front): notified.
    const other = createMfaNotifier({ enabled: () => true });
    expect(other.update([job('c', 'mfa_required')], { focused: false, url: view.url })).toHaveLength(1);
    // Focused on another job: notified.
    const third = createMfaNotifier({ enabled: () => true });
    expect(third.update([job('c', 'mfa_required')], { focused: true, url: 'http://127.0.0.1:4000/console/jobs?job=z' })).toHaveLength(1);
  });

  it('nothing while the broker turned them off, and no backlog when turned on again', () => {
    let enabled = false;
    const notifier = createMfaNotifier({ enabled: () => enabled });
    expect(notifier.update([job('d', 'mfa_required')], away)).toEqual([]);
    enabled = true;
    expect(notifier.update([job('d', 'mfa_required')], away)).toEqual([]);
    expect(notifier.update([job('d', 'mfa_required'), job('e', 'mfa_required')], away).map((n) => n.kind === 'job' && n.jobId)).toEqual([
      'e',
    ]);
  });

  it('many at once make one summary for the jobs page', () => {
    const notifier = createMfaNotifier({ enabled: () => true, maxPerBatch: 2 });
    const intents = notifier.update(
      [job('1', 'mfa_required'), job('2', 'mfa_required'), job('3', 'awaiting_mfa'), job('4', 'running')],
      away,
    );
    expect(intents).toEqual([
      {
        kind: 'summary',
        jobIds: ['1', '2', '3'],
        title: '3 tarifications attendent une personne',
        body: expect.any(String),
        target: '/console/jobs',
      },
    ]);
  });

  it('forgets jobs that are no longer active', () => {
    const notifier = createMfaNotifier({ enabled: () => true });
    notifier.update([job('f', 'mfa_required')], away);
    notifier.update([], away);
    expect(notifier.notified('f')).toBe(false);
  });
});

describe('single instance', () => {
  const fakeApp = (locked: boolean) => {
    const listeners: ((event: unknown, argv: string[], cwd: string) => void)[] = [];
    const quit = vi.fn<() => void>();
    const app: SingleInstanceApp & { quit: typeof quit } = {
      requestSingleInstanceLock: () => locked,
      quit,
      on: (_event, listener) => listeners.push(listener),
    };
    return { app, secondLaunch: (argv: string[]) => listeners.forEach((l) => l({}, argv, '/')) };
  };

  it('the first instance keeps running and is told of a second launch (to show its window)', () => {
    const { app, secondLaunch } = fakeApp(true);
    const onSecond = vi.fn();
    expect(acquireSingleInstance(app, onSecond)).toBe(true);
    expect(app.quit).not.toHaveBeenCalled();
    secondLaunch(['Courtier.exe']);
    expect(onSecond).toHaveBeenCalledWith(['Courtier.exe']);
  });

  it('a second instance quits at once', () => {
    const { app } = fakeApp(false);
    const onSecond = vi.fn();
    expect(acquireSingleInstance(app, onSecond)).toBe(false);
    expect(app.quit).toHaveBeenCalledOnce();
  });

  it('started at login: tray only', () => {
    expect(launchedHidden(['Courtier.exe', '--hidden'])).toBe(true);
    expect(launchedHidden(['Courtier'], true)).toBe(true);
    expect(launchedHidden(['Courtier'])).toBe(false);
  });
});

describe('tray menu', () => {
  const base: TrayInput = {
    server: {
      phase: 'running',
      port: 4000,
      host: '127.0.0.1',
      url: 'http://127.0.0.1:4000',
      secretStore: 'keychain',
      secretStoreWarning: null,
    },
    jobs: [],
    robotsEnabled: true,
    killSwitchReason: null,
    robotsDisabledByPolicy: false,
    startAtLogin: false,
    startAtLoginSupported: true,
    robotsHeaded: false,
    mfaNotifications: true,
    warnings: [],
    locale: 'en',
  };
  const labels = (input: TrayInput) => buildTrayModel(input).items.map((i) => (i.kind === 'separator' ? '---' : i.label));

  it('shows the status, the jobs, open console, pause robots, start at login and quit', () => {
    const model = buildTrayModel({
      ...base,
      jobs: [job('j1', 'running'), job('j2', 'mfa_required', { compagnie: 'axa', produit: 'auto' })],
    });
    expect(model.items.map((i) => (i.kind === 'separator' ? '---' : i.label))).toEqual([
      'Service: running (http://127.0.0.1:4000)',
      '---',
      '2 tarifications running',
      '  axa · auto — code needed',
      '  sandbox · mrh — running 40 %',
      '---',
      'Open console',
      'Pause robots',
      '---',
      'Start at login',
      'Show the robots’ browser',
      'MFA code notifications',
      'Restart the service',
      '---',
      'Quit Courtier',
    ]);
    expect(model.items.find((i) => i.kind === 'action' && i.label.includes('axa'))).toMatchObject({
      action: { type: 'open-job', jobId: 'j2' },
      enabled: true,
    });
    expect(model.items.find((i) => i.kind === 'action' && i.label === 'Pause robots')).toMatchObject({
      action: { type: 'pause-robots' },
      enabled: true,
    });
    expect(model.tooltip).toBe('Courtier — Service: running (http://127.0.0.1:4000) — 1 code needed');
  });

  it('while the robots are paused: the reason and Resume', () => {
    const items = buildTrayModel({ ...base, robotsEnabled: false, killSwitchReason: 'maintenance AXA' }).items;
    expect(items).toContainEqual({ kind: 'label', label: 'Robots paused: maintenance AXA' });
    expect(items).toContainEqual({ kind: 'action', label: 'Resume robots', action: { type: 'resume-robots' }, enabled: true });
  });

  it('robots switched off by the IT policy: said so, and no Resume or Pause offered', () => {
    const items = buildTrayModel({
      ...base,
      robotsEnabled: false,
      killSwitchReason: 'Robots are disabled by configuration (COURTIER_ROBOTS_DISABLED).',
      robotsDisabledByPolicy: true,
    }).items;
    expect(items).toContainEqual({ kind: 'label', label: 'Robots switched off by the IT policy' });
    expect(items.some((i) => i.kind === 'action' && (i.action.type === 'resume-robots' || i.action.type === 'pause-robots'))).toBe(false);
  });

  it('while the server restarts: why, and console actions disabled; warnings shown', () => {
    const model = buildTrayModel({
      ...base,
      server: {
        phase: 'restarting',
        delayMs: 4000,
        consecutiveCrashes: 3,
        lastExitCode: 1,
        reason: 'the server process exited with code 1',
      },
      robotsEnabled: null,
      warnings: ['OS keychain unavailable'],
      locale: 'fr',
    });
    expect(model.items.slice(0, 3)).toEqual([
      { kind: 'label', label: 'Service : redémarrage dans 4 s' },
      { kind: 'label', label: '  the server process exited with code 1' },
      { kind: 'label', label: '⚠ OS keychain unavailable' },
    ]);
    expect(model.items.find((i) => i.kind === 'action' && i.action.type === 'open-console')).toMatchObject({ enabled: false });
    expect(model.items.find((i) => i.kind === 'action' && i.action.type === 'pause-robots')).toMatchObject({ enabled: false });
  });

  it('becomes Electron’s menu template: labels disabled, actions and checkboxes calling back with their action', () => {
    const clicked: unknown[] = [];
    const template = menuTemplate(
      [
        { kind: 'label', label: 'Service: running' },
        { kind: 'separator' },
        { kind: 'action', label: 'Open console', action: { type: 'open-console' }, enabled: false },
        { kind: 'checkbox', label: 'Start at login', action: { type: 'toggle-start-at-login' }, checked: true, enabled: true },
      ],
      (action) => clicked.push(action),
    );
    expect(template).toMatchObject([
      { label: 'Service: running', enabled: false },
      { type: 'separator' },
      { label: 'Open console', enabled: false },
      { label: 'Start at login', type: 'checkbox', checked: true, enabled: true },
    ]);
    (template[3]?.click as () => void)();
    (template[2]?.click as () => void)();
    expect(clicked).toEqual([{ type: 'toggle-start-at-login' }, { type: 'open-console' }]);
  });

  it('no start-at-login item where the OS has none (Linux); many jobs are summarised', () => {
    const jobs = Array.from({ length: 10 }, (_, i) => job(`j${i}`, 'running'));
    const l = labels({ ...base, startAtLoginSupported: false, jobs });
    expect(l).not.toContain('Start at login');
    expect(l).toContain('  … and 2 more');
  });
});

describe('updates', () => {
  const settings = (autoUpdate: { enabled: boolean; channel: 'latest' | 'beta' | 'alpha'; url: string | undefined }) => ({ autoUpdate });
  it('from the policy’s generic feed and channel, only in a packaged app', () => {
    expect(
      updateFeed(settings({ enabled: true, channel: 'beta', url: 'https://updates.example/courtier' }), {
        packaged: true,
        platform: 'win32',
      }),
    ).toEqual({
      enabled: true,
      provider: 'generic',
      url: 'https://updates.example/courtier',
      channel: 'beta',
      allowPrerelease: true,
    });
    expect(
      updateFeed(settings({ enabled: true, channel: 'latest', url: 'https://u.example' }), { packaged: false, platform: 'win32' }),
    ).toMatchObject({ enabled: false, reason: expect.stringMatching(/development/) });
    expect(
      updateFeed(settings({ enabled: false, channel: 'latest', url: 'https://u.example' }), { packaged: true, platform: 'darwin' }),
    ).toMatchObject({ enabled: false, reason: expect.stringMatching(/turned off/) });
    expect(
      updateFeed(settings({ enabled: true, channel: 'latest', url: undefined }), { packaged: true, platform: 'darwin' }),
    ).toMatchObject({ enabled: false, reason: expect.stringMatching(/no update feed/) });
    expect(
      updateFeed(settings({ enabled: true, channel: 'latest', url: 'https://u.example' }), { packaged: true, platform: 'linux', env: {} }),
    ).toMatchObject({ enabled: false });
    expect(
      updateFeed(settings({ enabled: true, channel: 'latest', url: 'https://u.example' }), {
        packaged: true,
        platform: 'linux',
        env: { APPIMAGE: '/x.AppImage' },
      }),
    ).toMatchObject({ enabled: true, allowPrerelease: false });
  });
});

describe('the updater', () => {
  it('downloads by itself, installs on quit, never downgrades, on the feed’s channel', () => {
    expect(
      updaterConfiguration({ enabled: true, provider: 'generic', url: 'https://u.example', channel: 'beta', allowPrerelease: true }),
    ).toEqual({
      feed: { provider: 'generic', url: 'https://u.example', channel: 'beta' },
      channel: 'beta',
      allowPrerelease: true,
      allowDowngrade: false,
      autoDownload: true,
      autoInstallOnAppQuit: true,
    });
  });
});

describe('keychain naming', () => {
  it('separates the installed app from development runs; warns only on the fallback', () => {
    expect(keychainService(true)).toBe('Courtier');
    expect(keychainService(false)).toBe('Courtier (development)');
    expect(keychainWarning('keychain', 'fr')).toBeNull();
    expect(keychainWarning('encrypted-file', 'en')).toMatch(/keychain unavailable/);
  });
});
