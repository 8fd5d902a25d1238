import type { Lang } from '../../i18n.js';

/** The pipeline board's and the opportunity page's words, in both languages (the rest of the records' are in strings.ts). */
export interface PipelineStrings {
  boardLabel: string;
  columnSummary: (count: number, more: boolean, total: string) => string;
  moveHandle: (title: string) => string;
  dragHelp: string;
  pickedUp: (title: string, stage: string) => string;
  over: (title: string, stage: string) => string;
  droppedSame: (title: string, stage: string) => string;
  cancelled: (title: string, stage: string) => string;
  refused: (title: string, why: string) => string;
  finalTitle: (title: string, stage: string) => string;
  finalText: (stage: string) => string;
  finalConfirm: (stage: string) => string;
  noClient: string;
  // The opportunity's page
  backToBoard: string;
  order: string;
  valueInvalid: string;
  orderNewest: string;
  orderValue: string;
  details: string;
  edit: string;
  save: string;
  saving: string;
  saved: string;
  client: string;
  clientOptional: string;
  clientHint: string;
  openClient: (name: string) => string;
  clientErased: string;
  contact: string;
  firstName: string;
  phone: string;
  source: string;
  tags: string;
  tagsHint: string;
  none: string;
  notes: string;
  noNotes: string;
  newNote: string;
  addNote: string;
  adding: string;
  noteBy: (author: string, when: string) => string;
  noteErased: string;
  notFound: string;
}

const en: PipelineStrings = {
  boardLabel: 'Pipeline',
  columnSummary: (count, more, total) => `${count}${more ? '+' : ''} · ${total}`,
  moveHandle: (title) => `Move ${title}`,
  dragHelp:
    'To move an opportunity with the keyboard, press Space or Enter on its Move button, choose a column with the left and right arrows, then press Space or Enter to drop it, or Escape to cancel.',
  pickedUp: (title, stage) =>
    `Picked up ${title}, in ${stage}. Left and right arrows choose a column; Space or Enter drops it; Escape cancels.`,
  over: (title, stage) => `${title} is over ${stage}.`,
  droppedSame: (title, stage) => `${title} dropped back in ${stage}.`,
  cancelled: (title, stage) => `Move cancelled: ${title} stays in ${stage}.`,
  refused: (title, why) => `${title} was not moved: ${why}`,
  finalTitle: (title, stage) => `Mark ${title} as ${stage}?`,
  finalText: (stage) => `${stage} is a final stage: moving the opportunity out of it later will ask to reopen it.`,
  finalConfirm: (stage) => `Mark as ${stage}`,
  noClient: 'No client',
  backToBoard: 'All opportunities',
  order: 'Cards in each stage',
  valueInvalid: 'Type an amount in euros, such as 1200 or 1200.50.',
  orderNewest: 'Newest first',
  orderValue: 'Largest value first',
  details: 'Details',
  edit: 'Edit',
  save: 'Save',
  saving: 'Saving…',
  saved: 'Changes saved.',
  client: 'Client',
  clientOptional: 'Client (optional)',
  clientHint: 'Search the cabinet’s clients by name or email, or create the client.',
  openClient: (name) => `${name} (client’s page)`,
  clientErased: 'Erased client',
  contact: 'Contact',
  firstName: 'Contact’s first name',
  phone: 'Phone',
  source: 'Source',
  tags: 'Tags',
  tagsHint: 'Separated by commas.',
  none: '—',
  notes: 'Notes',
  noNotes: 'No note yet.',
  newNote: 'New note',
  addNote: 'Add the note',
  adding: 'Adding…',
  noteBy: (author, when) => `${author}, ${when}`,
  noteErased: 'Emptied when the client was erased.',
  notFound: 'This opportunity does not exist in your cabinet.',
};

const fr: PipelineStrings = {
  boardLabel: 'Pipeline',
  columnSummary: (count, more, total) => `${count}${more ? '+' : ''} · ${total}`,
  moveHandle: (title) => `Déplacer ${title}`,
  dragHelp:
    'Pour déplacer une opportunité au clavier, appuyez sur Espace ou Entrée sur son bouton Déplacer, choisissez une colonne avec les flèches gauche et droite, puis appuyez sur Espace ou Entrée pour la déposer, ou sur Échap pour annuler.',
  pickedUp: (title, stage) =>
    `${title} prise, dans ${stage}. Les flèches gauche et droite choisissent une colonne ; Espace ou Entrée la dépose ; Échap annule.`,
  over: (title, stage) => `${title} au-dessus de ${stage}.`,
  droppedSame: (title, stage) => `${title} reposée dans ${stage}.`,
  cancelled: (title, stage) => `Déplacement annulé : ${title} reste dans ${stage}.`,
  refused: (title, why) => `${title} n’a pas été déplacée : ${why}`,
  finalTitle: (title, stage) => `Passer ${title} en ${stage} ?`,
  finalText: (stage) => `${stage} est une étape définitive : en sortir plus tard demandera de rouvrir l’opportunité.`,
  finalConfirm: (stage) => `Passer en ${stage}`,
  noClient: 'Aucun client',
  backToBoard: 'Toutes les opportunités',
  order: 'Cartes de chaque étape',
  valueInvalid: 'Saisissez un montant en euros, par exemple 1200 ou 1200,50.',
  orderNewest: 'Les plus récentes d’abord',
  orderValue: 'Les plus gros montants d’abord',
  details: 'Détails',
  edit: 'Modifier',
  save: 'Enregistrer',
  saving: 'Enregistrement…',
  saved: 'Modifications enregistrées.',
  client: 'Client',
  clientOptional: 'Client (facultatif)',
  clientHint: 'Cherchez parmi les clients du cabinet par nom ou courriel, ou créez le client.',
  openClient: (name) => `${name} (fiche client)`,
  clientErased: 'Client effacé',
  contact: 'Contact',
  firstName: 'Prénom du contact',
  phone: 'Téléphone',
  source: 'Origine',
  tags: 'Étiquettes',
  tagsHint: 'Séparées par des virgules.',
  none: '—',
  notes: 'Notes',
  noNotes: 'Aucune note pour l’instant.',
  newNote: 'Nouvelle note',
  addNote: 'Ajouter la note',
  adding: 'Ajout…',
  noteBy: (author, when) => `${author}, ${when}`,
  noteErased: 'Vidée à l’effacement du client.',
  notFound: 'Cette opportunité n’existe pas dans votre cabinet.',
};

export const PIPELINE_STRINGS: Record<Lang, PipelineStrings> = { en, fr };
