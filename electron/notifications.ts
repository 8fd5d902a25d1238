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

type Kind = NonNullable<ActiveJob['mfa_kind']>;

/** Per language and kind of step: what is needed (the title) and what a click leads to (the body's end). */
const WORDS: Record<'fr' | 'en', Record<Kind, { needed: string; click: string }>> = {
  fr: {
    otp: { needed: 'Code requis', click: 'cliquez pour saisir le code' },
    app_approval: { needed: 'Validation requise', click: 'validez dans l’application de l’assureur, puis cliquez pour le confirmer' },
    captcha: { needed: 'Captcha à lire', click: 'cliquez pour lire l’image et saisir son texte' },
    question: { needed: 'Question du portail', click: 'cliquez pour répondre' },
  },
  en: {
    otp: { needed: 'Code needed', click: 'click to enter the code' },
    app_approval: { needed: 'Approval needed', click: 'approve in the insurer’s app, then click to confirm' },
    captcha: { needed: 'Captcha to read', click: 'click to read the image and type its text' },
    question: { needed: 'Question from the portal', click: 'click to answer' },
  },
};

const TEXT = {
  fr: {
    title: (j: ActiveJob) => `${WORDS.fr[j.mfa_kind ?? 'otp'].needed} : ${j.compagnie} (${j.produit})`,
    body: (j: ActiveJob) => {
      const click = WORDS.fr[j.mfa_kind ?? 'otp'].click;
      return j.mfa_challenge ? `${j.mfa_challenge} — ${click}.` : `Le portail de l’assureur attend une personne : ${click}.`;
    },
    summaryTitle: (n: number) => `${n} tarifications attendent une personne`,
    summaryBody: 'Cliquez pour ouvrir les tâches et répondre.',
  },
  en: {
    title: (j: ActiveJob) => `${WORDS.en[j.mfa_kind ?? 'otp'].needed}: ${j.compagnie} (${j.produit})`,
    body: (j: ActiveJob) => {
      const click = WORDS.en[j.mfa_kind ?? 'otp'].click;
      return j.mfa_challenge ? `${j.mfa_challenge} — ${click}.` : `The insurer’s portal waits for a person: ${click}.`;
    },
    summaryTitle: (n: number) => `${n} tarifications wait for a person`,
    summaryBody: 'Click to open the jobs and answer.',
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
