import { openZip } from './zip.js';

/**
 * The first sheet of an Excel workbook (.xlsx) as rows of text: shared strings and inline strings
 * as written, numbers as written (an integer written in exponent form, such as a SIRET, in full),
 * booleans as TRUE/FALSE. Styles are not read, so a date is its serial number (the rows module
 * turns a birth date's serial into a date).
 */

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    return ENTITIES[name] ?? whole;
  });
}

/** The text of the <t> elements inside some XML (a shared string's runs), phonetic guides left out. */
function textOf(xml: string): string {
  const withoutPhonetics = xml.replace(/<rPh\b[\s\S]*?<\/rPh>/g, '');
  // An empty <t/> is no opening tag: it must not reach over to the next run's </t>.
  return [...withoutPhonetics.matchAll(/<t(?:\s[^>]*)?(?<!\/)>([\s\S]*?)<\/t>/g)].map((m) => unescapeXml(m[1] ?? '')).join('');
}

function sharedStrings(xml: string | undefined): string[] {
  if (xml === undefined) return [];
  return [...xml.matchAll(/<si\b[^>]*>([\s\S]*?)<\/si>|<si\b[^>]*\/>/g)].map((m) => textOf(m[1] ?? ''));
}

function attribute(attributes: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1];
}

/** Where the workbook's first sheet is: its relationship's target, xl/worksheets/sheet1.xml when unsaid. */
function firstSheetPath(workbook: string | undefined, relationships: string | undefined): string {
  const fallback = 'xl/worksheets/sheet1.xml';
  const sheet = workbook && /<sheet\b([^>]*)\/?>/.exec(workbook)?.[1];
  const id = sheet && attribute(sheet, 'r:id');
  if (!id || !relationships) return fallback;
  for (const m of relationships.matchAll(/<Relationship\b([^>]*)\/?>/g)) {
    const attributes = m[1] ?? '';
    if (attribute(attributes, 'Id') !== id) continue;
    const target = attribute(attributes, 'Target') ?? '';
    return target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  }
  return fallback;
}

/** A1 → 0, AB7 → 27. */
function columnIndex(reference: string | undefined, fallback: number): number {
  const letters = reference ? /^[A-Z]+/.exec(reference)?.[0] : undefined;
  if (!letters) return fallback;
  return [...letters].reduce((n, letter) => n * 26 + letter.charCodeAt(0) - 64, 0) - 1;
}

/** A number as a person wrote it: an integer in exponent form (7.3282932000074E+13) in full. */
function numberText(value: string): string {
  if (!/e/i.test(value)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? String(n) : value;
}

function cellText(attributes: string, body: string, strings: readonly string[]): string {
  const type = attribute(attributes, 't');
  if (type === 'inlineStr') return textOf(body);
  const value = unescapeXml(/<v\b[^>]*>([\s\S]*?)<\/v>/.exec(body)?.[1] ?? '');
  if (type === 's') return strings[Number(value)] ?? '';
  if (type === 'b') return value === '1' ? 'TRUE' : 'FALSE';
  if (type === 'str' || type === 'e') return value;
  return numberText(value);
}

/** One sheet's rows, each at its row number (1-based, as Excel shows it); a missing row or cell is empty. */
function sheetRows(xml: string, strings: readonly string[]): Map<number, string[]> {
  const rows = new Map<number, string[]>();
  let previous = 0;
  for (const m of xml.matchAll(/<row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/row>)/g)) {
    const number = Number(attribute(m[1] ?? '', 'r') ?? previous + 1);
    previous = number;
    const cells: string[] = [];
    for (const c of (m[2] ?? '').matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const attributes = c[1] ?? '';
      const index = columnIndex(attribute(attributes, 'r'), cells.length);
      while (cells.length < index) cells.push('');
      cells[index] = cellText(attributes, c[2] ?? '', strings);
    }
    rows.set(number, cells);
  }
  return rows;
}

/**
 * The first sheet's rows from row 1 to its last, each a list of cells (empty rows as one empty
 * cell), at most `maxRows` of them (the caller refuses a sheet that reaches it).
 */
export function readXlsx(bytes: Buffer, maxRows: number): string[][] {
  const zip = openZip(bytes);
  const sheet = zip.file(firstSheetPath(zip.file('xl/workbook.xml'), zip.file('xl/_rels/workbook.xml.rels')));
  if (sheet === undefined) throw new Error('the workbook has no sheet');
  const rows = sheetRows(sheet, sharedStrings(zip.file('xl/sharedStrings.xml')));
  const last = Math.min(
    maxRows,
    [...rows.keys()].reduce((a, b) => Math.max(a, b), 0),
  );
  return Array.from({ length: last }, (_, i) => rows.get(i + 1) ?? ['']);
}
