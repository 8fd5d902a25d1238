import type { ApiError } from '../../api.js';
import type { Lang } from '../../i18n.js';
import type { WebhookStrings } from './strings.js';

const formats = new Map<Lang, Intl.DateTimeFormat>();

/** A date and time in the page's language, to the second (deliveries are seconds apart). */
export function formatTime(lang: Lang, iso: string): string {
  let format = formats.get(lang);
  if (!format) {
    format = new Intl.DateTimeFormat(lang === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'short', timeStyle: 'medium' });
    formats.set(lang, format);
  }
  return format.format(new Date(iso));
}

/** The error in the page's language when it has words for it, else the server's message. */
export function errorText(s: WebhookStrings, error: ApiError): string {
  return s.errors[error.error] ?? error.message;
}
