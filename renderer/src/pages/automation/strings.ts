import type { JobStatus } from '../../../../shared/automation.js';
import type { Lang } from '../../i18n.js';

/** The automation slice's words, in both languages. */
export interface AutomationStrings {
  insurersTitle: string;
  pricingTitle: string;
  jobsTitle: string;
  // Insurers
  insurersIntro: string;
  insurer: string;
  products: string;
  credentials: string;
  notConfigured: string;
  login: string;
  password: string;
  passwordHint: (replacing: boolean) => string;
  demoLogin: (login: string, password: string) => string;
  useDemoLogin: string;
  saveCredentials: string;
  replaceCredentials: string;
  removeCredentials: string;
  credentialsSaved: string;
  credentialsRemoved: string;
  testLogin: string;
  testingLogin: string;
  loginOk: (mfa: boolean) => string;
  adminOnlyCredentials: string;
  kindQuote: string;
  kindRoutine: string;
  credits: (n: number) => string;
  /** Under an insurer's name: its adapter package, e.g. "version 1.0.0 · built in". */
  adapterVersion: (version: string) => string;
  builtIn: string;
  installed: string;
  signedBy: (key: string, trusted: boolean) => string;
  notSigned: string;
  /** On an insurer whose portal changed under its robot: the step, and when the job that found it ended. */
  portalChanged: (step: string, when: string) => string;
  /** Administrators only: the packages left out at load, each with the reason. */
  packagesNotLoaded: string;
  packagesNotLoadedHint: string;
  // Pricing
  pricingIntro: string;
  product: string;
  choose: string;
  loadingForm: string;
  requiredMark: string;
  requiredNote: string;
  /** Beside a date picker: the order of day, month and year it shows (e.g. jj/mm/aaaa). */
  dateHint: (pattern: string) => string;
  /** After the service refused some fields: they are marked below. */
  fixFields: string;
  yes: string;
  check: string;
  checking: string;
  price: string;
  pricing: string;
  dryRunTitle: string;
  cost: string;
  quotaLeft: (remaining: number, limit: number) => string;
  balance: string;
  credentialsReady: (ok: boolean) => string;
  missingFields: string;
  invalidFields: string;
  readyToPrice: string;
  noCredentialsLink: string;
  /** Beside a refusal that names them: the page where credits are added, the earlier pricing. */
  walletLink: string;
  earlierPricingLink: string;
  /** The client a quote is for (optional): found by name, linked so that it shows on the client's page. */
  client: string;
  clientHint: string;
  clientSearching: string;
  clientNoMatch: (q: string) => string;
  clientChosen: (name: string) => string;
  clientChange: string;
  /** Makes the person typed a client of the cabinet, and chooses them. */
  clientCreate: (name: string) => string;
  /** Price was pressed with no client chosen. */
  clientRequired: string;
  /** A choice in the list of matching clients. */
  clientOption: (name: string, email: string | null) => string;
  // Jobs
  jobsIntro: string;
  filters: string;
  filterStatus: string;
  allStatuses: string;
  from: string;
  to: string;
  clearFilters: string;
  live: string;
  reconnecting: string;
  noJobs: string;
  created: string;
  status: string;
  progress: string;
  progressOf: (id: string) => string;
  creditsCol: string;
  result: string;
  premium: (eur: string) => string;
  /** Before what the insurer still needs to issue the contract (its suspens). */
  stillNeeded: (what: string) => string;
  downloadPdf: string;
  screenshot: string;
  trace: string;
  /** The link to what a step expected of the portal's page and what it found (portal_changed). */
  portalChanges: string;
  cancel: string;
  cancelJob: (id: string) => string;
  loadMore: string;
  statuses: Record<JobStatus, string>;
  // MFA
  mfaTitle: string;
  mfaIntro: (insurer: string) => string;
  mfaJob: string;
  mfaPortalSaid: string;
  mfaExpires: (time: string) => string;
  code: string;
  sendCode: string;
  sendingCode: string;
  /** Once the code is taken: the prompt goes, this stays a few seconds. */
  codeTaken: (insurer: string) => string;
  /** A prompt's title and first line by what it asks (a code's title is mfaTitle). */
  stepTitle: Record<'app_approval' | 'captcha' | 'question', string>;
  stepIntro: Record<'app_approval' | 'captcha' | 'question', (insurer: string) => string>;
  codeFrom: Record<'sms' | 'email' | 'app', string>;
  approvedIt: string;
  captchaImage: string;
  captchaText: string;
  answer: string;
  sendAnswer: string;
}

