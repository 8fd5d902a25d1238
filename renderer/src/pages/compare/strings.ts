import type { Lang } from '../../i18n.js';

/** The Compare page's words, in both languages. */
export interface CompareStrings {
  title: string;
  intro: string;
  line: string;
  lines: Record<'auto' | 'mrh', string>;
  createClient: (name: string) => string;
  creatingClient: string;
  clientCreated: (name: string) => string;
  insurers: string;
  insurersHint: string;
  coverGroup: string;
  requiredNote: string;
  /** Above an insurer's own questions: the insurer named. */
  asks: (insurer: string) => string;
  questionsIntro: string;
  check: string;
  checking: string;
  start: string;
  starting: string;
  fixFields: string;
  dryRunTitle: string;
  wouldRun: string;
  cost: (credits: number) => string;
  total: (credits: number, balance: number) => string;
  notEnough: string;
  walletLink: string;
  leftOut: Record<'risk_declined' | 'risk_not_accepted' | 'insurer_credentials_missing' | 'mapping_failed' | 'answers_missing', string>;
  noInsurer: string;
  // A comparison
  comparisonTitle: (line: string) => string;
  allComparisons: string;
  forClient: string;
  noClient: string;
  startedTitle: string;
  creditsTitle: string;
  insurersTitle: string;
  reconnecting: string;
  statuses: Record<'pending' | 'running' | 'completed' | 'partial' | 'failed', string>;
  creditsUsed: (n: number) => string;
  live: string;
  waiting: string;
  robotStep: (step: string, percent: number) => string;
  humanStep: string;
  answerPrompt: string;
  noPrice: string;
  openJob: string;
  filterTitle: string;
  filterHint: string;
  yearly: (eur: string) => string;
  monthly: (eur: string) => string;
  deductible: (eur: string) => string;
  noDeductible: string;
  upTo: (eur: string) => string;
  included: string;
  notIncluded: string;
  lacks: (names: string) => string;
  cheapest: string;
  broadest: string;
  quotePdf: string;
  recommend: string;
  recommendTitle: (offer: string) => string;
  needs: string;
  needsHint: string;
  reason: string;
  reasonHint: string;
  makeAdvice: string;
  makingAdvice: string;
  cancel: string;
  adviceNeedsClient: string;
  adviceReady: string;
  advices: string;
  downloadAdvice: string;
  adviceOf: (insurer: string, formula: string, when: string) => string;
  // The client's page
  clientComparisons: string;
  noComparisons: string;
  compareForClient: string;
}

