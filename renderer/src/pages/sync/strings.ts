import type { SyncedKind } from '../../../../shared/sync-protocol.js';
import type { SyncConflict, SyncStatus } from '../../../../shared/console-sync.js';
import type { Lang } from '../../i18n.js';

type SyncState = SyncStatus['state'];
/** The states a connected cabinet reports (off shows the connect form instead). */
type LinkedState = Exclude<SyncState, 'off'>;

/** The words of the Sync page and of the shell's sync indicator, in English and French. */
const en = {
  nav: 'Sync',
  title: 'Sync',
  intro:
    'Sync keeps this cabinet’s records — clients, opportunities, quotes with their PDFs, contracts, finished jobs and events — the same on every install connected to your hub; API keys, webhooks, insurer passwords, the wallet, sessions and connected apps stay on this install.',
  // Connect form
  connectTitle: 'Connect to a hub',
  connectIntro:
    'This cabinet does not sync yet. Give the hub’s operator this cabinet’s identifier: they make a pairing code for it, and give it to you with the hub’s address.',
  cabinetId: 'This cabinet’s identifier',
  hubUrl: 'Hub URL',
  hubUrlHint: 'https://…, as the hub’s operator gave it (http:// only for a hub on this computer).',
  code: 'Pairing code',
  codeHint: 'Made by the hub’s operator for this cabinet (courtier hub invite --new-cabinet); it can be used once, within 15 minutes.',
  deviceName: 'Name of this computer (optional)',
  deviceNameHint: 'How the hub lists this install. Empty: the computer’s own name.',
  connect: 'Connect',
  connecting: 'Connecting…',
  hubUrlMissing: 'Enter the hub’s URL.',
  codeMissing: 'Enter the pairing code.',
  connected: 'Connected: everything this cabinet holds is being sent to the hub.',
  // Status
  statusTitle: 'Status',
  offForBroker: 'This cabinet does not sync with a hub. An administrator of the cabinet can connect it from this page.',
  stateBadges: { idle: 'Up to date', syncing: 'Syncing', offline: 'Offline', error: 'Problem' } satisfies Record<LinkedState, string>,
  stateSentences: {
    idle: 'Everything is synced with the hub.',
    syncing: 'Changes are being sent to or received from the hub.',
    offline: 'The hub cannot be reached. Changes made here wait, and are sent as soon as it answers again.',
    error: 'The hub refuses to sync with this install. The last problem below says why and what to do.',
  } satisfies Record<LinkedState, string>,
  pausedBadge: 'Paused',
  pausedSentence: 'Sync is paused: changes made here wait until you resume it, and nothing is received from the hub meanwhile.',
  resyncingBadge: 'Catching up',
  resyncingSentence: 'Catching up with the hub after a restored backup — nothing is lost meanwhile.',
  hub: 'Hub',
  device: 'This computer',
  pending: 'Changes waiting',
  pendingCount: (n: number) => (n === 0 ? 'None' : `${n} change${n === 1 ? '' : 's'} not yet on the hub`),
  lastPush: 'Last sent',
  lastPull: 'Last received',
  setAside: 'Set aside',
  setAsideCount: (n: number) => (n === 0 ? 'None' : `${n} change${n === 1 ? '' : 's'} from other computers, refused by this one`),
  setAsideTitle: 'Changes set aside',
  setAsideIntro:
    'Another computer of the cabinet sent these changes, and this one refused them: they break its rules (a value it would not accept, an action only this computer may take). The rest synced.',
  setAsideColumns: { when: 'When', what: 'Record', why: 'Why', from: 'From computer', actions: 'What to do' },
  recordKinds: {
    client: 'client',
    opportunity: 'opportunity',
    opportunity_note: 'note on an opportunity',
    devis: 'quote',
    contract: 'contract',
    job: 'pricing',
    comparaison: 'comparison',
    conseil: 'advice document',
    event: 'event',
    user: 'user account',
  } satisfies Record<SyncedKind, string>,
  setAsideReasons: {
    invalid_fields: 'A value this computer does not accept',
    operation_refused: 'An action the cabinet’s computers may not take for one another',
    record_clash: 'Its identifier is another cabinet’s record on this computer',
    not_applicable: 'This computer’s database refused it',
    not_understood: 'It comes from a newer Courtier: it will apply once this computer is updated',
  } satisfies Record<SyncConflict['reason'], string>,
  setAsideNone: 'No change is set aside any more.',
  retry: 'Try again',
  retrying: 'Trying again…',
  discard: 'Discard',
  /** The buttons' names for a screen reader, which hears them away from their row. */
  retryLabel: (record: string) => `Try again: ${record}`,
  discardLabel: (record: string) => `Discard: ${record}`,
  discardTitle: 'Discard this change?',
  discardText: (record: string) =>
    `This computer forgets this change to ${record} for good: it will not be applied here. The other computers of the cabinet keep what they applied of it.`,
  /** What became of a change tried again or discarded, said under its row (or above the list once it left it). */
  outcomes: {
    applied: (record: string) => `Applied: this change to ${record} is now on this computer.`,
    stillSetAside: (reason: string) => `Still set aside: ${reason}.`,
    noLongerOnHub: 'The hub no longer has it: discard it.',
    notSetAside: (record: string) => `This change to ${record} is no longer set aside.`,
    discarded: (record: string) => `Discarded: this computer has forgotten this change to ${record}.`,
  },
  refusedByHub: 'Refused by the hub',
  refusedCount: (n: number) => (n === 0 ? 'None' : `${n} change${n === 1 ? '' : 's'} made here, not on the other computers`),
  refusedTitle: 'Changes the hub refused',
  refusedIntro:
    'These changes were made on this computer, and the hub refused them for what they hold (a value it cannot keep, a change too large, or a kind of record a hub not yet updated does not know). They stay on this computer; the other computers do not have them. The changes after them synced.',
  refusedColumns: { when: 'When', what: 'Record', why: 'What the hub said', actions: 'What to do' },
  /** The hub's refusals by code; another code is shown as it is. */
  refusedReasons: {
    validation_error: 'A value the hub does not accept, or a kind of record it does not know yet',
    payload_too_large: 'Too large for the hub',
  } as Partial<Record<string, string>>,
  sendAgain: 'Send again',
  sendAgainLabel: (record: string) => `Send again: ${record}`,
  refusedSent: (record: string) =>
    `This change to ${record} is on its way to the hub again. If the hub refuses it again, it comes back to this list.`,
  discardRefusedText: (record: string) =>
    `This computer forgets this change to ${record}: the other computers of the cabinet will never get it. The record keeps its value on this computer.`,
  refusedDiscarded: (record: string) => `Discarded: the other computers will not get this change to ${record}.`,
  never: 'Never',
  lastProblem: 'Last problem:',
  /** The engine's problems by code, said in the page's language (the server's own words otherwise). */
  problems: {
    offlineSince: (time: string) => `The hub has not answered since ${time}; changes wait here and are sent as soon as it answers.`,
    clockAhead: (minutes: number) =>
      `This computer’s clock is ${minutes} minute${minutes === 1 ? '' : 's'} ahead of the hub’s: set it right (changes wait meanwhile).`,
    byCode: {
      device_revoked: 'This computer was revoked on the hub: ask the hub’s operator for a new code, disconnect, then connect again.',
      sync_protocol_too_old: 'This Courtier is too old for the cabinet’s other installs: update it (changes wait meanwhile).',
      sync_off: 'This computer’s hub credential is missing from its secret store: disconnect, then connect again.',
    } as Partial<Record<string, string>>,
  },
  refreshFailed: (message: string) => `The status could not be refreshed: ${message}`,
  // Actions
  pause: 'Pause sync',
  resume: 'Resume sync',
  pausedNotice: 'Sync is paused.',
  resumedNotice: 'Sync has resumed.',
  disconnect: 'Disconnect',
  disconnectTitle: 'Disconnect this cabinet from the hub?',
  disconnectText:
    'The cabinet’s records stay on this install, but changes not yet sent will not reach the hub, and nothing more is exchanged with it. This computer leaves the hub: to sync again, it needs a new pairing code.',
  cancel: 'Cancel',
  disconnectedNotice: 'This cabinet no longer syncs, and this computer has left the hub. Its records stay on this install.',
  disconnectedHubNotTold: (device: string) =>
    `This cabinet no longer syncs; its records stay on this install. The hub could not be told: ask its operator to revoke the device ${device}.`,
  // The shell's indicator
  indicatorLabel: 'Sync status',
  synced: 'Synced',
  syncing: 'Syncing…',
  offline: 'Offline',
  waiting: (n: number) => `${n} change${n === 1 ? '' : 's'} waiting`,
  problem: 'Sync problem',
  paused: 'Sync paused',
  resyncing: 'Catching up after a restored backup',
  offlineResyncing: 'Offline — catching up after a restored backup',
  /** Connect errors said in the page's language; the server's own words follow as a detail. */
  errors: {} as Partial<Record<string, string>>,
  detail: (message: string) => message,
};

