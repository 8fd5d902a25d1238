import type { ValidationIssue } from '../../shared/errors.js';
import { formatDay, formatNumber, LOCALES } from './format.js';
import type { Lang } from './i18n.js';

/**
 * One problem of a validation_error worded for the person filling the form, in the console's
 * language, from its code and parameters (shared/errors.ts, ValidationIssue) — never from the
 * server's English message, which is for developers. Shown next to the field, so the sentence
 * does not repeat the field's name.
 */

/** What the page knows about the field beyond the issue: the labels of its choices, an example of a right value. */
export interface IssueContext {
  /** value → label, for a choice of codes (a product's enum_labels). */
  valueLabels?: Readonly<Record<string, string>>;
  /** A value that passes, shown when the form is not the one expected. */
  example?: unknown;
}

type Issue = Pick<ValidationIssue, 'message'> & Partial<Omit<ValidationIssue, 'message'>>;

interface Words {
  required: string;
  number: string;
  wholeNumber: string;
  yesNo: string;
  text: string;
  choice: string;
  wrongKind: string;
  atLeast: (n: string) => string;
  moreThan: (n: string) => string;
  atMost: (n: string) => string;
  lessThan: (n: string) => string;
  notEmpty: string;
  minChars: (n: string) => string;
  maxChars: (n: string) => string;
  exactChars: (n: string) => string;
  chooseAtLeastOne: string;
  chooseAtLeast: (n: string) => string;
  chooseAtMost: (n: string) => string;
  onOrAfter: (d: string) => string;
  onOrBefore: (d: string) => string;
  email: string;
  url: string;
  identifier: string;
  date: string;
  datetime: string;
  time: string;
  form: string;
  forExample: (example: string) => string;
  oneOf: (values: string) => string;
  notAllowed: string;
  multipleOf: (n: string) => string;
  unexpected: (keys: string) => string;
  notAccepted: string;
  yes: string;
  no: string;
  listSeparator: string;
}

const en: Words = {
  required: 'This field is required.',
  number: 'Enter a number.',
  wholeNumber: 'Enter a whole number.',
  yesNo: 'Choose yes or no.',
  text: 'Enter text here.',
  choice: 'Choose one of the options.',
  wrongKind: 'This value is not of the right kind.',
  atLeast: (n) => `Must be at least ${n}.`,
  moreThan: (n) => `Must be more than ${n}.`,
  atMost: (n) => `Must be at most ${n}.`,
  lessThan: (n) => `Must be less than ${n}.`,
  notEmpty: 'This field cannot be empty.',
  minChars: (n) => `Enter at least ${n} characters.`,
  maxChars: (n) => `Enter at most ${n} characters.`,
  exactChars: (n) => `Enter exactly ${n} characters.`,
  chooseAtLeastOne: 'Choose at least one.',
  chooseAtLeast: (n) => `Choose at least ${n}.`,
  chooseAtMost: (n) => `Choose at most ${n}.`,
  onOrAfter: (d) => `Must be on or after ${d}.`,
  onOrBefore: (d) => `Must be on or before ${d}.`,
  email: 'This is not a valid email address.',
  url: 'This is not a valid web address.',
  identifier: 'This identifier is not valid.',
  date: 'Enter a valid date.',
  datetime: 'Enter a valid date and time.',
  time: 'Enter a valid time.',
  form: 'This is not in the expected form.',
  forExample: (example) => `This is not in the expected form (for example: ${example}).`,
  oneOf: (values) => `Choose one of: ${values}.`,
  notAllowed: 'This value is not allowed.',
  multipleOf: (n) => `Must be a multiple of ${n}.`,
  unexpected: (keys) => `Unexpected information: ${keys}.`,
  notAccepted: 'This value is not accepted.',
  yes: 'Yes',
  no: 'No',
  listSeparator: ', ',
};

