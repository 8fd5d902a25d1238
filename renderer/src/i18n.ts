/**
 * The console speaks English or French: the browser's preferred language chooses, French otherwise.
 * The preferences are read in order (navigator.languages, then navigator.language); the first that
 * is English or French wins, and a browser that prefers neither gets French.
 */
export type Lang = 'en' | 'fr';

/** The browser's languages, most preferred first; none outside a browser. */
function browserLanguages(): readonly string[] {
  // Through globalThis: this module needs no DOM types, so Node tests import it as it is.
  const nav = (globalThis as { navigator?: { languages?: readonly string[]; language?: string } }).navigator;
  if (!nav) return [];
  return [...(nav.languages ?? []), ...(nav.language ? [nav.language] : [])];
}

export function detectLang(languages: readonly string[] = browserLanguages()): Lang {
  for (const language of languages) {
    // The primary subtag: "en-GB" and "en" are English, "enm" (Middle English) is not.
    const primary = language.trim().toLowerCase().split(/[-_]/)[0];
    if (primary === 'en') return 'en';
    if (primary === 'fr') return 'fr';
  }
  return 'fr';
}

const LANG_KEY = 'courtier.lang';

/** The language the user picked with the switch, else the browser's. */
export function chooseLang(): Lang {
  const stored = (globalThis as { localStorage?: { getItem(key: string): string | null } }).localStorage?.getItem(LANG_KEY);
  return stored === 'en' || stored === 'fr' ? stored : detectLang();
}

export function rememberLang(lang: Lang): void {
  (globalThis as { localStorage?: { setItem(key: string, value: string): void } }).localStorage?.setItem(LANG_KEY, lang);
}

export interface Strings {
  appName: string;
  loading: string;
  networkError: string;
  unexpectedError: (status: number) => string;
  // Login
  signInTitle: string;
  signInIntro: string;
  email: string;
  password: string;
  signIn: string;
  fillBoth: string;
  accountDisabled: string;
  cabinet: string;
  chooseCabinet: string;
  pickCabinet: string;
  // Consent
  consentPageTitle: string;
  consentTitle: (client: string) => string;
  returnsTo: string;
  signedInAs: string;
  itWillBeAbleTo: string;
  canModify: string;
  allow: string;
  deny: string;
  consentHint: string;
  missingRequestId: string;
  badDecisionUrl: string;
  // Shell
  navigation: string;
  language: string;
  notFound: string;
  skipToContent: string;
  menu: string;
  home: string;
  cabinetMenu: string;
  myAccount: string;
  serviceUnreachable: string;
  waitingCount: (n: number) => string;
  // Home
  homeTitle: string;
  signedInAsAt: string;
  signOut: string;
}

const en: Strings = {
  appName: 'Courtier',
  loading: 'Loading…',
  networkError: 'The Courtier service cannot be reached. Check that it is running, then try again.',
  unexpectedError: (status) => `The Courtier service gave an unexpected answer (${status}). Try again.`,
  signInTitle: 'Sign in to Courtier',
  signInIntro: 'Use the email and password of your Courtier account.',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  fillBoth: 'Enter your email and your password.',
  accountDisabled: 'Your account is disabled. Ask an administrator of your cabinet to enable it again.',
  cabinet: 'Cabinet',
  chooseCabinet: 'This email and password open accounts in several cabinets. Choose the cabinet to sign in to, then click Sign in.',
  pickCabinet: 'Choose the cabinet to sign in to.',
  consentPageTitle: 'Connect an application',
  consentTitle: (client) => `${client} wants to access your Courtier data`,
  returnsTo: 'It will return you to',
  signedInAs: 'Signed in as',
  itWillBeAbleTo: 'If you allow it, this application will be able to:',
  canModify: 'Can modify data',
  allow: 'Allow',
  deny: 'Deny',
  consentHint: 'Allow only applications you trust. You can revoke this access later from the console.',
  missingRequestId: 'This consent link is incomplete: it has no request_id. Start again from the application.',
  badDecisionUrl: 'This consent request cannot be answered from this page.',
  navigation: 'Console sections',
  language: 'Language',
  notFound: 'There is no such page in the console.',
  skipToContent: 'Skip to content',
  menu: 'Menu',
  home: 'Home',
  cabinetMenu: 'Cabinet',
  myAccount: 'My account',
  serviceUnreachable:
    'The Courtier service is not answering. This page will come back by itself as soon as it does; nothing you saved is lost.',
  waitingCount: (n) => (n === 1 ? '1 waiting for you' : `${n} waiting for you`),
  homeTitle: 'Courtier console',
  signedInAsAt: 'Signed in as',
  signOut: 'Sign out',
};

const fr: Strings = {
  appName: 'Courtier',
  loading: 'Chargement…',
  networkError: 'Le service Courtier ne répond pas. Vérifiez qu’il est lancé, puis réessayez.',
  unexpectedError: (status) => `Le service Courtier a donné une réponse inattendue (${status}). Réessayez.`,
  signInTitle: 'Connexion à Courtier',
  signInIntro: 'Utilisez le courriel et le mot de passe de votre compte Courtier.',
  email: 'Courriel',
  password: 'Mot de passe',
  signIn: 'Se connecter',
  fillBoth: 'Saisissez votre courriel et votre mot de passe.',
  accountDisabled: 'Votre compte est désactivé. Demandez à un administrateur de votre cabinet de le réactiver.',
  cabinet: 'Cabinet',
  chooseCabinet:
    'Ce courriel et ce mot de passe ouvrent des comptes dans plusieurs cabinets. Choisissez le cabinet auquel vous connecter, puis cliquez sur Se connecter.',
  pickCabinet: 'Choisissez le cabinet auquel vous connecter.',
  consentPageTitle: 'Connecter une application',
  consentTitle: (client) => `${client} souhaite accéder à vos données Courtier`,
  returnsTo: 'Vous serez ensuite renvoyé vers',
  signedInAs: 'Connecté en tant que',
  itWillBeAbleTo: 'Si vous l’autorisez, cette application pourra :',
  canModify: 'Peut modifier vos données',
  allow: 'Autoriser',
  deny: 'Refuser',
  consentHint: 'N’autorisez que les applications de confiance. Vous pourrez retirer cet accès depuis la console.',
  missingRequestId: 'Ce lien de consentement est incomplet : il n’a pas de request_id. Recommencez depuis l’application.',
  badDecisionUrl: 'Cette demande de consentement ne peut pas être traitée depuis cette page.',
  navigation: 'Rubriques de la console',
  language: 'Langue',
  notFound: 'Cette page n’existe pas dans la console.',
  skipToContent: 'Aller au contenu',
  menu: 'Menu',
  home: 'Accueil',
  cabinetMenu: 'Cabinet',
  myAccount: 'Mon compte',
  serviceUnreachable:
    'Le service Courtier ne répond pas. Cette page reviendra d’elle-même dès qu’il répondra ; rien de ce que vous avez enregistré n’est perdu.',
  waitingCount: (n) => (n === 1 ? '1 en attente de vous' : `${n} en attente de vous`),
  homeTitle: 'Console Courtier',
  signedInAsAt: 'Connecté en tant que',
  signOut: 'Se déconnecter',
};

export const STRINGS: Record<Lang, Strings> = { en, fr };