const en: AutomationStrings = {
  insurersTitle: 'Insurers',
  pricingTitle: 'Pricing',
  jobsTitle: 'Jobs',
  insurersIntro:
    'The insurers this install prices with, their products, and the portal credentials of your cabinet. Passwords are stored encrypted and never shown again.',
  insurer: 'Insurer',
  products: 'Products',
  credentials: 'Portal credentials',
  notConfigured: 'Not configured',
  login: 'Login',
  password: 'Password',
  passwordHint: (replacing) =>
    replacing ? 'The stored password is never shown; type it again to replace it.' : 'Stored encrypted; never shown again.',
  demoLogin: (login, password) => `A demo insurer: its portal accepts the login “${login}” with the password “${password}”.`,
  useDemoLogin: 'Fill in the demo login',
  saveCredentials: 'Save credentials',
  replaceCredentials: 'Replace credentials',
  removeCredentials: 'Remove credentials',
  credentialsSaved: 'Credentials saved.',
  credentialsRemoved: 'Credentials removed.',
  testLogin: 'Test login',
  testingLogin: 'Logging in to the portal…',
  loginOk: (mfa) =>
    mfa
      ? 'Login OK: the portal accepted the password and asks for a code at each login.'
      : 'Login OK: the portal accepted these credentials.',
  adminOnlyCredentials: 'Only an administrator of the cabinet can set credentials or test a login.',
  kindQuote: 'quote',
  kindRoutine: 'routine',
  credits: (n) => `${n} credit${n === 1 ? '' : 's'}`,
  adapterVersion: (version) => `version ${version}`,
  builtIn: 'built in',
  installed: 'installed',
  signedBy: (key, trusted) => `signed by ${key} (${trusted ? 'trusted key' : 'a key the IT policy does not trust'})`,
  notSigned: 'not signed',
  portalChanged: (step, when) => `The insurer’s portal changed (step ${step}, on ${when}): its robot fails until its adapter is updated.`,
  packagesNotLoaded: 'These insurer packages were not loaded:',
  packagesNotLoadedHint:
    'Their insurers cannot price until the package is fixed. On the computer running Courtier, the command “courtier insurers list” says the same, and “courtier insurers install” puts a corrected package in place.',
  pricingIntro:
    'Choose an insurer and a product; the form below comes from the product’s schema. Check it first (free), then price it: the robot runs in the background and the job shows live on the Jobs page.',
  product: 'Product',
  choose: 'Choose…',
  loadingForm: 'Loading the form…',
  requiredMark: 'required',
  requiredNote: 'Fields marked * are required.',
  dateHint: (pattern) => `Date as ${pattern}, or pick it in the calendar.`,
  fixFields: 'Some fields need fixing: see the messages under them.',
  yes: 'Yes',
  check: 'Check (dry run)',
  checking: 'Checking…',
  price: 'Price',
  pricing: 'Sending…',
  dryRunTitle: 'Check result',
  cost: 'Cost',
  quotaLeft: (remaining, limit) => `${remaining} of ${limit} left this hour`,
  balance: 'Wallet',
  credentialsReady: (ok) =>
    ok ? 'Portal credentials configured' : 'No portal credentials for this insurer: set them on the Insurers page',
  missingFields: 'Missing fields:',
  invalidFields: 'Invalid fields:',
  readyToPrice: 'Ready to price.',
  noCredentialsLink: 'Insurers page',
  walletLink: 'Wallet & status page',
  earlierPricingLink: 'Open that pricing',
  client: 'Client',
  clientHint:
    'Type a name or an email: the quote is linked to that client, shown on their page, and can be signed. Someone new becomes a client here.',
  clientSearching: 'Searching…',
  clientNoMatch: (q) => `No client matches “${q}”.`,
  clientChosen: (name) => `For ${name}`,
  clientChange: 'Change client',
  clientCreate: (name) => `Create the client “${name}”`,
  clientRequired: 'Choose the client this quote is for, or create them: a quote without a client cannot be signed.',
  clientOption: (name, email) => (email ? `${name} · ${email}` : name),
  jobsIntro: 'Tarification jobs of your cabinet, newest first. They update live.',
  filters: 'Filters',
  filterStatus: 'Status',
  allStatuses: 'All statuses',
  from: 'From',
  to: 'To',
  clearFilters: 'Clear filters',
  live: 'Live updates on',
  reconnecting: 'Live updates interrupted; reconnecting…',
  noJobs: 'No jobs match these filters.',
  created: 'Created',
  status: 'Status',
  progress: 'Progress',
  progressOf: (id) => `Progress of job ${id}`,
  creditsCol: 'Credits',
  result: 'Result',
  premium: (eur) => `${eur} / year`,
  stillNeeded: (what) => `The insurer still needs: ${what}`,
  downloadPdf: 'Download PDF',
  screenshot: 'Screenshot',
  trace: 'Trace',
  portalChanges: 'What the step expected and found',
  cancel: 'Cancel',
  cancelJob: (who) => `Cancel the quote for ${who}`,
  loadMore: 'Load more',
  statuses: {
    pending: 'Queued',
    running: 'Running',
    mfa_required: 'Code needed',
    awaiting_mfa: 'Code needed',
    completed: 'Completed',
    partial: 'Priced, no PDF',
    failed: 'Failed',
    cancelled: 'Cancelled',
  },
  mfaTitle: 'Verification code needed',
  mfaIntro: (insurer) => `The ${insurer} portal asks for a code to go on.`,
  mfaJob: 'Job',
  mfaPortalSaid: 'The portal says',
  mfaExpires: (time) => `Answer before ${time}.`,
  code: 'Code',
  sendCode: 'Send the code',
  codeTaken: (insurer) => `Sent to ${insurer}: its robot goes on.`,
  sendingCode: 'Sending…',
  stepTitle: { app_approval: 'Approval needed', captcha: 'Captcha to read', question: 'The portal asks a question' },
  stepIntro: {
    app_approval: (insurer) => `Approve the request in the ${insurer} app, then say so here.`,
    captcha: (insurer) => `The ${insurer} portal shows a captcha: type the text of the image.`,
    question: (insurer) => `The ${insurer} portal asks something the quote’s data does not answer.`,
  },
  codeFrom: { sms: 'Code received by SMS', email: 'Code received by e-mail', app: 'Code shown in the authenticator app' },
  approvedIt: 'I approved it in the insurer’s app',
  captchaImage: 'The captcha image',
  captchaText: 'Text of the image',
  answer: 'Your answer',
  sendAnswer: 'Send the answer',
};

