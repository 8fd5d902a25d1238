import type { MenuItemConstructorOptions } from 'electron';
import type { ServerState } from './server-process.js';
import type { ActiveJob } from './protocol.js';

/**
 * The tray menu as data: main.ts turns it into an Electron Menu (menuTemplate) and routes clicks by `action`.
 * Built again on every change (server state, jobs, kill switch, settings).
 */

export type TrayAction =
  | { type: 'open-console' }
  | { type: 'open-job'; jobId: string }
  | { type: 'pause-robots' }
  | { type: 'resume-robots' }
  | { type: 'toggle-start-at-login' }
  | { type: 'toggle-robots-headed' }
  | { type: 'toggle-mfa-notifications' }
  | { type: 'restart-server' }
  | { type: 'quit' };

export type TrayItem =
  | { kind: 'separator' }
  | { kind: 'label'; label: string }
  | { kind: 'action'; label: string; action: TrayAction; enabled: boolean }
  | { kind: 'checkbox'; label: string; action: TrayAction; checked: boolean; enabled: boolean };

export interface TrayModel {
  tooltip: string;
  items: TrayItem[];
}

export interface TrayInput {
  server: ServerState;
  jobs: readonly ActiveJob[];
  robotsEnabled: boolean | null;
  killSwitchReason: string | null;
  /** The IT policy switched the robots off: shown, and not offered to resume. */
  robotsDisabledByPolicy: boolean;
  startAtLogin: boolean;
  /** setLoginItemSettings exists on Windows and macOS only. */
  startAtLoginSupported: boolean;
  robotsHeaded: boolean;
  mfaNotifications: boolean;
  /** Problems to show (policy file, keychain fallback). */
  warnings: readonly string[];
  locale: 'fr' | 'en';
}

const MAX_JOBS_SHOWN = 8;

const TEXT = {
  fr: {
    starting: 'Service : démarrage…',
    running: (url: string) => `Service : en marche (${url})`,
    restarting: (s: number) => `Service : redémarrage dans ${s} s`,
    failed: 'Service : arrêté après des erreurs répétées',
    stopping: 'Service : arrêt…',
    stopped: 'Service : arrêté',
    noJobs: 'Aucune tarification en cours',
    jobs: (n: number) => `${n} tarification${n > 1 ? 's' : ''} en cours`,
    mfa: 'code requis',
    running_: 'en cours',
    more: (n: number) => `… et ${n} autre${n > 1 ? 's' : ''}`,
    open: 'Ouvrir la console',
    pause: 'Suspendre les robots',
    lockedByPolicy: 'Robots arrêtés par la stratégie informatique',
    resume: 'Reprendre les robots',
    paused: (reason: string | null) => `Robots suspendus${reason ? ` : ${reason}` : ''}`,
    startAtLogin: 'Lancer à l’ouverture de session',
    headed: 'Afficher le navigateur des robots',
    notifications: 'Notifications de code MFA',
    restart: 'Redémarrer le service',
    quit: 'Quitter Courtier',
    tooltip: 'Courtier',
  },
  en: {
    starting: 'Service: starting…',
    running: (url: string) => `Service: running (${url})`,
    restarting: (s: number) => `Service: restarting in ${s} s`,
    failed: 'Service: stopped after repeated failures',
    stopping: 'Service: stopping…',
    stopped: 'Service: stopped',
    noJobs: 'No tarification running',
    jobs: (n: number) => `${n} tarification${n > 1 ? 's' : ''} running`,
    mfa: 'code needed',
    running_: 'running',
    more: (n: number) => `… and ${n} more`,
    open: 'Open console',
    pause: 'Pause robots',
    lockedByPolicy: 'Robots switched off by the IT policy',
    resume: 'Resume robots',
    paused: (reason: string | null) => `Robots paused${reason ? `: ${reason}` : ''}`,
    startAtLogin: 'Start at login',
    headed: 'Show the robots’ browser',
    notifications: 'MFA code notifications',
    restart: 'Restart the service',
    quit: 'Quit Courtier',
    tooltip: 'Courtier',
  },
} as const;

