import type { Lang } from '../../i18n.js';

/** The words of the jobs list, a job's page, Retry and the MFA prompt's alerts, in both languages. */
export interface JobStrings {
  search: string;
  searchHint: string;
  insured: string;
  unnamed: string;
  product: string;
  openDetail: (who: string) => string;
  backToJobs: string;
  jobTitle: (who: string, product: string) => string;
  inputs: string;
  timeline: string;
  timelineElsewhere: string;
  /** A job enqueued on another computer of the cabinet: its badge, and what that means here. */
  elsewhere: string;
  elsewhereHint: string;
  whatHappened: string;
  creditsLine: (c: { cost: number; debited: number; refunded: number }, failed: boolean) => string;
  refundedShort: (n: number) => string;
  notRefundedShort: string;
  reference: string;
  quote: string;
  client: string;
  openClient: string;
  retry: string;
  retryTitle: string;
  retryBody: (who: string, product: string, cost: number) => string;
  retryConfirm: string;
  retried: string;
  cancelTitle: string;
  cancelBody: (who: string) => string;
  cancelConfirm: string;
  keepRunning: string;
  artifactsTitle: string;
  insurer: string;
  /** The term before the code and version of the adapter whose robot took the job. */
  robot: string;
  enableNotifications: string;
  notificationsOn: string;
  notificationTitle: (who: string) => string;
  notificationBody: (insurer: string) => string;
  mfaFor: (who: string, product: string) => string;
  loginUntested: (login: string) => string;
  loginWorks: (login: string, when: string) => string;
  loginRefused: (when: string) => string;
  /** A robot's step, in the user's language (the robot reports it in English). */
  step: (step: string) => string;
  /** A robot's error, said for a broker; `message` is the portal's or the robot's own words. */
  jobError: (code: string, message: string) => string;
}

const STEPS_FR: Record<string, string> = {
  queued: 'en file d’attente',
  'opening the browser': 'ouverture du navigateur',
  'logging in': 'connexion au portail',
  'two-step verification': 'vérification en deux étapes',
  'waiting for the MFA code': 'en attente du code',
  'MFA code received': 'code reçu',
  'opening the auto quote': 'ouverture du devis auto',
  'opening the home quote': 'ouverture du devis habitation',
  driver: 'conducteur',
  vehicle: 'véhicule',
  formula: 'formule',
  dwelling: 'logement',
  occupation: 'occupation',
  pricing: 'tarification',
  'reading the result': 'lecture du résultat',
  'downloading the PDF': 'téléchargement du PDF',
  'opening the attestation form': 'ouverture du formulaire d’attestation',
  'requesting the attestation': 'demande de l’attestation',
  done: 'terminé',
  'priced, no PDF': 'tarifé, sans PDF',
  'queued again after an interruption': 'remis en file après une interruption',
};

const ERRORS_EN: Record<string, string> = {
  data_refused: 'The insurer refused the data',
  invalid_credentials: 'The insurer refused the cabinet’s login or password; the credits were refunded. Update them on the Insurers page',
  mfa_rejected: 'The insurer refused the verification code three times',
  mfa_timeout: 'Nobody typed the verification code in time',
  policy_not_found: 'The insurer has no contract with this number',
  unknown_product: 'The insurer does not offer this product any more',
  insurer_unavailable: 'The insurer’s website was not answering; the credits were refunded, try again later',
  layout_changed: 'The insurer’s website has changed and the robot could not find its way; the credits were refunded and we have been told',
  session_expired: 'The insurer ended the session during the quote; the credits were refunded, try again',
  browser_error: 'The robot’s browser stopped during the quote; the credits were refunded, try again',
  browser_unavailable: 'The robot’s browser could not start on this computer; the credits were refunded',
  cancelled: 'Cancelled on request; the credits were refunded',
  worker_crashed: 'Courtier stopped during this quote; the credits were refunded',
  robot_crashed: 'The robot stopped unexpectedly; the credits were refunded',
};

