import { TERMINAL_STATUSES } from '../../shared/automation.js';
import type { ErrorCode, ValidationIssue } from '../../shared/errors.js';
import type { Lang } from './i18n.js';
import { describeIssue, fieldNameOf } from './issues.js';

/**
 * Every error the console can meet, worded for a person at a desk: what happened, what to do.
 * The server's own messages are for developers (in English, with the API's words); the console
 * shows these instead, in its language. Typed by ErrorCode: a new code without its sentences
 * does not compile.
 */

/** The codes the console makes up itself (api.ts): no answer at all, or one that is not the contract's. */
export type ConsoleErrorCode = ErrorCode | 'network_error' | 'unexpected_response';

type Sentences = Record<ConsoleErrorCode, string>;

const en: Sentences = {
  network_error: 'The Courtier service cannot be reached. Check that it is running, then try again.',
  unexpected_response: 'The Courtier service gave an answer the console did not expect. Try again; if it happens again, restart Courtier.',
  validation_error: 'Some of the information entered is not valid. Check the fields marked, then try again.',
  bad_request: 'The console sent something the service could not read. Reload the page and try again.',
  invalid_json: 'The console sent something the service could not read. Reload the page and try again.',
  invalid_cursor: 'The list changed while you were paging through it. Reload the page to start from the top.',
  invalid_webhook_url: 'The address must be a complete https:// address, without a user name or password in it.',
  unknown_event_type: 'One of the events chosen does not exist. Reload the page and choose again.',
  missing_credentials: 'This connection is not signed in. Sign in again.',
  invalid_api_key: 'This access key is not known. Check it, or create a new one.',
  api_key_revoked: 'This access key was revoked. Create a new one.',
  api_key_expired: 'This access key has expired. Create a new one.',
  invalid_token: 'The assistant’s access has expired or was withdrawn. Connect it again.',
  not_signed_in: 'Your session has ended. Sign in again to continue.',
  invalid_credentials: 'The email or the password is wrong.',
  setup_local_only: 'The first setup can only be done on the computer that runs Courtier. Open the console there.',
  local_only: 'This can only be done on the computer that runs Courtier, not from another computer of the office.',
  lan_sharing_forbidden: 'Your IT policy does not allow sharing Courtier on the office network.',
  address_blocked: 'Too many failed sign-ins came from this computer: it is blocked for a while. An administrator can lift the block.',
  lan_address_unavailable: 'One of the network addresses chosen does not belong to this computer. Choose among those listed.',
  lan_managed_by_policy: 'Office network sharing is set by your IT policy: ask your IT department to change it.',
  lan_name_outside_ca:
    'This name is not covered by the office certificate. Turn sharing on again with a new certificate; the office’s computers will then need to trust it.',
  ip_not_allowed: 'This key cannot be used from this computer’s address.',
  insufficient_scope: 'This access does not allow that action. Ask an administrator for wider rights.',
  origin_not_allowed: 'This page was not opened from Courtier. Open the console from its usual address.',
  invalid_signature: 'This download link has expired (links last 5 minutes). Ask for the document again.',
  invalid_csrf_token: 'This page is too old for your session. Reload it, then try again.',
  consent_forbidden: 'This authorization request was opened by another user. Sign in with that account to answer it.',
  llm_data_sharing_off:
    'Your cabinet does not share clients’ personal data with AI assistants. An administrator can change this in Settings.',
  admin_only: 'Only an administrator of the cabinet can do this.',
  setup_already_done: 'Courtier is already set up. Sign in instead.',
  email_taken: 'A user of this cabinet already has this email address.',
  cabinet_choice_required: 'This email opens several cabinets. Choose the cabinet, then sign in.',
  last_admin: 'The cabinet would have no administrator left. Make another user an administrator first.',
  insurer_login_busy: 'A robot is using this insurer login right now. Test it again once the pricing in progress has finished.',
  not_found: 'This item no longer exists (it may have been deleted meanwhile). Reload the page.',
  unknown_product: 'This product is not offered. Reload the page and choose another.',
  unknown_line: 'This line of business is not offered: choose car or home.',
  comparison_not_finished: 'Some insurers are still pricing: wait for every answer before advising.',
  client_required: 'This comparison is for no client: compare again for a client to write the advice.',
  offer_not_priced: 'This offer was not priced: choose one of the offers shown.',
  line_not_priced: 'This insurer does not price this line of business.',
  risk_not_accepted: 'This insurer does not accept this risk.',
  answers_missing: 'Some insurers ask questions of their own: answer them to compare.',
  no_insurer_available: 'No insurer can price this risk: set an insurer’s login first, or change the risk.',
  unknown_insurer: 'This insurer does not offer this product. Choose another insurer.',
  pdf_not_available: 'This quote has no document yet: it has not been priced.',
  consent_request_not_found:
    'This authorization request is unknown, already answered or expired. Start the connection again from the assistant.',
  method_not_allowed: 'The console asked for something the service does not do. Reload the page; if it happens again, update Courtier.',
  request_timeout: 'The request took too long. Check the connection, then try again.',
  idempotency_conflict: 'The same action is already in progress. Wait a moment, then try again.',
  insurer_credentials_missing: 'No login is saved for this insurer. An administrator can add it on the Insurers page.',
  job_not_cancellable: 'This pricing has already finished: it can no longer be cancelled.',
  job_not_retryable: 'Only a failed or cancelled pricing can be started again; this one is running or has its price.',
  wrong_current_password: 'Your current password is not the one typed. Type it again.',
  account_disabled: 'This account is disabled. Ask an administrator of your cabinet to enable it again.',
  password_change_required: 'Choose a new password before going on: open My account.',
  own_account: 'You cannot do this to your own account; ask another administrator.',
  job_not_awaiting_mfa: 'This pricing is no longer waiting for a code.',
  mfa_answer_mismatch: 'This answer does not fit what the insurer asks; look at the prompt again.',
  job_runs_elsewhere:
    'This pricing was started on another computer of the cabinet: only there can it be cancelled or given its code. Its result shows here once it has finished.',
  invalid_stage_transition: 'The opportunity cannot move to that stage (won and lost are final).',
  invalid_devis_transition: 'This quote cannot do that in its current state (only a priced quote can be signed).',
  credits_exhausted:
    'The wallet does not have enough credits for this pricing. Nothing was charged. An administrator adds credits on the Wallet page; then try again.',
  offline_allowance_exhausted:
    'This computer has used the credits or the pricings it may start before the cabinet’s sync server confirms its last ones. Nothing was charged. Try again in a moment; if this lasts, check that the sync server can be reached.',
  credits_on_hub: 'This cabinet shares one wallet through its sync server: credits are added there by its operator, not on this computer.',
  payload_too_large: 'What was sent is too large. Shorten it, then try again.',
  import_file_unreadable:
    'This file cannot be read: choose a CSV file or an Excel workbook (.xlsx). From an older Excel file (.xls), save it as .xlsx or CSV first.',
  import_file_empty: 'This file has no client: below its first row (the names of the columns), every row is empty.',
  import_file_too_large: 'This file is too large: at most 5 MB and 10,000 rows. Split it into several files and import each.',
  uri_too_long: 'A value in the address is too long. Shorten it, then try again.',
  unsupported_media_type: 'The console sent something the service could not read. Reload the page and try again.',
  misdirected_request: 'The console was opened under an address Courtier does not answer to. Open it from its usual address.',
  idempotency_key_reused: 'This action was already sent with different information. Reload the page and try again.',
  rate_limited: 'Too many requests in a short time. Wait a minute, then try again.',
  too_many_login_attempts: 'Too many failed sign-ins. Wait a few minutes, then try again.',
  rpa_quota_exceeded: 'The cabinet has reached its number of pricings for this hour. Try again later.',
  rpa_replay_detected: 'The same pricing was asked for a few minutes ago. Wait for its result rather than asking again.',
  invalid_pairing_code:
    'This pairing code is not valid: it may be mistyped, already used or expired (codes last 15 minutes). Ask for a new one.',
  invalid_device_credential: 'The sync server no longer knows this computer. Connect it again with a new pairing code.',
  device_revoked: 'This computer was removed from the sync. Connect it again with a new pairing code if that was a mistake.',
  too_many_pairing_attempts: 'Too many wrong pairing codes. Wait a few minutes, then try again.',
  cabinet_already_on_hub: 'A cabinet with this identifier is already on the sync server. Ask the server’s administrator.',
  pairing_code_joins:
    'This code is for adding a new computer to another cabinet on the sync server, not for connecting this one. Ask the administrator for a code made for this cabinet.',
  hub_quota_exceeded:
    'The cabinet has reached the sync server’s storage limit. Ask the server’s administrator to raise it; the changes wait meanwhile.',
  sync_protocol_unsupported:
    'The sync server is older than this version of Courtier. Ask its administrator to update it; the changes wait meanwhile.',
  sync_too_many_requests: 'This computer sends too many requests to the sync server at once. Courtier will try again by itself.',
  sync_gap: 'The sync server expected other changes first. Courtier will send them again by itself.',
  device_rewound:
    'This computer was restored from a backup: Courtier fetches again from the sync server what it had made since, and sends what was made after the restore.',
  cursor_expired:
    'This computer had not synced for a long time: Courtier fetches the cabinet’s records as they stand now, then sends what it has not sent yet.',
  clock_skew: 'This computer’s clock is ahead of the sync server’s. Set the clock right; the changes wait meanwhile.',
  sync_protocol_too_old: 'This version of Courtier is too old for the cabinet’s other computers. Update it; the changes wait meanwhile.',
  blob_hash_mismatch: 'A document arrived damaged at the sync server. Courtier will send it again by itself.',
  wallet_entry_refused:
    'The sync server refused a movement of the cabinet’s wallet made on this computer. It is kept aside here; contact your administrator.',
  hub_unreachable: 'The sync server cannot be reached. Check its address and the network, then try again.',
  hub_database_unavailable: 'The sync server is not available right now. Courtier will try again by itself.',
  invalid_hub_url: 'The sync server’s address must start with https://.',
  sync_already_on: 'This cabinet already syncs. Disconnect it first to connect it elsewhere.',
  sync_off: 'This cabinet does not sync yet. Connect it first.',
  cabinet_already_here: 'This computer already holds that cabinet. The code is used up: ask for a new one if needed.',
  request_header_fields_too_large: 'The request was too large. Sign out and in again, then try again.',
  internal_error: 'Something went wrong in Courtier. Try again; if it happens again, tell your support.',
  rpa_circuit_open: 'This insurer’s website has failed many times lately. Try again in a few minutes.',
  api_rpa_temporarily_disabled: 'The pricing robots are switched off for now. Queued pricings will wait. Try again later.',
};