function serverStatusLabel(server: ServerState, locale: 'fr' | 'en'): string {
  const t = TEXT[locale];
  switch (server.phase) {
    case 'starting':
      return t.starting;
    case 'running':
      return t.running(server.url);
    case 'restarting':
      return t.restarting(Math.ceil(server.delayMs / 1000));
    case 'failed':
      return t.failed;
    case 'stopping':
      return t.stopping;
    case 'stopped':
      return t.stopped;
  }
}

export function buildTrayModel(input: TrayInput): TrayModel {
  const t = TEXT[input.locale];
  const running = input.server.phase === 'running';
  const items: TrayItem[] = [{ kind: 'label', label: serverStatusLabel(input.server, input.locale) }];
  if (input.server.phase === 'failed' || input.server.phase === 'restarting')
    items.push({ kind: 'label', label: `  ${input.server.reason}` });
  for (const warning of input.warnings)
    items.push({ kind: 'label', label: `⚠ ${warning.length > 120 ? `${warning.slice(0, 117)}…` : warning}` });
  items.push({ kind: 'separator' });

  // Jobs waiting for a code first: they need the broker.
  const jobs = [...input.jobs].sort((a, b) => Number(b.status !== 'running') - Number(a.status !== 'running'));
  items.push({ kind: 'label', label: jobs.length === 0 ? t.noJobs : t.jobs(jobs.length) });
  for (const job of jobs.slice(0, MAX_JOBS_SHOWN)) {
    const state = job.status === 'running' ? `${t.running_} ${job.progress_percent} %` : t.mfa;
    items.push({
      kind: 'action',
      label: `  ${job.compagnie} · ${job.produit} — ${state}`,
      action: { type: 'open-job', jobId: job.job_id },
      enabled: running,
    });
  }
  if (jobs.length > MAX_JOBS_SHOWN) items.push({ kind: 'label', label: `  ${t.more(jobs.length - MAX_JOBS_SHOWN)}` });
  items.push({ kind: 'separator' });

  items.push({ kind: 'action', label: t.open, action: { type: 'open-console' }, enabled: running });
  if (input.robotsDisabledByPolicy) {
    items.push({ kind: 'label', label: t.lockedByPolicy });
  } else if (input.robotsEnabled === false) {
    items.push({ kind: 'label', label: t.paused(input.killSwitchReason) });
    items.push({ kind: 'action', label: t.resume, action: { type: 'resume-robots' }, enabled: running });
  } else {
    items.push({ kind: 'action', label: t.pause, action: { type: 'pause-robots' }, enabled: running && input.robotsEnabled === true });
  }
  items.push({ kind: 'separator' });
  if (input.startAtLoginSupported)
    items.push({
      kind: 'checkbox',
      label: t.startAtLogin,
      action: { type: 'toggle-start-at-login' },
      checked: input.startAtLogin,
      enabled: true,
    });
  items.push({ kind: 'checkbox', label: t.headed, action: { type: 'toggle-robots-headed' }, checked: input.robotsHeaded, enabled: true });
  items.push({
    kind: 'checkbox',
    label: t.notifications,
    action: { type: 'toggle-mfa-notifications' },
    checked: input.mfaNotifications,
    enabled: true,
  });
  items.push({ kind: 'action', label: t.restart, action: { type: 'restart-server' }, enabled: input.server.phase !== 'stopping' });
  items.push({ kind: 'separator' });
  items.push({ kind: 'action', label: t.quit, action: { type: 'quit' }, enabled: true });

  const waiting = input.jobs.filter((j) => j.status !== 'running').length;
  const tooltip = `${t.tooltip} — ${serverStatusLabel(input.server, input.locale)}${waiting ? ` — ${waiting} ${t.mfa}` : ''}`;
  return { tooltip, items };
}

/** The items as Electron's menu template; a click calls back with the item's action. */
export function menuTemplate(items: readonly TrayItem[], onAction: (action: TrayAction) => void): MenuItemConstructorOptions[] {
  return items.map((item): MenuItemConstructorOptions => {
    switch (item.kind) {
      case 'separator':
        return { type: 'separator' };
      case 'label':
        return { label: item.label, enabled: false };
      case 'action':
        return { label: item.label, enabled: item.enabled, click: () => onAction(item.action) };
      case 'checkbox':
        return { label: item.label, type: 'checkbox', checked: item.checked, enabled: item.enabled, click: () => onAction(item.action) };
    }
  });
}