const en: CompareStrings = {
  title: 'Compare',
  intro:
    'Describe the client’s car or home once: every insurer that prices it is asked at the same time, and their offers line up below. Then recommend one, and the advice document is ready to send.',
  line: 'Line of business',
  lines: { auto: 'Car', mrh: 'Home' },
  createClient: (name) => `Create the client ${name}`,
  creatingClient: 'Creating…',
  clientCreated: (name) => `${name} is now a client of the cabinet.`,
  insurers: 'Insurers to ask',
  insurersHint: 'Each priced insurer costs its product’s credits; one that cannot price gives them back.',
  coverGroup: 'Cover',
  requiredNote: 'Fields marked * are required.',
  asks: (insurer) => `${insurer} also asks`,
  questionsIntro: 'Questions of the insurers’ own, which the form above does not answer. Each is asked once.',
  check: 'Check (dry run)',
  checking: 'Checking…',
  start: 'Compare the insurers',
  starting: 'Starting…',
  fixFields: 'Some fields need attention: they are marked below.',
  dryRunTitle: 'What would run',
  wouldRun: 'Ready',
  cost: (credits) => `${credits} credits`,
  total: (credits, balance) => `Total: ${credits} credits · wallet: ${balance} credits`,
  notEnough: 'The wallet does not hold enough credits for every insurer: an administrator can grant more on the Wallet page.',
  walletLink: 'Wallet',
  leftOut: {
    risk_declined: 'Does not insure such a risk',
    risk_not_accepted: 'A value is outside what it accepts',
    insurer_credentials_missing: 'No portal login in this cabinet (Insurers page)',
    mapping_failed: 'Its adapter could not read this risk',
    answers_missing: 'Questions to answer (below)',
  },
  noInsurer: 'No insurer of this install prices this line.',
  comparisonTitle: (line) => `Comparison · ${line}`,
  allComparisons: 'New comparison',
  forClient: 'For',
  noClient: 'No client',
  startedTitle: 'Started',
  creditsTitle: 'Credits',
  insurersTitle: 'The insurers’ answers',
  reconnecting: 'Live updates interrupted; reconnecting…',
  statuses: {
    pending: 'Waiting for a robot',
    running: 'Pricing',
    completed: 'Complete',
    partial: 'Complete, some insurers without a price',
    failed: 'No insurer gave a price',
  },
  creditsUsed: (n) => `${n} credits used`,
  live: 'Updates live',
  waiting: 'Waiting for a robot…',
  robotStep: (step, percent) => `${step} (${percent} %)`,
  humanStep: 'The portal asks a person for a code.',
  answerPrompt: 'Answer it in the prompt at the top of the page.',
  noPrice: 'No price',
  openJob: 'What its robot did',
  filterTitle: 'Guarantees the client wants',
  filterHint: 'Offers without every guarantee ticked are set apart; the marks go to offers that have them all.',
  yearly: (eur) => `${eur} / year`,
  monthly: (eur) => `or ${eur} / month`,
  deductible: (eur) => `Deductible ${eur}`,
  noDeductible: 'No deductible stated',
  upTo: (eur) => `up to ${eur}`,
  included: 'Included',
  notIncluded: 'Not included',
  lacks: (names) => `Lacks: ${names}`,
  cheapest: 'Cheapest',
  broadest: 'Broadest cover',
  quotePdf: 'Quote (PDF)',
  recommend: 'Recommend this offer',
  recommendTitle: (offer) => `Recommend ${offer}`,
  needs: 'The client’s needs, as they expressed them',
  needsHint: 'In French: it is written as is in the advice document.',
  reason: 'Why this offer',
  reasonHint: 'In French: the reason given to the client, written in the document.',
  makeAdvice: 'Make the advice document',
  makingAdvice: 'Making the document…',
  cancel: 'Cancel',
  adviceNeedsClient: 'An advice document is for a client: this comparison has none.',
  adviceReady: 'The advice document is ready: download it and send it to the client.',
  advices: 'Advice documents',
  downloadAdvice: 'Download (PDF)',
  adviceOf: (insurer, formula, when) => `${insurer}, ${formula} · ${when}`,
  clientComparisons: 'Comparisons',
  noComparisons: 'No comparison for this client yet.',
  compareForClient: 'Compare insurers for this client',
};