const fr: Sentences = {
  network_error: 'Le service Courtier ne répond pas. Vérifiez qu’il est lancé, puis réessayez.',
  unexpected_response: 'Le service Courtier a donné une réponse inattendue. Réessayez ; si cela se reproduit, redémarrez Courtier.',
  validation_error: 'Certaines informations saisies ne sont pas valables. Vérifiez les champs signalés, puis réessayez.',
  bad_request: 'La console a envoyé quelque chose que le service n’a pas pu lire. Rechargez la page et réessayez.',
  invalid_json: 'La console a envoyé quelque chose que le service n’a pas pu lire. Rechargez la page et réessayez.',
  invalid_cursor: 'La liste a changé pendant que vous la parcouriez. Rechargez la page pour repartir du début.',
  invalid_webhook_url: 'L’adresse doit être une adresse https:// complète, sans nom d’utilisateur ni mot de passe.',
  unknown_event_type: 'Un des événements choisis n’existe pas. Rechargez la page et choisissez à nouveau.',
  missing_credentials: 'Cette connexion n’est pas identifiée. Reconnectez-vous.',
  invalid_api_key: 'Cette clé d’accès est inconnue. Vérifiez-la, ou créez-en une nouvelle.',
  api_key_revoked: 'Cette clé d’accès a été révoquée. Créez-en une nouvelle.',
  api_key_expired: 'Cette clé d’accès a expiré. Créez-en une nouvelle.',
  invalid_token: 'L’accès de l’assistant a expiré ou a été retiré. Connectez-le à nouveau.',
  not_signed_in: 'Votre session a pris fin. Reconnectez-vous pour continuer.',
  invalid_credentials: 'L’e-mail ou le mot de passe est incorrect.',
  setup_local_only: 'La première configuration se fait uniquement sur l’ordinateur où tourne Courtier. Ouvrez la console sur celui-ci.',
  local_only: 'Cette action se fait uniquement sur l’ordinateur où tourne Courtier, pas depuis un autre poste du cabinet.',
  lan_sharing_forbidden: 'Votre politique informatique n’autorise pas le partage de Courtier sur le réseau du cabinet.',
  address_blocked:
    'Trop de connexions ont échoué depuis cet ordinateur : il est bloqué pour un moment. Un administrateur peut lever le blocage.',
  lan_address_unavailable: 'Une des adresses réseau choisies n’appartient pas à cet ordinateur. Choisissez parmi celles proposées.',
  lan_managed_by_policy:
    'Le partage sur le réseau du cabinet est fixé par votre politique informatique : demandez à votre service informatique de le modifier.',
  lan_name_outside_ca:
    'Ce nom n’est pas couvert par le certificat du cabinet. Réactivez le partage avec un nouveau certificat ; les postes du cabinet devront ensuite lui faire confiance.',
  ip_not_allowed: 'Cette clé ne peut pas être utilisée depuis l’adresse de cet ordinateur.',
  insufficient_scope: 'Cet accès ne permet pas cette action. Demandez des droits plus larges à un administrateur.',
  origin_not_allowed: 'Cette page n’a pas été ouverte depuis Courtier. Ouvrez la console depuis son adresse habituelle.',
  invalid_signature: 'Ce lien de téléchargement a expiré (les liens durent 5 minutes). Redemandez le document.',
  invalid_csrf_token: 'Cette page est trop ancienne pour votre session. Rechargez-la, puis réessayez.',
  consent_forbidden: 'Cette demande d’autorisation a été ouverte par un autre utilisateur. Connectez-vous avec ce compte pour y répondre.',
  llm_data_sharing_off:
    'Votre cabinet ne partage pas les données personnelles des clients avec les assistants IA. Un administrateur peut le changer dans les Réglages.',
  admin_only: 'Seul un administrateur du cabinet peut faire cela.',
  setup_already_done: 'Courtier est déjà configuré. Connectez-vous.',
  email_taken: 'Un utilisateur du cabinet a déjà cette adresse e-mail.',
  cabinet_choice_required: 'Cet e-mail ouvre plusieurs cabinets. Choisissez le cabinet, puis connectez-vous.',
  last_admin: 'Le cabinet n’aurait plus d’administrateur. Nommez d’abord un autre utilisateur administrateur.',
  insurer_login_busy: 'Un robot utilise cet identifiant en ce moment. Testez-le de nouveau une fois la tarification en cours terminée.',
  not_found: 'Cet élément n’existe plus (il a peut-être été supprimé entre-temps). Rechargez la page.',
  unknown_product: 'Ce produit n’est pas proposé. Rechargez la page et choisissez-en un autre.',
  unknown_line: 'Cette branche n’est pas proposée : choisissez auto ou habitation.',
  comparison_not_finished: 'Des compagnies tarifent encore : attendez toutes les réponses avant de conseiller.',
  client_required: 'Cette comparaison n’est liée à aucun client : comparez de nouveau pour un client afin de rédiger le conseil.',
  offer_not_priced: 'Cette offre n’a pas été tarifée : choisissez l’une des offres affichées.',
  line_not_priced: 'Cette compagnie ne tarife pas cette branche.',
  risk_not_accepted: 'Cette compagnie n’accepte pas ce risque.',
  answers_missing: 'Des compagnies posent leurs propres questions : répondez-y pour comparer.',
  no_insurer_available: 'Aucune compagnie ne peut tarifer ce risque : configurez d’abord l’accès d’une compagnie, ou modifiez le risque.',
  unknown_insurer: 'Cet assureur ne propose pas ce produit. Choisissez un autre assureur.',
  pdf_not_available: 'Ce devis n’a pas encore de document : il n’a pas été tarifé.',
  consent_request_not_found:
    'Cette demande d’autorisation est inconnue, déjà traitée ou expirée. Relancez la connexion depuis l’assistant.',
  method_not_allowed:
    'La console a demandé une action que le service ne connaît pas. Rechargez la page ; si cela se reproduit, mettez Courtier à jour.',
  request_timeout: 'La demande a pris trop de temps. Vérifiez la connexion, puis réessayez.',
  idempotency_conflict: 'La même action est déjà en cours. Patientez un instant, puis réessayez.',
  insurer_credentials_missing:
    'Aucun identifiant n’est enregistré pour cet assureur. Un administrateur peut l’ajouter sur la page Assureurs.',
  job_not_cancellable: 'Cette tarification est déjà terminée : elle ne peut plus être annulée.',
  job_not_retryable: 'Seule une tarification en échec ou annulée peut être relancée ; celle-ci est en cours ou a son tarif.',
  wrong_current_password: 'Le mot de passe actuel saisi n’est pas le bon. Saisissez-le à nouveau.',
  account_disabled: 'Ce compte est désactivé. Demandez à un administrateur du cabinet de le réactiver.',
  password_change_required: 'Choisissez un nouveau mot de passe avant de continuer : ouvrez Mon compte.',
  own_account: 'Vous ne pouvez pas faire cela sur votre propre compte ; demandez à un autre administrateur.',
  job_not_awaiting_mfa: 'Cette tarification n’attend plus de code.',
  mfa_answer_mismatch: 'Cette réponse ne correspond pas à ce que demande l’assureur ; relisez la demande.',
  job_runs_elsewhere:
    'Cette tarification a été lancée depuis un autre poste du cabinet : elle ne peut être annulée ou recevoir son code que là-bas. Son résultat s’affiche ici une fois terminée.',
  invalid_stage_transition: 'L’opportunité ne peut pas passer à cette étape (gagnée et perdue sont définitives).',
  invalid_devis_transition: 'Ce devis ne le permet pas dans son état actuel (seul un devis tarifé peut être signé).',
  credits_exhausted:
    'Le portefeuille n’a pas assez de crédits pour cette tarification. Rien n’a été débité. Un administrateur ajoute des crédits sur la page Crédits et état ; puis réessayez.',
  offline_allowance_exhausted:
    'Cet ordinateur a utilisé les crédits ou les tarifications qu’il peut lancer avant que le serveur de synchronisation du cabinet ne confirme les dernières. Rien n’a été débité. Réessayez dans un instant ; si cela dure, vérifiez que le serveur de synchronisation est joignable.',
  credits_on_hub:
    'Ce cabinet partage un seul portefeuille par son serveur de synchronisation : les crédits y sont ajoutés par son opérateur, pas sur cet ordinateur.',
  payload_too_large: 'Ce qui a été envoyé est trop volumineux. Raccourcissez-le, puis réessayez.',
  import_file_unreadable:
    'Ce fichier ne peut pas être lu : choisissez un fichier CSV ou un classeur Excel (.xlsx). Un ancien fichier Excel (.xls) doit d’abord être enregistré en .xlsx ou en CSV.',
  import_file_empty: 'Ce fichier ne contient aucun client : sous sa première ligne (les noms des colonnes), toutes les lignes sont vides.',
  import_file_too_large:
    'Ce fichier est trop volumineux : 5 Mo et 10 000 lignes au plus. Découpez-le en plusieurs fichiers et importez-les un par un.',
  uri_too_long: 'Une valeur de l’adresse est trop longue. Raccourcissez-la, puis réessayez.',
  unsupported_media_type: 'La console a envoyé quelque chose que le service n’a pas pu lire. Rechargez la page et réessayez.',
  misdirected_request:
    'La console a été ouverte sous une adresse à laquelle Courtier ne répond pas. Ouvrez-la depuis son adresse habituelle.',
  idempotency_key_reused: 'Cette action a déjà été envoyée avec d’autres informations. Rechargez la page et réessayez.',
  rate_limited: 'Trop de demandes en peu de temps. Patientez une minute, puis réessayez.',
  too_many_login_attempts: 'Trop de connexions ont échoué. Patientez quelques minutes, puis réessayez.',
  rpa_quota_exceeded: 'Le cabinet a atteint son nombre de tarifications pour cette heure. Réessayez plus tard.',
  rpa_replay_detected: 'La même tarification a été demandée il y a quelques minutes. Attendez son résultat plutôt que de la redemander.',
  invalid_pairing_code:
    'Ce code d’appairage n’est pas valable : il est peut-être mal saisi, déjà utilisé ou expiré (les codes durent 15 minutes). Demandez-en un nouveau.',
  invalid_device_credential:
    'Le serveur de synchronisation ne connaît plus cet ordinateur. Reconnectez-le avec un nouveau code d’appairage.',
  device_revoked:
    'Cet ordinateur a été retiré de la synchronisation. Reconnectez-le avec un nouveau code d’appairage si c’était une erreur.',
  too_many_pairing_attempts: 'Trop de codes d’appairage erronés. Patientez quelques minutes, puis réessayez.',
  cabinet_already_on_hub:
    'Un cabinet avec cet identifiant est déjà sur le serveur de synchronisation. Adressez-vous à l’administrateur du serveur.',
  pairing_code_joins:
    'Ce code sert à ajouter un nouvel ordinateur à un autre cabinet du serveur de synchronisation, pas à connecter celui-ci. Demandez à l’administrateur un code fait pour ce cabinet.',
  hub_quota_exceeded:
    'Le cabinet a atteint la limite de stockage du serveur de synchronisation. Demandez à son administrateur de la relever ; les modifications attendent en attendant.',
  sync_protocol_unsupported:
    'Le serveur de synchronisation est plus ancien que cette version de Courtier. Demandez à son administrateur de le mettre à jour ; les modifications attendent en attendant.',
  sync_too_many_requests:
    'Cet ordinateur envoie trop de demandes à la fois au serveur de synchronisation. Courtier réessaiera de lui-même.',
  sync_gap: 'Le serveur de synchronisation attendait d’abord d’autres modifications. Courtier les renverra de lui-même.',
  device_rewound:
    'Cet ordinateur a été restauré depuis une sauvegarde : Courtier reprend au serveur de synchronisation ce qu’il avait fait depuis, et envoie ce qui a été fait après la restauration.',
  cursor_expired:
    'Cet ordinateur n’avait pas synchronisé depuis longtemps : Courtier reprend les fiches du cabinet telles qu’elles sont aujourd’hui, puis envoie ce qu’il n’a pas encore envoyé.',
  clock_skew:
    'L’horloge de cet ordinateur est en avance sur celle du serveur de synchronisation. Remettez-la à l’heure ; les modifications attendent en attendant.',
  sync_protocol_too_old:
    'Cette version de Courtier est trop ancienne pour les autres postes du cabinet. Mettez-la à jour ; les modifications attendent en attendant.',
  blob_hash_mismatch: 'Un document est arrivé abîmé au serveur de synchronisation. Courtier le renverra de lui-même.',
  wallet_entry_refused:
    'Le serveur de synchronisation a refusé un mouvement du portefeuille du cabinet fait sur cet ordinateur. Il est mis de côté ici ; contactez votre administrateur.',
  hub_unreachable: 'Le serveur de synchronisation est injoignable. Vérifiez son adresse et le réseau, puis réessayez.',
  hub_database_unavailable: 'Le serveur de synchronisation n’est pas disponible pour l’instant. Courtier réessaiera de lui-même.',
  invalid_hub_url: 'L’adresse du serveur de synchronisation doit commencer par https://.',
  sync_already_on: 'Ce cabinet est déjà synchronisé. Déconnectez-le d’abord pour le connecter ailleurs.',
  sync_off: 'Ce cabinet n’est pas encore synchronisé. Connectez-le d’abord.',
  cabinet_already_here: 'Cet ordinateur contient déjà ce cabinet. Le code est épuisé : demandez-en un nouveau si besoin.',
  request_header_fields_too_large: 'La demande était trop volumineuse. Déconnectez-vous puis reconnectez-vous, puis réessayez.',
  internal_error: 'Un problème est survenu dans Courtier. Réessayez ; si cela se reproduit, prévenez votre support.',
  rpa_circuit_open: 'Le site de cet assureur a échoué de nombreuses fois ces derniers temps. Réessayez dans quelques minutes.',
  api_rpa_temporarily_disabled:
    'Les robots de tarification sont arrêtés pour l’instant. Les tarifications en file attendront. Réessayez plus tard.',
};