const fr: Words = {
  required: 'Ce champ est obligatoire.',
  number: 'Saisissez un nombre.',
  wholeNumber: 'Saisissez un nombre entier.',
  yesNo: 'Choisissez oui ou non.',
  text: 'Saisissez un texte.',
  choice: 'Choisissez une des options.',
  wrongKind: 'Cette valeur n’est pas du type attendu.',
  atLeast: (n) => `Doit valoir au moins ${n}.`,
  moreThan: (n) => `Doit valoir plus de ${n}.`,
  atMost: (n) => `Doit valoir au plus ${n}.`,
  lessThan: (n) => `Doit valoir moins de ${n}.`,
  notEmpty: 'Ce champ ne peut pas être vide.',
  minChars: (n) => `Saisissez au moins ${n} caractères.`,
  maxChars: (n) => `Saisissez au plus ${n} caractères.`,
  exactChars: (n) => `Saisissez exactement ${n} caractères.`,
  chooseAtLeastOne: 'Choisissez-en au moins un.',
  chooseAtLeast: (n) => `Choisissez-en au moins ${n}.`,
  chooseAtMost: (n) => `Choisissez-en au plus ${n}.`,
  onOrAfter: (d) => `Doit être le ${d} ou après.`,
  onOrBefore: (d) => `Doit être le ${d} ou avant.`,
  email: 'Cette adresse e-mail n’est pas valable.',
  url: 'Cette adresse web n’est pas valable.',
  identifier: 'Cet identifiant n’est pas valable.',
  date: 'Saisissez une date valable.',
  datetime: 'Saisissez une date et une heure valables.',
  time: 'Saisissez une heure valable.',
  form: 'Le format n’est pas celui attendu.',
  forExample: (example) => `Le format n’est pas celui attendu (par exemple : ${example}).`,
  oneOf: (values) => `Choisissez parmi : ${values}.`,
  notAllowed: 'Cette valeur n’est pas acceptée.',
  multipleOf: (n) => `Doit être un multiple de ${n}.`,
  unexpected: (keys) => `Informations inattendues : ${keys}.`,
  notAccepted: 'Cette valeur n’est pas acceptée.',
  yes: 'Oui',
  no: 'Non',
  listSeparator: ', ',
};

const WORDS: Record<Lang, Words> = { en, fr };

/** A date limit of the schema (epoch ms of a UTC day) written as the console writes days. */
const formatLimitDate = (lang: Lang, ms: number): string => formatDay(lang, new Date(ms).toISOString().slice(0, 10));

/** A value offered to choose, as the person reads it: its label, else itself. */
function valueWord(value: string | number | boolean | null, w: Words, lang: Lang, labels?: Readonly<Record<string, string>>): string {
  if (typeof value === 'boolean') return value ? w.yes : w.no;
  if (typeof value === 'number') return formatNumber(lang, value);
  if (value === null) return '—';
  return labels?.[value] ?? value;
}

function missingOrWrongType(issue: Issue, w: Words): string {
  if (issue.received === 'undefined') return w.required;
  switch (issue.expected) {
    case 'number':
    case 'bigint':
    case 'nan':
      return w.number;
    case 'int':
      return w.wholeNumber;
    case 'boolean':
      return w.yesNo;
    case 'string':
      return w.text;
    case 'date':
      return w.date;
    default:
      return w.wrongKind;
  }
}

function tooSmall(issue: Issue, w: Words, lang: Lang): string {
  const min = issue.minimum;
  if (min === undefined) return w.notAccepted;
  const inclusive = issue.inclusive !== false;
  const n = formatNumber(lang, min);
  switch (issue.origin) {
    case 'string':
      return min <= 1 ? w.notEmpty : w.minChars(n);
    case 'array':
    case 'set':
      return min <= 1 ? w.chooseAtLeastOne : w.chooseAtLeast(n);
    case 'date':
      return w.onOrAfter(formatLimitDate(lang, min));
    default:
      return inclusive ? w.atLeast(n) : w.moreThan(n);
  }
}