const fr: AutomationStrings = {
  insurersTitle: 'Assureurs',
  pricingTitle: 'Tarification',
  jobsTitle: 'Tâches',
  insurersIntro:
    'Les assureurs avec lesquels cette installation tarifie, leurs produits, et les identifiants de portail de votre cabinet. Les mots de passe sont chiffrés et ne sont plus jamais affichés.',
  insurer: 'Assureur',
  products: 'Produits',
  credentials: 'Identifiants du portail',
  notConfigured: 'Non configurés',
  login: 'Identifiant',
  password: 'Mot de passe',
  passwordHint: (replacing) =>
    replacing
      ? 'Le mot de passe enregistré n’est jamais affiché ; saisissez-le à nouveau pour le remplacer.'
      : 'Chiffré ; jamais réaffiché.',
  demoLogin: (login, password) =>
    `Un assureur de démonstration : son portail accepte l’identifiant « ${login} » avec le mot de passe « ${password} ».`,
  useDemoLogin: 'Remplir avec le compte de démonstration',
  saveCredentials: 'Enregistrer les identifiants',
  replaceCredentials: 'Remplacer les identifiants',
  removeCredentials: 'Supprimer les identifiants',
  credentialsSaved: 'Identifiants enregistrés.',
  credentialsRemoved: 'Identifiants supprimés.',
  testLogin: 'Tester la connexion',
  testingLogin: 'Connexion au portail…',
  loginOk: (mfa) =>
    mfa
      ? 'Connexion réussie : le portail accepte le mot de passe et demande un code à chaque connexion.'
      : 'Connexion réussie : le portail accepte ces identifiants.',
  adminOnlyCredentials: 'Seul un administrateur du cabinet peut saisir des identifiants ou tester une connexion.',
  kindQuote: 'devis',
  kindRoutine: 'routine',
  credits: (n) => `${n} crédit${n > 1 ? 's' : ''}`,
  adapterVersion: (version) => `version ${version}`,
  builtIn: 'intégré',
  installed: 'installé',
  signedBy: (key, trusted) =>
    `signé par ${key} (${trusted ? 'clé de confiance' : 'clé à laquelle la politique informatique ne fait pas confiance'})`,
  notSigned: 'non signé',
  portalChanged: (step, when) =>
    `Le portail de l’assureur a changé (étape ${step}, le ${when}) : son robot échoue tant que son connecteur n’est pas mis à jour.`,
  packagesNotLoaded: 'Ces paquets d’assureurs n’ont pas été chargés :',
  packagesNotLoadedHint:
    'Leurs assureurs ne peuvent pas tarifer tant que le paquet n’est pas corrigé. Sur l’ordinateur où tourne Courtier, la commande « courtier insurers list » dit la même chose, et « courtier insurers install » installe un paquet corrigé.',
  pricingIntro:
    'Choisissez un assureur et un produit ; le formulaire ci-dessous vient du schéma du produit. Vérifiez-le d’abord (gratuit), puis tarifez : le robot travaille en arrière-plan et la tâche s’affiche en direct dans Tâches.',
  product: 'Produit',
  choose: 'Choisir…',
  loadingForm: 'Chargement du formulaire…',
  requiredMark: 'obligatoire',
  requiredNote: 'Les champs marqués * sont obligatoires.',
  dateHint: (pattern) => `Date au format ${pattern}, ou choisissez-la dans le calendrier.`,
  fixFields: 'Certains champs sont à corriger : voyez les messages sous chacun.',
  yes: 'Oui',
  check: 'Vérifier (simulation)',
  checking: 'Vérification…',
  price: 'Tarifer',
  pricing: 'Envoi…',
  dryRunTitle: 'Résultat de la vérification',
  cost: 'Coût',
  quotaLeft: (remaining, limit) => `${remaining} sur ${limit} restantes cette heure-ci`,
  balance: 'Portefeuille',
  credentialsReady: (ok) =>
    ok ? 'Identifiants du portail configurés' : 'Aucun identifiant pour cet assureur : saisissez-les dans Assureurs',
  missingFields: 'Champs manquants :',
  invalidFields: 'Champs invalides :',
  readyToPrice: 'Prêt à tarifer.',
  noCredentialsLink: 'Assureurs',
  walletLink: 'Page Crédits et état',
  earlierPricingLink: 'Ouvrir cette tarification',
  client: 'Client',
  clientHint:
    'Tapez un nom ou un e-mail : le devis est rattaché à ce client, affiché sur sa fiche, et pourra être signé. Une nouvelle personne devient cliente ici.',
  clientSearching: 'Recherche…',
  clientNoMatch: (q) => `Aucun client ne correspond à « ${q} ».`,
  clientChosen: (name) => `Pour ${name}`,
  clientChange: 'Changer de client',
  clientCreate: (name) => `Créer le client « ${name} »`,
  clientRequired: 'Choisissez le client de ce devis, ou créez-le : un devis sans client ne peut pas être signé.',
  clientOption: (name, email) => (email ? `${name} · ${email}` : name),
  jobsIntro: 'Les tâches de tarification de votre cabinet, les plus récentes d’abord. Elles se mettent à jour en direct.',
  filters: 'Filtres',
  filterStatus: 'Statut',
  allStatuses: 'Tous les statuts',
  from: 'Du',
  to: 'Au',
  clearFilters: 'Effacer les filtres',
  live: 'Mises à jour en direct',
  reconnecting: 'Mises à jour interrompues ; reconnexion…',
  noJobs: 'Aucune tâche ne correspond à ces filtres.',
  created: 'Créée le',
  status: 'Statut',
  progress: 'Avancement',
  progressOf: (id) => `Avancement de la tâche ${id}`,
  creditsCol: 'Crédits',
  result: 'Résultat',
  premium: (eur) => `${eur} / an`,
  stillNeeded: (what) => `L’assureur attend encore : ${what}`,
  downloadPdf: 'Télécharger le PDF',
  screenshot: 'Capture d’écran',
  trace: 'Trace',
  portalChanges: 'Ce que l’étape attendait et ce qu’elle a trouvé',
  cancel: 'Annuler',
  cancelJob: (who) => `Annuler le devis de ${who}`,
  loadMore: 'Afficher plus',
  statuses: {
    pending: 'En file d’attente',
    running: 'En cours',
    mfa_required: 'Code demandé',
    awaiting_mfa: 'Code demandé',
    completed: 'Terminée',
    partial: 'Tarifée, sans PDF',
    failed: 'Échec',
    cancelled: 'Annulée',
  },
  mfaTitle: 'Code de vérification demandé',
  mfaIntro: (insurer) => `Le portail ${insurer} demande un code pour continuer.`,
  mfaJob: 'Tâche',
  mfaPortalSaid: 'Message du portail',
  mfaExpires: (time) => `Répondez avant ${time}.`,
  code: 'Code',
  sendCode: 'Envoyer le code',
  codeTaken: (insurer) => `Transmis à ${insurer} : son robot continue.`,
  sendingCode: 'Envoi…',
  stepTitle: { app_approval: 'Validation demandée', captcha: 'Captcha à lire', question: 'Le portail pose une question' },
  stepIntro: {
    app_approval: (insurer) => `Validez la demande dans l’application ${insurer}, puis indiquez-le ici.`,
    captcha: (insurer) => `Le portail ${insurer} affiche un captcha : saisissez le texte de l’image.`,
    question: (insurer) => `Le portail ${insurer} demande une information que les données du devis ne donnent pas.`,
  },
  codeFrom: { sms: 'Code reçu par SMS', email: 'Code reçu par e-mail', app: 'Code affiché dans l’application d’authentification' },
  approvedIt: 'Je l’ai validé dans l’application de l’assureur',
  captchaImage: 'L’image du captcha',
  captchaText: 'Texte de l’image',
  answer: 'Votre réponse',
  sendAnswer: 'Envoyer la réponse',
};

export const AUTOMATION_STRINGS: Record<Lang, AutomationStrings> = { en, fr };

export { formatDateTime, formatEuros, formatTime } from '../../format.js';
