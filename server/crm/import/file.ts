import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../../shared/console-import.js';
import { ApiError } from '../../errors.js';
import { guessSeparator, parseCsv, type CsvSeparator } from './csv.js';
import { readXlsx } from './xlsx.js';

/**
 * A file of clients as the broker's software exported it, read into a header and rows: an Excel
 * workbook (.xlsx, its first sheet) or CSV text in UTF-8 (with or without BOM), UTF-16 (Excel's
 * "Unicode text") or Windows-1252 (French Excel's CSV). Anything else is refused with a stable code.
 */

export interface SheetRow {
  /** The row in the sheet, the header being row 1. */
  row: number;
  cells: string[];
}

export interface ReadFile {
  format: 'csv' | 'xlsx';
  encoding: 'utf-8' | 'utf-16' | 'windows-1252' | null;
  separator: CsvSeparator | null;
  header: string[];
  rows: SheetRow[];
}

const LIMITS = { max_bytes: IMPORT_MAX_BYTES, max_rows: IMPORT_MAX_ROWS };

function unreadable(reason: string): ApiError {
  return new ApiError('import_file_unreadable', 'The file is neither a CSV file nor an Excel workbook (.xlsx).', { reason });
}

const startsWith = (bytes: Buffer, ...prefix: number[]) => prefix.every((byte, i) => bytes[i] === byte);

/** The text of a CSV file, and how it was read; undefined when the bytes are not text. */
function decodeText(bytes: Buffer): { text: string; encoding: NonNullable<ReadFile['encoding']> } | undefined {
  if (startsWith(bytes, 0xff, 0xfe)) return { text: new TextDecoder('utf-16le').decode(bytes.subarray(2)), encoding: 'utf-16' };
  if (startsWith(bytes, 0xfe, 0xff)) return { text: new TextDecoder('utf-16be').decode(bytes.subarray(2)), encoding: 'utf-16' };
  let decoded: { text: string; encoding: NonNullable<ReadFile['encoding']> };
  try {
    // ignoreBOM false: a UTF-8 BOM is taken off, as Excel's "CSV UTF-8" writes one.
    decoded = { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    decoded = { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
  }
  // Control characters other than tab and line breaks mean a binary file (a PDF, an image…).
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(decoded.text) ? undefined : decoded;
}

function workbookRows(bytes: Buffer): string[][] {
  try {
    return readXlsx(bytes, IMPORT_MAX_ROWS + 2);
  } catch {
    throw unreadable('zip_not_xlsx');
  }
}

const isBlank = (cells: readonly string[]) => cells.every((cell) => cell.trim() === '');

/** The header (the first row that is not blank) and the rows below it that are not blank. */
function toSheet(records: string[][]): Pick<ReadFile, 'header' | 'rows'> {
  const headerIndex = records.findIndex((cells) => !isBlank(cells));
  if (headerIndex < 0) throw new ApiError('import_file_empty', 'The file has no rows.');
  const rows = records
    .slice(headerIndex + 1)
    .map((cells, i) => ({ row: headerIndex + i + 2, cells: cells.map((cell) => cell.trim()) }))
    .filter((row) => !isBlank(row.cells));
  if (rows.length === 0) throw new ApiError('import_file_empty', 'The file has a header row and no row of data below it.');
  if (rows.length > IMPORT_MAX_ROWS) throw new ApiError('import_file_too_large', `The file has more than ${IMPORT_MAX_ROWS} rows.`, LIMITS);
  const header = (records[headerIndex] ?? []).map((cell) => cell.trim());
  return { header, rows };
}

/** Reads the file, whatever its kind; throws import_file_* for a file that cannot be imported. */
export function readImportFile(bytes: Buffer): ReadFile {
  if (bytes.length === 0) throw new ApiError('import_file_empty', 'The file is empty.');
  if (bytes.length > IMPORT_MAX_BYTES)
    throw new ApiError('import_file_too_large', `The file is larger than ${IMPORT_MAX_BYTES} bytes.`, LIMITS);
  if (startsWith(bytes, 0x50, 0x4b, 0x03, 0x04)) {
    return { format: 'xlsx', encoding: null, separator: null, ...toSheet(workbookRows(bytes)) };
  }
  if (startsWith(bytes, 0xd0, 0xcf, 0x11, 0xe0)) throw unreadable('xls');
  const decoded = decodeText(bytes);
  if (!decoded) throw unreadable('binary');
  const separator = guessSeparator(decoded.text);
  return { format: 'csv', encoding: decoded.encoding, separator, ...toSheet(parseCsv(decoded.text, separator)) };
}