const ERRORS_FR: Record<string, string> = {
  data_refused: 'L’assureur a refusé les données',
  invalid_credentials:
    'L’assureur a refusé l’identifiant ou le mot de passe du cabinet ; les crédits ont été remboursés. Mettez-les à jour dans Assureurs',
  mfa_rejected: 'L’assureur a refusé le code de vérification trois fois',
  mfa_timeout: 'Personne n’a saisi le code de vérification à temps',
  policy_not_found: 'L’assureur n’a pas de contrat sous ce numéro',
  unknown_product: 'L’assureur ne propose plus ce produit',
  insurer_unavailable: 'Le site de l’assureur ne répondait pas ; les crédits ont été remboursés, réessayez plus tard',
  layout_changed:
    'Le site de l’assureur a changé et le robot ne s’y retrouve plus ; les crédits ont été remboursés et nous sommes prévenus',
  session_expired: 'L’assureur a fermé la session pendant le devis ; les crédits ont été remboursés, réessayez',
  browser_error: 'Le navigateur du robot s’est arrêté pendant le devis ; les crédits ont été remboursés, réessayez',
  browser_unavailable: 'Le navigateur du robot n’a pas pu démarrer sur cet ordinateur ; les crédits ont été remboursés',
  cancelled: 'Annulée à votre demande ; les crédits ont été remboursés',
  worker_crashed: 'Courtier s’est arrêté pendant ce devis ; les crédits ont été remboursés',
  robot_crashed: 'Le robot s’est arrêté de façon inattendue ; les crédits ont été remboursés',
};

/** A failure's reason in words, without the robot's message (the dashboard counts failures of one code); null for a code the console has no words for. */
export function errorReason(lang: Lang, code: string): string | null {
  return (lang === 'fr' ? ERRORS_FR : ERRORS_EN)[code] ?? null;
}

/** Codes whose own message is the insurer's words, worth showing after ours. */
const INSURER_WORDS = new Set(['data_refused', 'policy_not_found']);

function jobError(words: Record<string, string>, unknown: string, quote: (said: string, message: string) => string) {
  return (code: string, message: string) => {
    const said = words[code];
    if (said === undefined) return `${unknown} ${message}`.trim();
    return INSURER_WORDS.has(code) && message !== '' ? quote(said, message) : `${said}.`;
  };
}

const en: JobStrings = {
  search: 'Find a job',
  searchHint: 'A client’s or insured’s name, or a reference (its start or its end).',
  insured: 'Insured',
  unnamed: 'Unnamed insured',
  product: 'Product',
  openDetail: (who) => `Open the job for ${who}`,
  backToJobs: 'All jobs',
  jobTitle: (who, product) => `${who} — ${product}`,
  inputs: 'Data sent to the insurer',
  timeline: 'Steps',
  timelineElsewhere: 'This job was started on another computer of the cabinet; its steps are shown there.',
  elsewhere: 'On another computer',
  elsewhereHint:
    'Started on another computer of the cabinet: its robots run it, and only there can it be cancelled or given a code. Here it shows as that computer last synced it.',
  whatHappened: 'What happened',
  creditsLine: (c, failed) =>
    c.refunded > 0
      ? `${c.debited} credits debited, ${c.refunded} refunded.`
      : failed
        ? `${c.debited} credits debited, not refunded: the insurer did its part of the work.`
        : `${c.debited} credits debited.`,
  refundedShort: (n) => `refunded (${n})`,
  notRefundedShort: 'not refunded',
  reference: 'Reference',
  quote: 'Quote',
  client: 'Client',
  openClient: 'Open the client',
  retry: 'Retry',
  retryTitle: 'Price this quote again?',
  retryBody: (who, product, cost) =>
    `A new job prices ${product} for ${who} again with the same data. It costs ${cost} credits, refunded if the insurer’s website fails.`,
  retryConfirm: 'Price again',
  retried: 'A new job was started.',
  cancelTitle: 'Cancel this job?',
  cancelBody: (who) => `The robot stops working on the quote for ${who}, and the credits are refunded. This cannot be undone.`,
  cancelConfirm: 'Cancel the job',
  keepRunning: 'Keep it running',
  artifactsTitle: 'What the robot saw (administrators)',
  insurer: 'Insurer',
  robot: 'Robot',
  enableNotifications: 'Alert me when a code is needed',
  notificationsOn: 'Alerts on: this browser tells you when an insurer asks for a code.',
  notificationTitle: (who) => `Code needed — ${who}`,
  notificationBody: (insurer) => `The ${insurer} portal asks for a verification code. Open Courtier to type it.`,
  mfaFor: (who, product) => `${who} · ${product}`,
  loginUntested: (login) => `Configured: login ${login}, not tested yet`,
  loginWorks: (login, when) => `Configured: login ${login}, works (tested ${when})`,
  loginRefused: (when) => `Configured, but the insurer refused the login (tested ${when})`,
  step: (step) => step,
  jobError: jobError(ERRORS_EN, 'The robot stopped:', (said, message) => `${said}: “${message}”`),
};