const fr: CompareStrings = {
  title: 'Comparer',
  intro:
    'Décrivez une seule fois la voiture ou le logement du client : tous les assureurs qui le tarifent sont interrogés en même temps, et leurs offres s’alignent ci-dessous. Recommandez-en une : le document de conseil est prêt à envoyer.',
  line: 'Branche',
  lines: { auto: 'Automobile', mrh: 'Habitation' },
  createClient: (name) => `Créer le client ${name}`,
  creatingClient: 'Création…',
  clientCreated: (name) => `${name} est maintenant client du cabinet.`,
  insurers: 'Assureurs à interroger',
  insurersHint: 'Chaque assureur tarifé coûte les crédits de son produit ; celui qui ne peut pas tarifer les rend.',
  coverGroup: 'Couverture',
  requiredNote: 'Les champs marqués * sont obligatoires.',
  asks: (insurer) => `${insurer} demande aussi`,
  questionsIntro: 'Les questions propres aux assureurs, auxquelles le formulaire ci-dessus ne répond pas. Chacune n’est posée qu’une fois.',
  check: 'Vérifier (simulation)',
  checking: 'Vérification…',
  start: 'Comparer les assureurs',
  starting: 'Lancement…',
  fixFields: 'Certains champs sont à revoir : ils sont signalés ci-dessous.',
  dryRunTitle: 'Ce qui serait lancé',
  wouldRun: 'Prêt',
  cost: (credits) => `${credits} crédits`,
  total: (credits, balance) => `Total : ${credits} crédits · portefeuille : ${balance} crédits`,
  notEnough:
    'Le portefeuille n’a pas assez de crédits pour tous les assureurs : un administrateur peut en ajouter depuis la page Portefeuille.',
  walletLink: 'Portefeuille',
  leftOut: {
    risk_declined: 'N’assure pas ce type de risque',
    risk_not_accepted: 'Une valeur sort de ce qu’il accepte',
    insurer_credentials_missing: 'Aucun identifiant de portail dans ce cabinet (page Assureurs)',
    mapping_failed: 'Son module n’a pas pu lire ce risque',
    answers_missing: 'Questions à compléter (ci-dessous)',
  },
  noInsurer: 'Aucun assureur de cette installation ne tarifie cette branche.',
  comparisonTitle: (line) => `Comparaison · ${line}`,
  allComparisons: 'Nouvelle comparaison',
  forClient: 'Pour',
  noClient: 'Sans client',
  startedTitle: 'Lancée le',
  creditsTitle: 'Crédits',
  insurersTitle: 'Les réponses des assureurs',
  reconnecting: 'Mises à jour interrompues ; reconnexion…',
  statuses: {
    pending: 'En attente d’un robot',
    running: 'Tarification en cours',
    completed: 'Terminée',
    partial: 'Terminée, certains assureurs sans tarif',
    failed: 'Aucun assureur n’a donné de tarif',
  },
  creditsUsed: (n) => `${n} crédits utilisés`,
  live: 'Mises à jour en direct',
  waiting: 'En attente d’un robot…',
  robotStep: (step, percent) => `${step} (${percent} %)`,
  humanStep: 'Le portail demande un code à une personne.',
  answerPrompt: 'Répondez dans la fenêtre en haut de la page.',
  noPrice: 'Pas de tarif',
  openJob: 'Ce qu’a fait son robot',
  filterTitle: 'Garanties voulues par le client',
  filterHint: 'Les offres sans toutes les garanties cochées sont mises à part ; les repères vont aux offres qui les ont toutes.',
  yearly: (eur) => `${eur} / an`,
  monthly: (eur) => `ou ${eur} / mois`,
  deductible: (eur) => `Franchise ${eur}`,
  noDeductible: 'Franchise non indiquée',
  upTo: (eur) => `jusqu’à ${eur}`,
  included: 'Incluse',
  notIncluded: 'Non incluse',
  lacks: (names) => `Manque : ${names}`,
  cheapest: 'La moins chère',
  broadest: 'La plus couvrante',
  quotePdf: 'Devis (PDF)',
  recommend: 'Recommander cette offre',
  recommendTitle: (offer) => `Recommander ${offer}`,
  needs: 'Les besoins du client, tels qu’il les a exprimés',
  needsHint: 'Écrit tel quel dans le document de conseil.',
  reason: 'Pourquoi cette offre',
  reasonHint: 'La raison donnée au client, écrite dans le document.',
  makeAdvice: 'Établir le document de conseil',
  makingAdvice: 'Établissement du document…',
  cancel: 'Annuler',
  adviceNeedsClient: 'Un document de conseil est établi pour un client : cette comparaison n’en a pas.',
  adviceReady: 'Le document de conseil est prêt : téléchargez-le et envoyez-le au client.',
  advices: 'Documents de conseil',
  downloadAdvice: 'Télécharger (PDF)',
  adviceOf: (insurer, formula, when) => `${insurer}, ${formula} · ${when}`,
  clientComparisons: 'Comparaisons',
  noComparisons: 'Aucune comparaison pour ce client pour l’instant.',
  compareForClient: 'Comparer les assureurs pour ce client',
};

export const COMPARE_STRINGS: Record<Lang, CompareStrings> = { en, fr };

/** The path of one comparison's page. */
export function comparisonPath(id: string): string {
  return `/console/compare/${encodeURIComponent(id)}`;
}