export type SyncStrings = typeof en;

const fr: SyncStrings = {
  nav: 'Synchronisation',
  title: 'Synchronisation',
  intro:
    'La synchronisation garde identiques les dossiers de ce cabinet — clients, opportunités, devis avec leurs PDF, contrats, tarifications terminées et événements — sur toutes les installations reliées à votre hub ; les clés d’API, les webhooks, les mots de passe des assureurs, les crédits, les sessions et les applications connectées restent sur cette installation.',
  connectTitle: 'Se connecter à un hub',
  connectIntro:
    'Ce cabinet ne se synchronise pas encore. Donnez à l’exploitant du hub l’identifiant de ce cabinet : il crée un code d’appairage pour lui, et vous le donne avec l’adresse du hub.',
  cabinetId: 'Identifiant de ce cabinet',
  hubUrl: 'URL du hub',
  hubUrlHint: 'https://…, telle que l’exploitant du hub l’a donnée (http:// seulement pour un hub sur cet ordinateur).',
  code: 'Code d’appairage',
  codeHint:
    'Créé par l’exploitant du hub pour ce cabinet (courtier hub invite --new-cabinet) ; il ne sert qu’une fois, dans les 15 minutes.',
  deviceName: 'Nom de cet ordinateur (facultatif)',
  deviceNameHint: 'Le nom sous lequel le hub affiche cette installation. Vide : le nom de l’ordinateur.',
  connect: 'Se connecter',
  connecting: 'Connexion…',
  hubUrlMissing: 'Saisissez l’URL du hub.',
  codeMissing: 'Saisissez le code d’appairage.',
  connected: 'Connecté : tout ce que contient ce cabinet est en cours d’envoi vers le hub.',
  statusTitle: 'État',
  offForBroker: 'Ce cabinet ne se synchronise avec aucun hub. Un administrateur du cabinet peut le connecter depuis cette page.',
  stateBadges: { idle: 'À jour', syncing: 'En cours', offline: 'Hors ligne', error: 'Problème' },
  stateSentences: {
    idle: 'Tout est synchronisé avec le hub.',
    syncing: 'Des modifications sont en cours d’envoi vers le hub ou de réception.',
    offline: 'Le hub ne répond pas. Les modifications faites ici attendent et partiront dès qu’il répondra.',
    error: 'Le hub refuse de se synchroniser avec cette installation. Le dernier problème ci-dessous dit pourquoi et que faire.',
  },
  pausedBadge: 'En pause',
  pausedSentence:
    'La synchronisation est en pause : les modifications faites ici attendent sa reprise, et rien n’est reçu du hub entre-temps.',
  resyncingBadge: 'Remise à niveau',
  resyncingSentence: 'Remise à niveau avec le hub après la restauration d’une sauvegarde — rien n’est perdu entre-temps.',
  hub: 'Hub',
  device: 'Cet ordinateur',
  pending: 'Modifications en attente',
  pendingCount: (n) => (n === 0 ? 'Aucune' : `${n} modification${n > 1 ? 's' : ''} pas encore sur le hub`),
  lastPush: 'Dernier envoi',
  lastPull: 'Dernière réception',
  setAside: 'Mis de côté',
  setAsideCount: (n) =>
    n === 0 ? 'Aucune' : `${n} modification${n > 1 ? 's' : ''} d’autres ordinateurs, refusée${n > 1 ? 's' : ''} par celui-ci`,
  setAsideTitle: 'Modifications mises de côté',
  setAsideIntro:
    'Un autre ordinateur du cabinet a envoyé ces modifications, et celui-ci les a refusées : elles enfreignent ses règles (une valeur qu’il n’accepterait pas, une action que lui seul peut faire). Le reste s’est synchronisé.',
  setAsideColumns: { when: 'Quand', what: 'Fiche', why: 'Pourquoi', from: 'Depuis l’ordinateur', actions: 'Que faire' },
  recordKinds: {
    client: 'client',
    opportunity: 'opportunité',
    devis: 'devis',
    contract: 'contrat',
    job: 'tarification',
    comparaison: 'comparaison',
    conseil: 'document de conseil',
    opportunity_note: 'note sur une opportunité',
    event: 'événement',
    user: 'compte utilisateur',
  },
  setAsideReasons: {
    invalid_fields: 'Une valeur que cet ordinateur n’accepte pas',
    operation_refused: 'Une action que les ordinateurs du cabinet ne peuvent pas faire l’un pour l’autre',
    record_clash: 'Son identifiant est celui d’une fiche d’un autre cabinet sur cet ordinateur',
    not_applicable: 'La base de données de cet ordinateur l’a refusée',
    not_understood: 'Elle vient d’un Courtier plus récent : elle s’appliquera une fois cet ordinateur mis à jour',
  },
  setAsideNone: 'Plus aucune modification n’est mise de côté.',
  retry: 'Réessayer',
  retrying: 'Nouvel essai…',
  discard: 'Abandonner',
  retryLabel: (record) => `Réessayer : ${record}`,
  discardLabel: (record) => `Abandonner : ${record}`,
  discardTitle: 'Abandonner cette modification ?',
  discardText: (record) =>
    `Cet ordinateur oublie définitivement cette modification de la fiche ${record} : elle ne sera pas appliquée ici. Les autres ordinateurs du cabinet gardent ce qu’ils en ont appliqué.`,
  outcomes: {
    applied: (record) => `Appliquée : cette modification de la fiche ${record} est maintenant sur cet ordinateur.`,
    stillSetAside: (reason) => `Toujours mise de côté : ${reason}.`,
    noLongerOnHub: 'Le hub ne l’a plus : abandonnez-la.',
    notSetAside: (record) => `Cette modification de la fiche ${record} n’est plus mise de côté.`,
    discarded: (record) => `Abandonnée : cet ordinateur a oublié cette modification de la fiche ${record}.`,
  },
  refusedByHub: 'Refusé par le hub',
  refusedCount: (n) =>
    n === 0
      ? 'Aucune'
      : `${n} modification${n === 1 ? '' : 's'} faite${n === 1 ? '' : 's'} ici, absente${n === 1 ? '' : 's'} des autres ordinateurs`,
  refusedTitle: 'Modifications refusées par le hub',
  refusedIntro:
    'Ces modifications ont été faites sur cet ordinateur, et le hub les a refusées pour ce qu’elles contiennent (une valeur qu’il ne peut pas garder, une modification trop grande, ou un type de fiche qu’un hub pas encore mis à jour ne connaît pas). Elles restent sur cet ordinateur ; les autres ordinateurs ne les ont pas. Les modifications suivantes ont été synchronisées.',
  refusedColumns: { when: 'Quand', what: 'Fiche', why: 'Ce qu’a dit le hub', actions: 'Que faire' },
  refusedReasons: {
    validation_error: 'Une valeur que le hub n’accepte pas, ou un type de fiche qu’il ne connaît pas encore',
    payload_too_large: 'Trop grande pour le hub',
  },
  sendAgain: 'Envoyer à nouveau',
  sendAgainLabel: (record) => `Envoyer à nouveau : ${record}`,
  refusedSent: (record) =>
    `Cette modification de la fiche ${record} repart vers le hub. Si le hub la refuse encore, elle revient dans cette liste.`,
  discardRefusedText: (record) =>
    `Cet ordinateur oublie cette modification de la fiche ${record} : les autres ordinateurs du cabinet ne la recevront jamais. La fiche garde sa valeur sur cet ordinateur.`,
  refusedDiscarded: (record) => `Abandonnée : les autres ordinateurs ne recevront pas cette modification de la fiche ${record}.`,
  never: 'Jamais',
  lastProblem: 'Dernier problème :',
  problems: {
    offlineSince: (time) => `Le hub ne répond plus depuis ${time} ; les modifications attendent ici et partiront dès qu’il répondra.`,
    clockAhead: (minutes) =>
      `L’horloge de cet ordinateur avance de ${minutes} minute${minutes > 1 ? 's' : ''} sur celle du hub : remettez-la à l’heure (les modifications attendent entre-temps).`,
    byCode: {
      device_revoked:
        'Cet ordinateur a été révoqué sur le hub : demandez un nouveau code à l’exploitant du hub, déconnectez, puis reconnectez.',
      sync_protocol_too_old:
        'Ce Courtier est trop ancien pour les autres installations du cabinet : mettez-le à jour (les modifications attendent entre-temps).',
      sync_off: 'Le secret de cet ordinateur pour le hub manque dans son coffre : déconnectez, puis reconnectez.',
    },
  },
  refreshFailed: (message) => `L’état n’a pas pu être actualisé : ${message}`,
  pause: 'Mettre en pause',
  resume: 'Reprendre la synchronisation',
  pausedNotice: 'La synchronisation est en pause.',
  resumedNotice: 'La synchronisation a repris.',
  disconnect: 'Déconnecter',
  disconnectTitle: 'Déconnecter ce cabinet du hub ?',
  disconnectText:
    'Les dossiers du cabinet restent sur cette installation, mais les modifications pas encore envoyées n’atteindront pas le hub, et plus rien n’est échangé avec lui. Cet ordinateur quitte le hub : pour se synchroniser à nouveau, il lui faudra un nouveau code d’appairage.',
  cancel: 'Annuler',
  disconnectedNotice: 'Ce cabinet ne se synchronise plus, et cet ordinateur a quitté le hub. Ses dossiers restent sur cette installation.',
  disconnectedHubNotTold: (device) =>
    `Ce cabinet ne se synchronise plus ; ses dossiers restent sur cette installation. Le hub n’a pas pu être prévenu : demandez à son exploitant de révoquer l’appareil ${device}.`,
  indicatorLabel: 'État de la synchronisation',
  synced: 'Synchronisé',
  syncing: 'Synchronisation…',
  offline: 'Hors ligne',
  waiting: (n) => `${n} modification${n > 1 ? 's' : ''} en attente`,
  problem: 'Problème de synchronisation',
  paused: 'Synchronisation en pause',
  resyncing: 'Remise à niveau après une sauvegarde restaurée',
  offlineResyncing: 'Hors ligne — remise à niveau après une sauvegarde restaurée',
  errors: {
    invalid_hub_url:
      'Cette URL de hub est refusée : elle doit commencer par https://, ou par http:// vers cet ordinateur seulement (le secret de l’appareil accompagne chaque échange).',
    hub_unreachable: 'Le hub ne répond pas : vérifiez son URL et le réseau de cet ordinateur, puis réessayez.',
    invalid_pairing_code:
      'Ce code d’appairage est inconnu, déjà utilisé ou expiré (il vit 15 minutes) : demandez-en un nouveau à l’exploitant du hub.',
    too_many_pairing_attempts: 'Trop de codes erronés depuis cette adresse : attendez un peu avant de réessayer.',
    cabinet_already_on_hub: 'Ce cabinet est déjà inscrit sur ce hub : rejoignez-le (courtier sync join) avec un code créé avec --cabinet.',
    sync_already_on: 'Ce cabinet se synchronise déjà avec un hub : déconnectez-le d’abord.',
    sync_off: 'Ce cabinet ne se synchronise pas avec un hub.',
    admin_only: 'Seul un administrateur du cabinet peut faire cela.',
  },
  detail: (message) => `Détail : ${message}`,
};

export const SYNC_STRINGS: Record<Lang, SyncStrings> = { en, fr };