const fr: JobStrings = {
  search: 'Trouver une tâche',
  searchHint: 'Le nom d’un client ou d’un assuré, ou une référence (son début ou sa fin).',
  insured: 'Assuré',
  unnamed: 'Assuré sans nom',
  product: 'Produit',
  openDetail: (who) => `Ouvrir la tâche de ${who}`,
  backToJobs: 'Toutes les tâches',
  jobTitle: (who, product) => `${who} — ${product}`,
  inputs: 'Données envoyées à l’assureur',
  timeline: 'Étapes',
  timelineElsewhere: 'Cette tâche a été lancée depuis un autre poste du cabinet ; ses étapes y sont affichées.',
  elsewhere: 'Sur un autre poste',
  elsewhereHint:
    'Lancée depuis un autre poste du cabinet : ses robots la traitent, et c’est là seulement qu’elle peut être annulée ou recevoir un code. Elle s’affiche ici telle que ce poste l’a synchronisée en dernier.',
  whatHappened: 'Ce qui s’est passé',
  creditsLine: (c, failed) =>
    c.refunded > 0
      ? `${c.debited} crédits débités, ${c.refunded} remboursés.`
      : failed
        ? `${c.debited} crédits débités, non remboursés : l’assureur a fait sa part du travail.`
        : `${c.debited} crédits débités.`,
  refundedShort: (n) => `remboursés (${n})`,
  notRefundedShort: 'non remboursés',
  reference: 'Référence',
  quote: 'Devis',
  client: 'Client',
  openClient: 'Ouvrir la fiche client',
  retry: 'Relancer',
  retryTitle: 'Tarifer à nouveau ce devis ?',
  retryBody: (who, product, cost) =>
    `Une nouvelle tâche tarife à nouveau ${product} pour ${who} avec les mêmes données. Elle coûte ${cost} crédits, remboursés si le site de l’assureur échoue.`,
  retryConfirm: 'Tarifer à nouveau',
  retried: 'Une nouvelle tâche a été lancée.',
  cancelTitle: 'Annuler cette tâche ?',
  cancelBody: (who) => `Le robot arrête de travailler sur le devis de ${who}, et les crédits sont remboursés. C’est définitif.`,
  cancelConfirm: 'Annuler la tâche',
  keepRunning: 'La laisser continuer',
  artifactsTitle: 'Ce que le robot a vu (administrateurs)',
  insurer: 'Assureur',
  robot: 'Robot',
  enableNotifications: 'M’alerter quand un code est demandé',
  notificationsOn: 'Alertes activées : ce navigateur vous prévient quand un assureur demande un code.',
  notificationTitle: (who) => `Code demandé — ${who}`,
  notificationBody: (insurer) => `Le portail ${insurer} demande un code de vérification. Ouvrez Courtier pour le saisir.`,
  mfaFor: (who, product) => `${who} · ${product}`,
  loginUntested: (login) => `Configurés : identifiant ${login}, pas encore testé`,
  loginWorks: (login, when) => `Configurés : identifiant ${login}, valide (testé le ${when})`,
  loginRefused: (when) => `Configurés, mais l’assureur refuse la connexion (testée le ${when})`,
  step: (step) => STEPS_FR[step] ?? step,
  jobError: jobError(ERRORS_FR, 'Le robot s’est arrêté :', (said, message) => `${said} : « ${message} »`),
};

export const JOB_STRINGS: Record<Lang, JobStrings> = { en, fr };
