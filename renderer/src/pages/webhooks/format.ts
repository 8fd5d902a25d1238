import type { ConsoleWebhook } from '../../../../shared/console-webhooks.js';
import type { Delivery } from '../../../../shared/webhooks.js';
import type { Lang } from '../../i18n.js';
import type { WebhookStrings } from './strings.js';

/** A date and time in the page's language, to the second (deliveries are seconds apart). */
export { formatDateTimeSeconds as formatTime } from '../../format.js';

/** The error in the page's words when it has some of its own, else the console's sentence for the code (api.ts). */
export function errorText(s: WebhookStrings, error: { error: string; message: string }): string {
  return s.errors[error.error] ?? error.message;
}

/** What the card's badge says: a subscription whose deliveries fail is not "Active". */
export type Health = 'active' | 'failing' | 'paused' | 'deactivated';

type Attempt = Delivery['attempts'][number];

function attemptFailed(attempt: Attempt): boolean {
  return attempt.http_status === null || attempt.http_status < 200 || attempt.http_status >= 300;
}

/** The latest attempt of the latest delivery, when it failed: what the card words as the current problem. */
export function lastFailure(webhook: Pick<ConsoleWebhook, 'last_delivery'>): Attempt | null {
  const attempt = webhook.last_delivery?.attempts.at(-1);
  return attempt !== undefined && attemptFailed(attempt) ? attempt : null;
}

/**
 * Deactivated by the service (failing for days) or paused by a person; else failing when the
 * current run of failures has begun (failing_since) or the newest delivery's last attempt failed
 * — a test delivery included, which failing_since leaves out.
 */
export function subscriptionHealth(
  webhook: Pick<ConsoleWebhook, 'active' | 'disabled_reason' | 'failing_since' | 'last_delivery'>,
): Health {
  if (!webhook.active) return webhook.disabled_reason !== null ? 'deactivated' : 'paused';
  if (webhook.failing_since !== null || lastFailure(webhook) !== null) return 'failing';
  return 'active';
}

interface AttemptWords {
  noSuchName: (host: string) => string;
  lookupFailed: (host: string) => string;
  refused: (host: string) => string;
  cut: (host: string) => string;
  unreachable: (host: string) => string;
  timeout: (host: string) => string;
  certExpired: (host: string) => string;
  certWrongName: (host: string) => string;
  certUntrusted: (host: string) => string;
  tlsFailed: (host: string) => string;
  blocked: (host: string) => string;
  purged: string;
  redirect: (host: string, status: number) => string;
  denied: (host: string, status: number) => string;
  notFound: (host: string, status: number) => string;
  busy: (host: string, status: number) => string;
  rejected: (host: string, status: number) => string;
  serverError: (host: string, status: number) => string;
  other: (host: string) => string;
}

const en: AttemptWords = {
  noSuchName: (host) => `The address ${host} does not exist: no server has this name. Check the URL.`,
  lookupFailed: (host) => `The name ${host} could not be looked up just now (no network, or the name servers did not answer).`,
  refused: (host) =>
    `${host} refused the connection: nothing is listening at this address. Check the URL and that the receiving server is running.`,
  cut: (host) => `The connection to ${host} was cut before it answered.`,
  unreachable: (host) => `${host} cannot be reached from this computer’s network.`,
  timeout: (host) => `${host} did not answer in time.`,
  certExpired: (host) => `The security certificate of ${host} has expired: its owner must renew it.`,
  certWrongName: (host) => `The security certificate of ${host} was made for another name.`,
  certUntrusted: (host) => `The security certificate of ${host} is not from a trusted authority.`,
  tlsFailed: (host) => `No secure (https) connection could be set up with ${host}.`,
  blocked: (host) => `${host} leads to an address inside a private network, where Courtier does not send (to protect your network).`,
  purged: 'The event is older than its retention period and was deleted: it can no longer be sent.',
  redirect: (host, status) => `${host} answered with a redirect (${status}); deliveries do not follow redirects: give the final address.`,
  denied: (host, status) => `${host} refused the delivery (${status}): check the receiver’s access settings.`,
  notFound: (host, status) => `${host} answered that this address does not exist (${status}): check the path of the URL.`,
  busy: (host, status) => `${host} is busy and asked to wait (${status}); Courtier tries again later.`,
  rejected: (host, status) => `${host} refused the delivery (${status}).`,
  serverError: (host, status) => `${host} had an error on its side (${status}).`,
  other: (host) => `The connection to ${host} failed before it answered.`,
};

