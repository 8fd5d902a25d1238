import type { SyncConflict, SyncConflictRetry, SyncStatus } from '../../../../shared/console-sync.js';
import { formatDateTimeSeconds, formatTime, LOCALES } from '../../format.js';
import type { Lang } from '../../i18n.js';
import type { SyncStrings } from './strings.js';

/** The Sync page's and the indicator's pure rules (no DOM): times, the indicator's words, connect errors, set-aside changes. */

/** A date and time to the second, in the page's language. */
export function absoluteTime(iso: string, lang: Lang): string {
  return formatDateTimeSeconds(lang, iso);
}

const UNITS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/**
 * How long ago (or, with a clock ahead, how far ahead) `iso` is from `now`, in words: "now" under
 * 10 seconds, then whole seconds, minutes, hours or days, never rounded up ("1 minute ago" until
 * two minutes have passed).
 */
export function relativeTime(iso: string, now: number, lang: Lang): string {
  const format = new Intl.RelativeTimeFormat(LOCALES[lang], { numeric: 'auto' });
  const seconds = (Date.parse(iso) - now) / 1000;
  const size = Math.abs(seconds);
  if (size < 10) return format.format(0, 'second');
  for (const [unit, length] of UNITS) {
    if (size >= length) return format.format(Math.trunc(seconds / length), unit);
  }
  return format.format(0, 'second');
}

type IndicatorTone = 'ok' | 'busy' | 'warning' | 'danger';

/**
 * What the shell's indicator says of a status, or null when the cabinet does not sync. A catch-up
 * after a restored backup is said unless a pause or a refusal matters more: a broker missing a
 * recent record learns why.
 */
export function indicatorOf(status: SyncStatus, s: SyncStrings): { tone: IndicatorTone; text: string } | null {
  const waiting = status.pending_changes > 0 ? ` — ${s.waiting(status.pending_changes)}` : '';
  if (status.state === 'off') return null;
  if (status.paused) return { tone: 'warning', text: s.paused + waiting };
  if (status.resyncing && status.state !== 'error')
    return status.state === 'offline' ? { tone: 'warning', text: s.offlineResyncing } : { tone: 'busy', text: s.resyncing };
  switch (status.state) {
    case 'idle':
      return status.pending_changes > 0 ? { tone: 'busy', text: s.syncing } : { tone: 'ok', text: s.synced };
    case 'syncing':
      return { tone: 'busy', text: s.syncing };
    case 'offline':
      return { tone: 'warning', text: s.offline + waiting };
    case 'error':
      return { tone: 'danger', text: s.problem };
  }
}

/** The time of day, to the minute, in the page's language. */
function timeOfDay(iso: string, lang: Lang): string {
  return formatTime(lang, iso);
}

/**
 * The last problem in the page's language, from its stable code (and the status's figures); a
 * problem the page has no words for keeps the server's own, as a detail. Null when there is none.
 */
export function problemOf(status: SyncStatus, s: SyncStrings, lang: Lang): string | null {
  if (status.last_error === null) return null;
  if (status.last_error_code === 'hub_unreachable' && status.offline_since !== null)
    return s.problems.offlineSince(timeOfDay(status.offline_since, lang));
  if (status.last_error_code === 'clock_skew' && status.clock_ahead_seconds !== null && status.clock_ahead_seconds > 0) {
    return s.problems.clockAhead(Math.round(status.clock_ahead_seconds / 60));
  }
  return s.problems.byCode[status.last_error_code ?? ''] ?? s.detail(status.last_error);
}

/** The indicator's tooltip: its name, then the catch-up after a restored backup and the last problem, when there are. */
export function indicatorTitle(status: SyncStatus, s: SyncStrings, lang: Lang): string {
  const said = [status.resyncing && status.state !== 'off' ? s.resyncingSentence : null, problemOf(status, s, lang)].filter(
    (text) => text !== null,
  );
  return said.length === 0 ? s.indicatorLabel : `${s.indicatorLabel} — ${said.join(' ')}`;
}

/** A field of the connect form. */
export type ConnectField = 'hub_url' | 'code' | 'device_name';

const FIELD_OF_CODE: Partial<Record<string, ConnectField>> = {
  invalid_hub_url: 'hub_url',
  hub_unreachable: 'hub_url',
  invalid_pairing_code: 'code',
  too_many_pairing_attempts: 'code',
};

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLocaleLowerCase() + text.slice(1);
}

/** The field a validation error's details name first (`body.hub_url` …), if any. */
function fieldOfDetails(details: unknown): ConnectField | null {
  if (!Array.isArray(details)) return null;
  for (const issue of details as unknown[]) {
    const path = typeof issue === 'object' && issue !== null ? (issue as { path?: unknown }).path : undefined;
    const field = typeof path === 'string' ? path.replace(/^body\./, '').split('.')[0] : undefined;
    if (field === 'hub_url' || field === 'code' || field === 'device_name') return field;
  }
  return null;
}

/**
 * A failed connect, for the form: the field it is about (shown beside it), the words in the page's
 * language when it has them for the code, and the server's own words (which say exactly what was
 * wrong: the URL's scheme, the network error) as the text or, after a translation, as its detail.
 */
export function connectProblem(
  error: { error: string; message: string; details?: unknown; server_message?: string },
  s: SyncStrings,
): { field: ConnectField | null; text: string; detail: string | null } {
  const field = FIELD_OF_CODE[error.error] ?? (error.error === 'validation_error' ? fieldOfDetails(error.details) : null);
  // The server's words (call() puts the console's sentence in message): they name the URL, the network error.
  const message = capitalised((error.server_message ?? error.message).trim());
  const translated = s.errors[error.error];
  return translated === undefined ? { field, text: message, detail: null } : { field, text: translated, detail: s.detail(message) };
}

/** A kind of record in words ("opportunity"); a kind of a newer version keeps its own name. */
export function kindName(kind: string, s: SyncStrings): string {
  const names: Partial<Record<string, string>> = s.recordKinds;
  return names[kind] ?? kind;
}

/** A set-aside change's record in words: "opportunity opp_…". */
export function recordOf(conflict: Pick<SyncConflict, 'kind' | 'record_id'>, s: SyncStrings): string {
  return `${kindName(conflict.kind, s)} ${conflict.record_id}`;
}

/**
 * What became of a set-aside change tried again, in words: applied, still set aside (with its
 * reason as the list read after the retry gives it, since the retry may have changed it), or gone
 * from the hub.
 */
export function retryOutcome(
  result: SyncConflictRetry,
  conflict: SyncConflict,
  after: readonly SyncConflict[] | null,
  s: SyncStrings,
): string {
  const { seq } = conflict;
  if (result.applied.includes(seq)) return s.outcomes.applied(recordOf(conflict, s));
  if (result.no_longer_on_hub.includes(seq)) return s.outcomes.noLongerOnHub;
  if (result.still_set_aside.includes(seq)) {
    const reason = after?.find((c) => c.seq === seq)?.reason ?? conflict.reason;
    return s.outcomes.stillSetAside(lowerFirst(s.setAsideReasons[reason]));
  }
  return s.outcomes.notSetAside(recordOf(conflict, s));
}