export const ERROR_SENTENCES: Record<Lang, Sentences> = { en, fr };

/** A cabinet's own pause reads differently from the operator's switch: the cabinet's admins can lift it. */
const CABINET_PAUSE: Record<Lang, string> = {
  en: 'Your cabinet’s pricing robots are paused. An administrator can resume them on the Wallet & status page. Queued pricings will wait.',
  fr: 'Les robots de tarification du cabinet sont en pause. Un administrateur peut les relancer sur la page Crédits et état. Les tarifications en file attendront.',
};

/** The same pricing asked again after the first one ended: its result is there to read, nothing to wait for. */
const REPLAY_FINISHED: Record<Lang, string> = {
  en: 'The same pricing was done a few minutes ago: open it to read its result rather than asking again.',
  fr: 'La même tarification a été faite il y a quelques minutes : ouvrez-la pour lire son résultat plutôt que de la redemander.',
};

/** The codes that say how long to wait (Retry-After): their sentence ends with the wait, in minutes. */
const WAIT_CODES: ReadonlySet<ConsoleErrorCode> = new Set([
  'rate_limited',
  'too_many_login_attempts',
  'too_many_pairing_attempts',
  'address_blocked',
]);

const WAIT: Record<Lang, { generic: RegExp; exact: (minutes: number) => string }> = {
  en: { generic: / Wait (a minute|a few minutes), then try again\.$/, exact: (minutes) => ` Try again in ${minutes} min.` },
  fr: { generic: / Patientez (une minute|quelques minutes), puis réessayez\.$/, exact: (minutes) => ` Réessayez dans ${minutes} min.` },
};

