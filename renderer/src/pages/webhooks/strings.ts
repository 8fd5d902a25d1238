import type { EventType } from '../../../../shared/events.js';
import type { Delivery } from '../../../../shared/webhooks.js';
import type { Lang } from '../../i18n.js';

/** Every word of the webhooks page, in English and French. */
export interface WebhookStrings {
  title: string;
  intro: string;
  // New webhook and edit form
  newWebhook: string;
  url: string;
  urlHint: string;
  description: string;
  descriptionHint: string;
  events: string;
  allEvents: string;
  allEventsHint: string;
  create: string;
  creating: string;
  save: string;
  cancel: string;
  urlRequired: string;
  urlNotHttps: string;
  eventsRequired: string;
  // Secrets
  createdTitle: string;
  secretLabel: string;
  newSecretLabel: string;
  secretWarning: string;
  copy: string;
  copied: string;
  copyFailed: string;
  secretStored: string;
  createdFor: (url: string) => string;
  rotationUntil: (when: string) => string;
  rotatedNoOverlap: string;
  // Subscriptions
  subscriptions: string;
  none: string;
  moreWebhooks: string;
  statusLabel: string;
  active: string;
  paused: string;
  deactivated: string;
  failing: string;
  /** The current problem, worded from the latest attempt (format.ts, describeAttempt). */
  lastFailed: (sentence: string) => string;
  deactivatedBecause: (since: string) => string;
  everyEvent: string;
  lastDelivery: string;
  noDeliveryYet: string;
  failingSince: (when: string) => string;
  rotationEndsAt: (when: string) => string;
  subscriptionActions: string;
  edit: string;
  editTitle: string;
  pause: string;
  resume: string;
  paused_notice: string;
  resumed_notice: string;
  saved_notice: string;
  rotate: string;
  sendTest: string;
  sending: string;
  delete: string;
  deleteTitle: string;
  deleteText: (url: string) => string;
  confirmDelete: string;
  deleted: (url: string) => string;
  rotateTitle: string;
  rotateText: string;
  overlapLabel: string;
  overlapChoice: (seconds: number) => string;
  confirmRotate: string;
  testSucceeded: (status: number | null, ms: number) => string;
  testFailed: (detail: string) => string;
  // History
  history: string;
  showHistory: string;
  hideHistory: string;
  refresh: string;
  olderDeliveries: string;
  noDeliveries: string;
  historyOf: (url: string) => string;
  colEvent: string;
  colStatus: string;
  colCreated: string;
  colAttempts: string;
  colActions: string;
  deliveryStatus: Record<Delivery['status'], string>;
  replayOf: string;
  noAttempt: string;
  nextAttempt: (when: string) => string;
  attemptLine: (when: string, status: number | null, ms: number) => string;
  attemptsOf: (event: string) => string;
  replay: string;
  replayLabel: (event: string, when: string) => string;
  replayed: string;
  eventDescriptions: Record<EventType, string>;
  /** Error codes shown in the page's language; others show the server's message. */
  errors: Partial<Record<string, string>>;
}

