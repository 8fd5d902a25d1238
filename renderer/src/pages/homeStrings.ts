import type { Lang } from '../i18n.js';

/** The home page's words, in both languages. */
export interface HomeStrings {
  roleAdmin: string;
  roleBroker: string;
  cabinetId: string;
  cabinetIdHint: string;
  copy: string;
  copied: string;
  checklistTitle: string;
  reading: string;
  allDone: string;
  remaining: (n: number) => string;
  done: string;
  toDo: string;
  insurerTitle: string;
  insurerDone: string;
  insurerUntested: (isAdmin: boolean) => string;
  insurerMissing: (isAdmin: boolean) => string;
  openInsurers: string;
  creditsTitle: string;
  creditsDone: (balance: number) => string;
  creditsMissing: (who: 'admin' | 'broker' | 'hub') => string;
  openWallet: string;
  quoteTitle: string;
  quoteDone: (who: string, product: string) => string;
  quoteMissing: string;
  someone: string;
  openJobs: string;
  openPricing: string;
  webhooksTitle: string;
  webhooksNone: string;
  webhooksDone: (n: number) => string;
  webhooksFailing: (n: number) => string;
  openWebhooks: string;
  assistantTitle: string;
  assistantDone: (names: string) => string;
  assistantMissing: string;
  openApps: string;
  mcpTitle: string;
  mcpIntro: string;
}

const en: HomeStrings = {
  roleAdmin: 'administrator',
  roleBroker: 'broker',
  cabinetId: 'Cabinet id',
  cabinetIdHint: 'The courtier command on this computer asks for it (--cabinet).',
  copy: 'Copy',
  copied: 'Copied',
  checklistTitle: 'What to do next',
  reading: 'Reading the cabinet’s state…',
  allDone: 'All set: the cabinet is ready for a day of quotes.',
  remaining: (n) => (n === 1 ? 'One thing left to do.' : `${n} things left to do.`),
  done: 'done',
  toDo: 'to do',
  insurerTitle: 'An insurer login that works',
  insurerDone: 'The robot signed in to an insurer’s portal with the cabinet’s login.',
  insurerUntested: (isAdmin) =>
    isAdmin
      ? 'A login is saved but not tried yet: test it on Insurers, or price a first quote.'
      : 'A login is saved but not tried yet: the first quote priced tries it.',
  insurerMissing: (isAdmin) =>
    isAdmin
      ? 'Save the cabinet’s login for an insurer’s portal, then test it.'
      : 'An administrator of the cabinet saves its login for an insurer’s portal.',
  openInsurers: 'Go to Insurers',
  creditsTitle: 'Credits in the wallet',
  creditsDone: (balance) => `${balance} credits left; each quote’s cost shows before it is priced.`,
  creditsMissing: (who) =>
    ({
      admin: 'The wallet is empty, so quotes cannot be priced: add credits on the Wallet & status page.',
      broker: 'The wallet is empty, so quotes cannot be priced: an administrator adds credits on the Wallet & status page.',
      hub: 'The cabinet’s wallet is empty, so quotes cannot be priced: its sync server’s operator adds credits.',
    })[who],
  openWallet: 'See the wallet',
  quoteTitle: 'A first quote priced',
  quoteDone: (who, product) => `Latest priced: ${product} for ${who}.`,
  quoteMissing: 'Fill in a product’s form in Pricing; the robot prices it while you work.',
  someone: 'a client',
  openJobs: 'See the jobs',
  openPricing: 'Price a quote',
  webhooksTitle: 'Webhooks healthy',
  webhooksNone: 'No webhook endpoint: nothing to watch (integrations can subscribe later).',
  webhooksDone: (n) => (n === 1 ? 'The webhook endpoint receives its events.' : `All ${n} webhook endpoints receive their events.`),
  webhooksFailing: (n) =>
    n === 1 ? 'One webhook endpoint is failing: its last delivery did not go through.' : `${n} webhook endpoints are failing.`,
  openWebhooks: 'See the webhooks',
  assistantTitle: 'An AI assistant connected',
  assistantDone: (names) => `Connected: ${names}.`,
  assistantMissing: 'Paste the MCP address below into your assistant (Claude, ChatGPT…) and accept its request.',
  openApps: 'See connected apps',
  mcpTitle: 'Connect an AI assistant',
  mcpIntro: 'Give your assistant this address as a remote MCP server; it will ask you to sign in and to allow it.',
};

