/**
 * CSV as spreadsheets write it: RFC 4180 quoting (a quoted field may hold the separator, quotes
 * doubled, and line breaks), any of CRLF, LF or CR between records, and a separator guessed from
 * the header line among ';' (French Excel), ',' and tab.
 */

const CSV_SEPARATORS = [';', ',', '\t'] as const;
export type CsvSeparator = (typeof CSV_SEPARATORS)[number];

/** The separator the header line uses most, outside quotes; ';' when it has none (a one-column file). */
export function guessSeparator(text: string): CsvSeparator {
  const counts = new Map<CsvSeparator, number>(CSV_SEPARATORS.map((s) => [s, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char as CsvSeparator)) counts.set(char as CsvSeparator, (counts.get(char as CsvSeparator) ?? 0) + 1);
  }
  let best: CsvSeparator = ';';
  for (const separator of CSV_SEPARATORS) if ((counts.get(separator) ?? 0) > (counts.get(best) ?? 0)) best = separator;
  return best;
}

/** Parse state: the records so far, the current record and field, and whether inside quotes. */
interface Cursor {
  records: string[][];
  record: string[];
  field: string;
  quoted: boolean;
}

function endField(cursor: Cursor): void {
  cursor.record.push(cursor.field);
  cursor.field = '';
}

function endRecord(cursor: Cursor): void {
  endField(cursor);
  cursor.records.push(cursor.record);
  cursor.record = [];
}

/** Every record of the text, each a list of fields; blank lines stay (as one empty field) so that record numbers match the sheet's rows. */
export function parseCsv(text: string, separator: CsvSeparator): string[][] {
  const cursor: Cursor = { records: [], record: [], field: '', quoted: false };
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (cursor.quoted) {
      if (char !== '"') cursor.field += char;
      else if (text[i + 1] === '"') {
        cursor.field += '"';
        i++;
      } else cursor.quoted = false;
    } else if (char === '"' && cursor.field === '') cursor.quoted = true;
    else if (char === separator) endField(cursor);
    else if (char === '\r' || char === '\n') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      endRecord(cursor);
    } else cursor.field += char;
  }
  // A last record without its line break still counts; a final line break adds none.
  if (cursor.field !== '' || cursor.record.length > 0 || cursor.quoted) endRecord(cursor);
  return cursor.records;
}