/** The sentence with the wait the service named, instead of "a few minutes", when it named one. */
function withWait(sentence: string, lang: Lang, seconds: number | undefined): string {
  if (seconds === undefined || !WAIT[lang].generic.test(sentence)) return sentence;
  return sentence.replace(WAIT[lang].generic, WAIT[lang].exact(Math.max(1, Math.ceil(seconds / 60))));
}

const REFERENCE: Record<Lang, (id: string) => string> = {
  en: (id) => `Reference: ${id}.`,
  fr: (id) => `Référence : ${id}.`,
};

function isErrorCode(code: string): code is ConsoleErrorCode {
  return Object.hasOwn(en, code);
}

function isIssue(value: unknown): value is ValidationIssue {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.path === 'string' && typeof v.message === 'string';
}

/** The worded problems of a validation_error, each after its field's name: "bonus malus: must be at most 3.5". */
function issueLines(details: unknown, lang: Lang): string[] {
  if (!Array.isArray(details)) return [];
  return details.filter(isIssue).map((issue) => {
    const name = fieldNameOf(issue.path);
    const sentence = describeIssue(issue, lang);
    return name === '' ? sentence : `${name}${lang === 'fr' ? ' : ' : ': '}${lowerFirst(sentence)}`;
  });
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLocaleLowerCase() + text.slice(1);
}