const en: WebhookStrings = {
  title: 'Webhooks',
  intro:
    'Courtier sends signed HTTPS POSTs to your endpoints when something happens in the cabinet. Each delivery is retried for up to about 15 hours, and every attempt is listed in its history.',
  newWebhook: 'New webhook',
  url: 'Endpoint URL',
  urlHint: 'An https:// address that answers with a 2xx status.',
  description: 'Description',
  descriptionHint: 'Optional: what this endpoint is for.',
  events: 'Events',
  allEvents: 'All events',
  allEventsHint: 'Every event, including those added later (test deliveries aside).',
  create: 'Create webhook',
  creating: 'Creating…',
  save: 'Save',
  cancel: 'Cancel',
  urlRequired: 'Enter the endpoint URL (https://…).',
  urlNotHttps: 'The endpoint URL must start with https://.',
  eventsRequired: 'Choose at least one event, or All events.',
  createdTitle: 'Webhook created',
  secretLabel: 'Signing secret',
  newSecretLabel: 'New signing secret',
  secretWarning: 'Store this secret now: it will not be shown again. It signs every delivery (Service-Signature header).',
  copy: 'Copy',
  copied: 'Copied to the clipboard.',
  copyFailed: 'The clipboard is not available: the secret is selected, copy it with Ctrl+C.',
  secretStored: 'I have stored it',
  createdFor: (url) => `Webhook created for ${url}.`,
  rotationUntil: (when) => `Until ${when}, deliveries carry two signatures: the new secret’s first, then the previous one’s.`,
  rotatedNoOverlap: 'The previous secret no longer signs.',
  subscriptions: 'Subscriptions',
  none: 'No webhook yet. Use “New webhook” to create one.',
  moreWebhooks: 'More webhooks',
  statusLabel: 'Status',
  active: 'Active',
  paused: 'Paused',
  deactivated: 'Deactivated',
  failing: 'Failing',
  lastFailed: (sentence) => `Last delivery failed: ${sentence}`,
  deactivatedBecause: (since) =>
    `Deactivated by Courtier: every delivery failed since ${since} (5 days). Fix the receiving server, then resume it.`,
  everyEvent: 'All events',
  lastDelivery: 'Last delivery',
  noDeliveryYet: 'None yet',
  failingSince: (when) => `Failing since ${when}.`,
  rotationEndsAt: (when) => `Secret rotation: the previous secret also signs until ${when}.`,
  subscriptionActions: 'Actions',
  edit: 'Edit',
  editTitle: 'Edit the webhook',
  pause: 'Pause',
  resume: 'Resume',
  paused_notice: 'Paused: deliveries wait until you resume.',
  resumed_notice: 'Resumed: waiting deliveries go out now.',
  saved_notice: 'Changes saved.',
  rotate: 'Rotate secret',
  sendTest: 'Send test',
  sending: 'Sending…',
  delete: 'Delete',
  deleteTitle: 'Delete this webhook?',
  deleteText: (url) => `${url} will receive nothing more, and its delivery history is deleted with it. This cannot be undone.`,
  confirmDelete: 'Delete the webhook',
  deleted: (url) => `Webhook ${url} deleted.`,
  rotateTitle: 'Rotate the signing secret',
  rotateText:
    'A new secret signs every delivery from now on. Update your endpoint with it; during the overlap the previous secret signs too.',
  overlapLabel: 'Previous secret keeps signing for',
  overlapChoice: (seconds) =>
    seconds === 0
      ? 'No overlap (stops now)'
      : seconds === 3600
        ? '1 hour'
        : seconds === 86_400
          ? '24 hours'
          : `${Math.round(seconds / 86_400)} days`,
  confirmRotate: 'Rotate the secret',
  testSucceeded: (status, ms) => `Test delivered: HTTP ${status ?? '—'} in ${ms} ms.`,
  testFailed: (detail) => `Test failed. ${detail}`,
  history: 'Delivery history',
  showHistory: 'Show delivery history',
  hideHistory: 'Hide delivery history',
  refresh: 'Refresh',
  olderDeliveries: 'Older deliveries',
  noDeliveries: 'No delivery yet. Send a test to see one here.',
  historyOf: (url) => `Delivery history of ${url}`,
  colEvent: 'Event',
  colStatus: 'Status',
  colCreated: 'Created',
  colAttempts: 'Attempts',
  colActions: 'Actions',
  deliveryStatus: { pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed' },
  replayOf: 'Resent copy',
  noAttempt: 'No attempt yet.',
  nextAttempt: (when) => `Next attempt ${when}.`,
  attemptLine: (when, status, ms) => `${when} · ${status === null ? 'no response' : `HTTP ${status}`} · ${ms} ms`,
  attemptsOf: (event) => `Attempts of ${event}`,
  replay: 'Replay',
  replayLabel: (event, when) => `Replay ${event} of ${when}`,
  replayed: 'Replayed as a new delivery of the same event (same id).',
  eventDescriptions: {
    'opportunity.created': 'An opportunity is created.',
    'opportunity.stage_changed': 'An opportunity changes stage.',
    'opportunity.won': 'An opportunity is won (also sends stage_changed).',
    'opportunity.lost': 'An opportunity is lost (also sends stage_changed).',
    'devis.generated': 'A quote is priced.',
    'devis.failed': 'Pricing a quote failed.',
    'devis.signed': 'A quote is signed.',
    'job.completed': 'A pricing job completes.',
    'job.failed': 'A pricing job fails.',
    'job.mfa_required': 'A pricing job waits for a multi-factor code.',
    'insurer.portal_changed': 'An insurer’s portal changed: its robot fails until its adapter is updated.',
    'contract.signed': 'A signed quote becomes a contract.',
    'comparaison.completed': 'Every insurer of a comparison has answered.',
    'client.updated': 'A client’s contact details change.',
    'client.erased': 'A client’s personal data is erased (no personal data is sent).',
    'webhook.test': 'A test delivery from this page.',
  },
  errors: {},
};

const fr: WebhookStrings = {
  title: 'Webhooks',
  intro:
    'Courtier envoie des requêtes HTTPS POST signées à vos adresses quand quelque chose se passe dans le cabinet. Chaque envoi est retenté pendant environ 15 heures, et chaque tentative figure dans son historique.',
  newWebhook: 'Nouveau webhook',
  url: 'URL de destination',
  urlHint: 'Une adresse https:// qui répond par un statut 2xx.',
  description: 'Description',
  descriptionHint: 'Facultatif : à quoi sert cette adresse.',
  events: 'Événements',
  allEvents: 'Tous les événements',
  allEventsHint: 'Tous les événements, y compris ceux ajoutés plus tard (hors envois de test).',
  create: 'Créer le webhook',
  creating: 'Création…',
  save: 'Enregistrer',
  cancel: 'Annuler',
  urlRequired: 'Saisissez l’URL de destination (https://…).',
  urlNotHttps: 'L’URL de destination doit commencer par https://.',
  eventsRequired: 'Choisissez au moins un événement, ou Tous les événements.',
  createdTitle: 'Webhook créé',
  secretLabel: 'Secret de signature',
  newSecretLabel: 'Nouveau secret de signature',
  secretWarning: 'Conservez ce secret maintenant : il ne sera plus affiché. Il signe chaque envoi (en-tête Service-Signature).',
  copy: 'Copier',
  copied: 'Copié dans le presse-papiers.',
  copyFailed: 'Le presse-papiers n’est pas disponible : le secret est sélectionné, copiez-le avec Ctrl+C.',
  secretStored: 'Je l’ai conservé',
  createdFor: (url) => `Webhook créé pour ${url}.`,
  rotationUntil: (when) =>
    `Jusqu’au ${when}, les envois portent deux signatures : celle du nouveau secret d’abord, puis celle de l’ancien.`,
  rotatedNoOverlap: 'L’ancien secret ne signe plus.',
  subscriptions: 'Abonnements',
  none: 'Aucun webhook pour l’instant. Utilisez « Nouveau webhook » pour en créer un.',
  moreWebhooks: 'Plus de webhooks',
  statusLabel: 'État',
  active: 'Actif',
  paused: 'En pause',
  deactivated: 'Désactivé',
  failing: 'En échec',
  lastFailed: (sentence) => `Dernier envoi en échec : ${sentence}`,
  deactivatedBecause: (since) =>
    `Désactivé par Courtier : tous les envois échouent depuis le ${since} (5 jours). Corrigez le serveur destinataire, puis reprenez-le.`,
  everyEvent: 'Tous les événements',
  lastDelivery: 'Dernier envoi',
  noDeliveryYet: 'Aucun pour l’instant',
  failingSince: (when) => `En échec depuis le ${when}.`,
  rotationEndsAt: (when) => `Changement de secret : l’ancien secret signe aussi jusqu’au ${when}.`,
  subscriptionActions: 'Actions',
  edit: 'Modifier',
  editTitle: 'Modifier le webhook',
  pause: 'Mettre en pause',
  resume: 'Reprendre',
  paused_notice: 'En pause : les envois attendent la reprise.',
  resumed_notice: 'Repris : les envois en attente partent maintenant.',
  saved_notice: 'Modifications enregistrées.',
  rotate: 'Changer le secret',
  sendTest: 'Envoyer un test',
  sending: 'Envoi…',
  delete: 'Supprimer',
  deleteTitle: 'Supprimer ce webhook ?',
  deleteText: (url) => `${url} ne recevra plus rien, et son historique d’envois est supprimé avec lui. C’est définitif.`,
  confirmDelete: 'Supprimer le webhook',
  deleted: (url) => `Webhook ${url} supprimé.`,
  rotateTitle: 'Changer le secret de signature',
  rotateText:
    'Un nouveau secret signe chaque envoi à partir de maintenant. Mettez-le à jour sur votre serveur ; pendant le chevauchement, l’ancien signe aussi.',
  overlapLabel: 'L’ancien secret signe encore pendant',
  overlapChoice: (seconds) =>
    seconds === 0
      ? 'Aucun chevauchement (s’arrête maintenant)'
      : seconds === 3600
        ? '1 heure'
        : seconds === 86_400
          ? '24 heures'
          : `${Math.round(seconds / 86_400)} jours`,
  confirmRotate: 'Changer le secret',
  testSucceeded: (status, ms) => `Test reçu : HTTP ${status ?? '—'} en ${ms} ms.`,
  testFailed: (detail) => `Échec du test. ${detail}`,
  history: 'Historique des envois',
  showHistory: 'Afficher l’historique des envois',
  hideHistory: 'Masquer l’historique des envois',
  refresh: 'Actualiser',
  olderDeliveries: 'Envois plus anciens',
  noDeliveries: 'Aucun envoi pour l’instant. Envoyez un test pour en voir un ici.',
  historyOf: (url) => `Historique des envois de ${url}`,
  colEvent: 'Événement',
  colStatus: 'État',
  colCreated: 'Créé le',
  colAttempts: 'Tentatives',
  colActions: 'Actions',
  deliveryStatus: { pending: 'En attente', succeeded: 'Réussi', failed: 'Échoué' },
  replayOf: 'Copie renvoyée',
  noAttempt: 'Aucune tentative pour l’instant.',
  nextAttempt: (when) => `Prochaine tentative le ${when}.`,
  attemptLine: (when, status, ms) => `${when} · ${status === null ? 'pas de réponse' : `HTTP ${status}`} · ${ms} ms`,
  attemptsOf: (event) => `Tentatives de ${event}`,
  replay: 'Renvoyer',
  replayLabel: (event, when) => `Renvoyer ${event} du ${when}`,
  replayed: 'Renvoyé comme un nouvel envoi du même événement (même id).',
  eventDescriptions: {
    'opportunity.created': 'Une opportunité est créée.',
    'opportunity.stage_changed': 'Une opportunité change d’étape.',
    'opportunity.won': 'Une opportunité est gagnée (envoie aussi stage_changed).',
    'opportunity.lost': 'Une opportunité est perdue (envoie aussi stage_changed).',
    'devis.generated': 'Un devis est tarifé.',
    'devis.failed': 'La tarification d’un devis a échoué.',
    'devis.signed': 'Un devis est signé.',
    'job.completed': 'Une tarification se termine.',
    'job.failed': 'Une tarification échoue.',
    'job.mfa_required': 'Une tarification attend un code d’authentification.',
    'insurer.portal_changed': 'Le portail d’un assureur a changé : son robot échoue tant que son connecteur n’est pas mis à jour.',
    'contract.signed': 'Un devis signé devient un contrat.',
    'comparaison.completed': 'Toutes les compagnies d’une comparaison ont répondu.',
    'client.updated': 'Les coordonnées d’un client changent.',
    'client.erased': 'Les données personnelles d’un client sont effacées (aucune n’est envoyée).',
    'webhook.test': 'Un envoi de test depuis cette page.',
  },
  errors: {
    invalid_webhook_url: 'L’URL doit être une adresse https:// complète, sans identifiants.',
    unknown_event_type: 'Un des événements choisis n’existe pas.',
    not_found: 'Ce webhook n’existe plus (supprimé entre-temps ?). Actualisez la page.',
    admin_only: 'Seul un administrateur du cabinet peut gérer les webhooks.',
    not_signed_in: 'Votre session a expiré : reconnectez-vous.',
    invalid_csrf_token: 'Cette page est trop ancienne pour votre session : rechargez-la.',
  },
};

export const WEBHOOK_STRINGS: Record<Lang, WebhookStrings> = { en, fr };