const fr: HomeStrings = {
  roleAdmin: 'administrateur',
  roleBroker: 'courtier',
  cabinetId: 'Identifiant du cabinet',
  cabinetIdHint: 'La commande courtier de cet ordinateur le demande (--cabinet).',
  copy: 'Copier',
  copied: 'Copié',
  checklistTitle: 'Prochaines étapes',
  reading: 'Lecture de l’état du cabinet…',
  allDone: 'Tout est prêt : le cabinet peut tarifer toute la journée.',
  remaining: (n) => (n === 1 ? 'Il reste une chose à faire.' : `Il reste ${n} choses à faire.`),
  done: 'fait',
  toDo: 'à faire',
  insurerTitle: 'Une connexion assureur qui fonctionne',
  insurerDone: 'Le robot s’est connecté au portail d’un assureur avec l’identifiant du cabinet.',
  insurerUntested: (isAdmin) =>
    isAdmin
      ? 'Un identifiant est enregistré mais pas encore essayé : testez-le dans Assureurs, ou tarifez un premier devis.'
      : 'Un identifiant est enregistré mais pas encore essayé : le premier devis tarifé l’essaiera.',
  insurerMissing: (isAdmin) =>
    isAdmin
      ? 'Enregistrez l’identifiant du cabinet sur le portail d’un assureur, puis testez-le.'
      : 'Un administrateur du cabinet enregistre son identifiant sur le portail d’un assureur.',
  openInsurers: 'Aller dans Assureurs',
  creditsTitle: 'Des crédits dans le portefeuille',
  creditsDone: (balance) => `Il reste ${balance} crédits ; le coût de chaque devis s’affiche avant de le tarifer.`,
  creditsMissing: (who) =>
    ({
      admin: 'Le portefeuille est vide : aucun devis ne peut être tarifé. Ajoutez des crédits sur la page Crédits et état.',
      broker:
        'Le portefeuille est vide : aucun devis ne peut être tarifé. Un administrateur ajoute des crédits sur la page Crédits et état.',
      hub: 'Le portefeuille du cabinet est vide : aucun devis ne peut être tarifé. L’opérateur de son serveur de synchronisation ajoute des crédits.',
    })[who],
  openWallet: 'Voir le portefeuille',
  quoteTitle: 'Un premier devis tarifé',
  quoteDone: (who, product) => `Dernier tarifé : ${product} pour ${who}.`,
  quoteMissing: 'Remplissez le formulaire d’un produit dans Tarification ; le robot le tarifie pendant que vous travaillez.',
  someone: 'un client',
  openJobs: 'Voir les tâches',
  openPricing: 'Tarifer un devis',
  webhooksTitle: 'Webhooks en bonne santé',
  webhooksNone: 'Aucun point de réception de webhooks : rien à surveiller (les intégrations pourront s’abonner plus tard).',
  webhooksDone: (n) =>
    n === 1 ? 'Le point de réception reçoit ses événements.' : `Les ${n} points de réception reçoivent leurs événements.`,
  webhooksFailing: (n) =>
    n === 1 ? 'Un point de réception est en échec : sa dernière livraison n’est pas passée.' : `${n} points de réception sont en échec.`,
  openWebhooks: 'Voir les webhooks',
  assistantTitle: 'Un assistant IA connecté',
  assistantDone: (names) => `Connecté : ${names}.`,
  assistantMissing: 'Collez l’adresse MCP ci-dessous dans votre assistant (Claude, ChatGPT…) et acceptez sa demande.',
  openApps: 'Voir les applications connectées',
  mcpTitle: 'Connecter un assistant IA',
  mcpIntro: 'Donnez cette adresse à votre assistant comme serveur MCP distant ; il vous demandera de vous connecter et de l’autoriser.',
};

export const HOME_STRINGS: Record<Lang, HomeStrings> = { en, fr };
