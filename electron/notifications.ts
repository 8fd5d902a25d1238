import type { ActiveJob } from './protocol.js';
import { isShowingJob, jobPath } from './window.js';

/**
 * When to show a native notification for a job that waits for an MFA code. Clicking one focuses
 * the window on `/console/jobs?job=<id>` (the console's jobs page opens that job and its prompt).
 *
 * Rules:
 * - a job that enters a code-waiting state (mfa_required, or awaiting_mfa) is notified once, for
 *   its whole life: a code asked again, a status update, a server restart never repeat it;
 * - not when the window is focused on that very job (the broker is looking at the prompt): it then
 *   counts as seen;
 * - not at all when the broker turned MFA notifications off, or the OS has no notifications;
 * - more than `maxPerBatch` new ones at once give one summary notification for the jobs page;
 * - jobs that left the active list are forgotten (bounded memory).
 */

const MFA_STATUSES: readonly ActiveJob['status'][] = ['mfa_required', 'awaiting_mfa'];

interface ViewState {
  /** Whether the console window has the focus. */
  focused: boolean;
  /** The URL the window shows, or null without a window. */
  url: string | null;
}

export type NotificationIntent =
  | { kind: 'job'; jobId: string; title: string; body: string; target: string }
  | { kind: 'summary'; jobIds: string[]; title: string; body: string; target: string };

export interface MfaNotifier {
  /** Given the latest active jobs, what to notify now (possibly nothing). */
  update(jobs: readonly ActiveJob[], view: ViewState): NotificationIntent[];
  /** Whether this job was notified (or seen) already. */
  notified(jobId: string): boolean;
}

export interface NotifierOptions {
  enabled: () => boolean;
  maxPerBatch?: number;
  locale?: () => 'fr' | 'en';
}

const TEXT = {
  fr: {
    title: (j: ActiveJob) => `Code requis : ${j.compagnie} (${j.produit})`,
    body: (j: ActiveJob) =>
      j.mfa_challenge
        ? `${j.mfa_challenge} — cliquez pour saisir le code.`
        : 'Le portail de l’assureur demande un code : cliquez pour le saisir.',
    summaryTitle: (n: number) => `${n} tarifications attendent un code`,
    summaryBody: 'Cliquez pour ouvrir les tâches et saisir les codes.',
  },
  en: {
    title: (j: ActiveJob) => `Code needed: ${j.compagnie} (${j.produit})`,
    body: (j: ActiveJob) =>
      j.mfa_challenge ? `${j.mfa_challenge} — click to enter the code.` : 'The insurer’s portal asks for a code: click to enter it.',
    summaryTitle: (n: number) => `${n} tarifications wait for a code`,
    summaryBody: 'Click to open the jobs and enter the codes.',
  },
} as const;

export function createMfaNotifier(options: NotifierOptions): MfaNotifier {
  const maxPerBatch = options.maxPerBatch ?? 3;
  const seen = new Set<string>();
  return {
    update(jobs, view) {
      const active = new Set(jobs.map((j) => j.job_id));
      for (const id of seen) if (!active.has(id)) seen.delete(id);
      const fresh = jobs.filter((j) => MFA_STATUSES.includes(j.status) && !seen.has(j.job_id));
      for (const job of fresh) seen.add(job.job_id);
      if (!options.enabled()) return [];
      const toNotify = fresh.filter((j) => !(view.focused && isShowingJob(view.url, j.job_id)));
      if (toNotify.length === 0) return [];
      const text = TEXT[options.locale?.() ?? 'fr'];
      if (toNotify.length > maxPerBatch) {
        return [
          {
            kind: 'summary',
            jobIds: toNotify.map((j) => j.job_id),
            title: text.summaryTitle(toNotify.length),
            body: text.summaryBody,
            target: '/console/jobs',
          },
        ];
      }
      return toNotify.map((j) => ({
        kind: 'job' as const,
        jobId: j.job_id,
        title: text.title(j),
        body: text.body(j),
        target: jobPath(j.job_id),
      }));
    },
    notified: (jobId) => seen.has(jobId),
  };
}