function tooBig(issue: Issue, w: Words, lang: Lang): string {
  const max = issue.maximum;
  if (max === undefined) return w.notAccepted;
  const inclusive = issue.inclusive !== false;
  const n = formatNumber(lang, max);
  switch (issue.origin) {
    case 'string':
      return w.maxChars(n);
    case 'array':
    case 'set':
      return w.chooseAtMost(n);
    case 'date':
      return w.onOrBefore(formatLimitDate(lang, max));
    default:
      return inclusive ? w.atMost(n) : w.lessThan(n);
  }
}

function badFormat(issue: Issue, w: Words, context: IssueContext): string {
  switch (issue.format) {
    case 'email':
      return w.email;
    case 'url':
      return w.url;
    case 'uuid':
    case 'guid':
    case 'cuid':
    case 'cuid2':
    case 'ulid':
    case 'nanoid':
      return w.identifier;
    case 'date':
      return w.date;
    case 'datetime':
      return w.datetime;
    case 'time':
      return w.time;
    default: {
      const example = context.example;
      return typeof example === 'string' || typeof example === 'number' ? w.forExample(String(example)) : w.form;
    }
  }
}

/** The sentence for one problem, e.g. "Must be at most 3.5" or "Choisissez parmi : Privé, Professionnel, Mixte". Never empty, never the server's text. */
export function describeIssue(issue: Issue, lang: Lang, context: IssueContext = {}): string {
  const w = WORDS[lang];
  switch (issue.code) {
    case 'invalid_type':
      return missingOrWrongType(issue, w);
    case 'too_small':
      return tooSmall(issue, w, lang);
    case 'too_big':
      return tooBig(issue, w, lang);
    case 'invalid_format':
      return badFormat(issue, w, context);
    case 'invalid_value': {
      const values = issue.values ?? [];
      if (values.length === 0) return w.notAllowed;
      return w.oneOf(values.map((v) => valueWord(v, w, lang, context.valueLabels)).join(w.listSeparator));
    }
    case 'not_multiple_of':
      return issue.divisor === undefined || issue.divisor === 1 ? w.wholeNumber : w.multipleOf(formatNumber(lang, issue.divisor));
    case 'unrecognized_keys':
      return w.unexpected((issue.keys ?? []).join(w.listSeparator) || '—');
    case 'invalid_union':
      return w.notAccepted;
    default:
      // A rule of the route's own (custom) or a check the service words itself: its text is English
      // and for developers, so the person gets the plain fact.
      return w.notAccepted;
  }
}

/** The field a path names, for a person: its last named segment, words apart ("body.dicData.bonus_malus" → "bonus malus"). */
export function fieldNameOf(path: string): string {
  const named = path.split('.').filter((part) => part !== '' && !/^\d+$/.test(part) && !WHERE.has(part));
  return (named.at(-1) ?? '').replace(/_/g, ' ');
}

/** The parts of a path that say where the value came from, not which field it is. */
const WHERE = new Set(['body', 'query', 'path', 'header', 'arguments', 'dicData']);

/**
 * The hint beside an <input type="date">: the order the browser's picker shows, in the console's
 * letters ("jj/mm/aaaa", "dd/mm/yyyy", "mm/dd/yyyy"). The picker follows the browser's locale, not
 * the console's language, so the order comes from the browser.
 */
export function datePickerPattern(lang: Lang, browserLocale: string): string {
  const letters = lang === 'fr' ? { day: 'jj', month: 'mm', year: 'aaaa' } : { day: 'dd', month: 'mm', year: 'yyyy' };
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat(browserLocale, { day: '2-digit', month: '2-digit', year: 'numeric' }).formatToParts(
      new Date(Date.UTC(2006, 0, 2)),
    );
  } catch {
    parts = new Intl.DateTimeFormat(LOCALES[lang], { day: '2-digit', month: '2-digit', year: 'numeric' }).formatToParts(
      new Date(Date.UTC(2006, 0, 2)),
    );
  }
  return parts.map((p) => (p.type === 'day' || p.type === 'month' || p.type === 'year' ? letters[p.type] : p.value)).join('');
}
