import type { Lang } from './i18n.js';

/**
 * Dates, times and amounts, one way per language on every page: French as France writes them
 * ("4 déc. 2026, 09:26", "1 234,56 €"), English as Britain does ("4 Dec 2026, 09:26", "€1,234.56").
 */

/** The locale each language of the console writes in. */
export const LOCALES: Record<Lang, string> = { fr: 'fr-FR', en: 'en-GB' };

function formatter(lang: Lang, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat(LOCALES[lang], options);
}

const DATE: Intl.DateTimeFormatOptions = { dateStyle: 'medium' };
const DATE_TIME: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' };
const DATE_TIME_SECONDS: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'medium' };
const TIME: Intl.DateTimeFormatOptions = { timeStyle: 'short' };
const TIME_SECONDS: Intl.DateTimeFormatOptions = { timeStyle: 'medium' };

/** Intl throws on an invalid date, which would blank the whole page: a dash says "no date" instead. */
function format(lang: Lang, options: Intl.DateTimeFormatOptions, iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : formatter(lang, options).format(date);
}

/** A day: "4 Dec 2026", "4 déc. 2026". */
export const formatDate = (lang: Lang, iso: string): string => format(lang, DATE, iso);
/** A day and its time to the minute. */
export const formatDateTime = (lang: Lang, iso: string): string => format(lang, DATE_TIME, iso);
/** A day and its time to the second (deliveries and sync rounds are seconds apart). */
export const formatDateTimeSeconds = (lang: Lang, iso: string): string => format(lang, DATE_TIME_SECONDS, iso);
/** The time of day, to the minute. */
export const formatTime = (lang: Lang, iso: string): string => format(lang, TIME, iso);
/** The time of day, to the second (a job's steps). */
export const formatClock = (lang: Lang, iso: string): string => format(lang, TIME_SECONDS, iso);

/** An amount in euros, with its sign where the language puts it. */
export function formatEuros(lang: Lang, eur: number): string {
  return new Intl.NumberFormat(LOCALES[lang], { style: 'currency', currency: 'EUR' }).format(eur);
}

/** A calendar day (2026-12-04) written as `formatDate` writes dates: that very day, whatever the browser's time zone. */
export function formatDay(lang: Lang, day: string): string {
  return formatter(lang, { ...DATE, timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

/** A number grouped as the language groups thousands (12 345 / 12,345). */
export function formatNumber(lang: Lang, n: number, maximumFractionDigits = 6): string {
  return new Intl.NumberFormat(LOCALES[lang], { maximumFractionDigits }).format(n);
}