/**
 * The sentence a person reads for a failed call, in the console's language. The service's own
 * message is kept only for a code this console does not know (a newer service): it is better
 * than nothing. A validation_error lists its problems; an unexpected error gives its reference.
 */
export function errorSentence(
  error: { error: string; message: string; details?: unknown; request_id?: string },
  lang: Lang,
  retryAfterSeconds?: number,
): string {
  if (!isErrorCode(error.error)) return error.message;
  const code = error.error;
  const base =
    code === 'api_rpa_temporarily_disabled' && scopeOf(error.details) === 'cabinet'
      ? CABINET_PAUSE[lang]
      : code === 'rpa_replay_detected' && replayFinished(error.details)
        ? REPLAY_FINISHED[lang]
        : ERROR_SENTENCES[lang][code];
  if (code === 'validation_error') {
    const lines = issueLines(error.details, lang);
    return lines.length === 0 ? base : `${base} ${lines.join(' ')}`;
  }
  if ((code === 'internal_error' || code === 'unexpected_response') && error.request_id)
    return `${base} ${REFERENCE[lang](error.request_id)}`;
  if (WAIT_CODES.has(code)) return withWait(base, lang, retryAfterSeconds);
  return base;
}

function replayFinished(details: unknown): boolean {
  const status = typeof details === 'object' && details !== null ? (details as Record<string, unknown>).job_status : undefined;
  return typeof status === 'string' && (TERMINAL_STATUSES as readonly string[]).includes(status);
}

function scopeOf(details: unknown): unknown {
  return typeof details === 'object' && details !== null ? (details as Record<string, unknown>).scope : undefined;
}