const fr: AttemptWords = {
  noSuchName: (host) => `L’adresse ${host} n’existe pas : aucun serveur ne porte ce nom. Vérifiez l’URL.`,
  lookupFailed: (host) =>
    `Le nom ${host} n’a pas pu être recherché à l’instant (pas de réseau, ou les serveurs de noms n’ont pas répondu).`,
  refused: (host) =>
    `${host} a refusé la connexion : rien n’écoute à cette adresse. Vérifiez l’URL et que le serveur destinataire est lancé.`,
  cut: (host) => `La connexion à ${host} a été coupée avant sa réponse.`,
  unreachable: (host) => `${host} est injoignable depuis le réseau de cet ordinateur.`,
  timeout: (host) => `${host} n’a pas répondu à temps.`,
  certExpired: (host) => `Le certificat de sécurité de ${host} a expiré : son propriétaire doit le renouveler.`,
  certWrongName: (host) => `Le certificat de sécurité de ${host} a été établi pour un autre nom.`,
  certUntrusted: (host) => `Le certificat de sécurité de ${host} ne vient pas d’une autorité de confiance.`,
  tlsFailed: (host) => `Aucune connexion sécurisée (https) n’a pu être établie avec ${host}.`,
  blocked: (host) => `${host} mène à une adresse d’un réseau privé, où Courtier n’envoie pas (pour protéger votre réseau).`,
  purged: 'L’événement a dépassé sa durée de conservation et a été supprimé : il ne peut plus être envoyé.',
  redirect: (host, status) =>
    `${host} a répondu par une redirection (${status}) ; les envois ne suivent pas les redirections : indiquez l’adresse finale.`,
  denied: (host, status) => `${host} a refusé l’envoi (${status}) : vérifiez les réglages d’accès du destinataire.`,
  notFound: (host, status) => `${host} a répondu que cette adresse n’existe pas (${status}) : vérifiez le chemin de l’URL.`,
  busy: (host, status) => `${host} est occupé et demande d’attendre (${status}) ; Courtier réessaie plus tard.`,
  rejected: (host, status) => `${host} a refusé l’envoi (${status}).`,
  serverError: (host, status) => `${host} a eu une erreur de son côté (${status}).`,
  other: (host) => `La connexion à ${host} a échoué avant sa réponse.`,
};

const ATTEMPT_WORDS: Record<Lang, AttemptWords> = { en, fr };

const CERT_UNTRUSTED = [
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
];

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function statusSentence(w: AttemptWords, host: string, status: number): string {
  if (status >= 300 && status < 400) return w.redirect(host, status);
  if (status === 401 || status === 403) return w.denied(host, status);
  if (status === 404 || status === 410) return w.notFound(host, status);
  if (status === 408 || status === 429 || status === 503) return w.busy(host, status);
  if (status >= 500) return w.serverError(host, status);
  return w.rejected(host, status);
}

/** The code of a network error as the service records it: "ECONNREFUSED: …", "network_error: getaddrinfo ENOTFOUND host", "timeout". */
function networkCode(error: string): string {
  const errno = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ESOCKETTIMEDOUT)\b/.exec(
    error,
  )?.[1];
  if (errno) return errno;
  if (/did not resolve/.test(error)) return 'ENOTFOUND';
  if (/socket hang up/i.test(error)) return 'ECONNRESET';
  return /^([A-Za-z_]+)(?::|$)/.exec(error)?.[1] ?? 'network_error';
}

/**
 * What went wrong with one delivery attempt, for a person: the receiver's answer (a status other
 * than 2xx) or the network's failure, naming the receiving host. Null for an attempt that succeeded.
 */
export function describeAttempt(lang: Lang, url: string, attempt: Pick<Attempt, 'error' | 'http_status'>): string | null {
  const w = ATTEMPT_WORDS[lang];
  const host = hostOf(url);
  if (attempt.error === null) {
    if (attempt.http_status === null || (attempt.http_status >= 200 && attempt.http_status < 300)) return null;
    return statusSentence(w, host, attempt.http_status);
  }
  const code = networkCode(attempt.error);
  switch (code) {
    case 'ENOTFOUND':
      return w.noSuchName(/ENOTFOUND (\S+)/.exec(attempt.error)?.[1] ?? host);
    case 'EAI_AGAIN':
      return w.lookupFailed(host);
    case 'ECONNREFUSED':
      return w.refused(host);
    case 'ECONNRESET':
    case 'EPIPE':
      return w.cut(host);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return w.unreachable(host);
    case 'timeout':
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return w.timeout(host);
    case 'CERT_HAS_EXPIRED':
      return w.certExpired(host);
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return w.certWrongName(host);
    case 'blocked_target':
      return w.blocked(host);
    case 'event_purged':
      return w.purged;
    default:
      if (CERT_UNTRUSTED.includes(code)) return w.certUntrusted(host);
      if (code === 'EPROTO' || /^ERR_SSL|^ERR_TLS|CERT/.test(code)) return w.tlsFailed(host);
      return w.other(host);
  }
}
