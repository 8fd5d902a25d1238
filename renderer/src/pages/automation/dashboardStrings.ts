import { LOCALES } from '../../format.js';
import type { Lang } from '../../i18n.js';

/** The jobs dashboard's words, in both languages, and its numbers and dates formatted per language. */
export interface DashboardStrings {
  title: string;
  intro: string;
  period: string;
  lastDays: (days: number) => string;
  allJobs: string;
  refreshing: string;
  empty: string;
  priceNow: string;
  summary: string;
  jobs: string;
  succeeded: string;
  failed: string;
  cancelled: string;
  open: string;
  successRate: string;
  median: string;
  p90: string;
  credits: string;
  perInsurer: string;
  perInsurerCaption: (from: string, to: string) => string;
  insurer: string;
  perDay: string;
  perDayTable: string;
  day: string;
  barLabel: (day: string, jobs: number, succeeded: number, failed: number) => string;
  failures: string;
  noFailures: string;
  reason: string;
  count: string;
  insurers: string;
  lastFailure: string;
  openLastJob: (when: string) => string;
  otherReason: (code: string) => string;
  none: string;
  legendSucceeded: string;
  legendFailed: string;
  legendOther: string;
}

const en: DashboardStrings = {
  title: 'Dashboard',
  intro:
    'How your robots did: success rate, time and credits per insurer and per day, and why jobs failed. Days are UTC days; each job counts on the day it was created.',
  period: 'Period',
  lastDays: (days) => `Last ${days} days`,
  allJobs: 'All jobs',
  refreshing: 'Updating…',
  empty: 'No jobs in this period yet. Figures appear here as soon as a quote is priced.',
  priceNow: 'Price a quote',
  summary: 'In this period',
  jobs: 'Jobs',
  succeeded: 'Priced',
  failed: 'Failed',
  cancelled: 'Cancelled',
  open: 'In progress',
  successRate: 'Success rate',
  median: 'Median time',
  p90: '90th percentile time',
  credits: 'Credits used',
  perInsurer: 'Per insurer',
  perInsurerCaption: (from, to) => `Jobs per insurer, ${from} to ${to}`,
  insurer: 'Insurer',
  perDay: 'Per day',
  perDayTable: 'Figures per day (table)',
  day: 'Day',
  barLabel: (day, jobs, succeeded, failed) => `${day}: ${jobs} jobs, ${succeeded} priced, ${failed} failed`,
  failures: 'Failures by reason',
  noFailures: 'No job failed in this period.',
  reason: 'Reason',
  count: 'Times',
  insurers: 'Insurers',
  lastFailure: 'Last one',
  openLastJob: (when) => `Open the job of ${when}`,
  otherReason: (code) => `Another reason (${code})`,
  none: '—',
  legendSucceeded: 'priced',
  legendFailed: 'failed',
  legendOther: 'cancelled or in progress',
};

const fr: DashboardStrings = {
  title: 'Tableau de bord',
  intro:
    'Comment vos robots ont travaillé : taux de réussite, durée et crédits par assureur et par jour, et pourquoi des tâches ont échoué. Les jours sont ceux du temps universel (UTC) ; une tâche compte le jour de sa création.',
  period: 'Période',
  lastDays: (days) => `${days} derniers jours`,
  allJobs: 'Toutes les tâches',
  refreshing: 'Mise à jour…',
  empty: 'Aucune tâche sur cette période pour l’instant. Les chiffres apparaissent ici dès qu’un devis est tarifé.',
  priceNow: 'Tarifer un devis',
  summary: 'Sur cette période',
  jobs: 'Tâches',
  succeeded: 'Tarifées',
  failed: 'Échouées',
  cancelled: 'Annulées',
  open: 'En cours',
  successRate: 'Taux de réussite',
  median: 'Durée médiane',
  p90: 'Durée au 90e centile',
  credits: 'Crédits consommés',
  perInsurer: 'Par assureur',
  perInsurerCaption: (from, to) => `Tâches par assureur, du ${from} au ${to}`,
  insurer: 'Assureur',
  perDay: 'Par jour',
  perDayTable: 'Chiffres par jour (tableau)',
  day: 'Jour',
  barLabel: (day, jobs, succeeded, failed) => `${day} : ${jobs} tâches, ${succeeded} tarifées, ${failed} échouées`,
  failures: 'Échecs par motif',
  noFailures: 'Aucune tâche n’a échoué sur cette période.',
  reason: 'Motif',
  count: 'Fois',
  insurers: 'Assureurs',
  lastFailure: 'Dernier échec',
  openLastJob: (when) => `Ouvrir la tâche du ${when}`,
  otherReason: (code) => `Autre motif (${code})`,
  none: '—',
  legendSucceeded: 'tarifées',
  legendFailed: 'échouées',
  legendOther: 'annulées ou en cours',
};

export const DASHBOARD_STRINGS: Record<Lang, DashboardStrings> = { en, fr };

/** A duration in seconds, one decimal at most: "1 234,5 s" in French, "1,234.5 s" in English. */
export function formatSeconds(lang: Lang, seconds: number | null): string {
  if (seconds === null) return DASHBOARD_STRINGS[lang].none;
  return `${new Intl.NumberFormat(LOCALES[lang], { maximumFractionDigits: 1 }).format(seconds)}\u00a0s`;
}

/** A rate (0 to 1) as a whole percentage: "70 %" in French, "70%" in English. */
export function formatRate(lang: Lang, rate: number | null): string {
  if (rate === null) return DASHBOARD_STRINGS[lang].none;
  return new Intl.NumberFormat(LOCALES[lang], { style: 'percent', maximumFractionDigits: 0 }).format(rate);
}

/** A UTC day (2026-11-20) as "20 Nov" / "20 nov.". */
export function formatChartDay(lang: Lang, date: string): string {
  return new Intl.DateTimeFormat(LOCALES[lang], { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`));
}
