import { describe, expect, it } from 'vitest';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../shared/console-import.js';
import { ApiError } from '../../server/errors.js';
import { dateOf, guessColumns } from '../../server/crm/import/columns.js';
import { readImportFile } from '../../server/crm/import/file.js';
import { checkRows } from '../../server/crm/import/rows.js';
import { xlsx, zip } from '../helpers/xlsx.js';

/** The one reader of client files (CSV in its dialects and encodings, .xlsx), and each row checked by the API's rules. */

const utf8 = (text: string) => Buffer.from(text, 'utf8');

function refusal(bytes: Buffer): { code: string; details: unknown } {
  try {
    readImportFile(bytes);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, details: err.details };
    throw err;
  }
  throw new Error('the file was read');
}

describe('reading a CSV file', () => {
  it('reads French Excel’s CSV: semicolons, UTF-8 with its BOM, CRLF, and guesses the columns from French headers', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      utf8(
        'Nom;Prénom;Courriel;Téléphone;Code postal;Ville;Date de naissance;Raison sociale;N° SIRET;Divers\r\nDupont;Jean;jean@exemple.fr;06 12 34 56 78;69003;Lyon;15/03/1980;;;x\r\n',
      ),
    ]);
    const file = readImportFile(bytes);
    expect(file).toMatchObject({ format: 'csv', encoding: 'utf-8', separator: ';' });
    expect(file.header[0]).toBe('Nom');
    expect(file.rows).toEqual([
      { row: 2, cells: ['Dupont', 'Jean', 'jean@exemple.fr', '06 12 34 56 78', '69003', 'Lyon', '15/03/1980', '', '', 'x'] },
    ]);
    expect(guessColumns(file.header, 10)).toEqual([
      'last_name',
      'first_name',
      'email',
      'phone',
      'postcode',
      'city',
      'birth_date',
      'company_name',
      'siret',
      'ignore',
    ]);
  });

  it('reads commas and quoted fields holding commas, quotes and line breaks; row numbers are the sheet’s', () => {
    const text =
      'Last name,First name,Email,Address\n"O\'Brien, Jr",Ann,ann@example.com,"12 rue ""Haute""\nBât. B"\n\nSmith,Bob,bob@example.com,1 Main St';
    const file = readImportFile(utf8(text));
    expect(file.separator).toBe(',');
    expect(file.rows).toEqual([
      { row: 2, cells: ["O'Brien, Jr", 'Ann', 'ann@example.com', '12 rue "Haute"\nBât. B'] },
      { row: 4, cells: ['Smith', 'Bob', 'bob@example.com', '1 Main St'] },
    ]);
    expect(guessColumns(file.header, 4)).toEqual(['last_name', 'first_name', 'email', 'address_line1']);
  });

  it('reads tabs, Windows-1252 (French Excel’s "CSV (separator: semicolon)") and UTF-16 with its BOM', () => {
    const tabs = readImportFile(utf8('Nom\tPrénom\nDurand\tÉlise\n'));
    expect(tabs.separator).toBe('\t');
    expect(tabs.rows[0]?.cells).toEqual(['Durand', 'Élise']);

    // "Prénom;Société\nLefèvre;Crédit Agricole" in Windows-1252: é is 0xE9, è is 0xE8.
    const latin = Buffer.from('Pr\xe9nom;Soci\xe9t\xe9\nLef\xe8vre;Cr\xe9dit Agricole\n', 'latin1');
    const windows = readImportFile(latin);
    expect(windows).toMatchObject({ encoding: 'windows-1252', header: ['Prénom', 'Société'] });
    expect(windows.rows[0]?.cells).toEqual(['Lefèvre', 'Crédit Agricole']);
    expect(guessColumns(windows.header, 2)).toEqual(['first_name', 'company_name']);

    const utf16 = readImportFile(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Nom\tVille\r\nMartin\tNîmes\r\n', 'utf16le')]));
    expect(utf16).toMatchObject({ encoding: 'utf-16', separator: '\t', rows: [{ row: 2, cells: ['Martin', 'Nîmes'] }] });
  });
});

describe('reading an Excel workbook', () => {
  it('reads the first sheet, wherever the workbook keeps it: shared and inline strings, numbers, empty cells', () => {
    const file = readImportFile(
      xlsx([
        ['Nom', 'Prénom', 'Téléphone', 'SIRET', 'Date de naissance', 'Ville'],
        ['Dupont & fils <SA>', 'inline:Zoé', 612345678, 'number:7.3282932000074E+13', 29295, ''],
        [],
        ['Martin', '', '', '', '', 'Nîmes'],
      ]),
    );
    expect(file).toMatchObject({ format: 'xlsx', encoding: null, separator: null });
    expect(file.rows).toEqual([
      { row: 2, cells: ['Dupont & fils <SA>', 'Zoé', '612345678', '73282932000074', '29295'] },
      { row: 4, cells: ['Martin', '', '', '', '', 'Nîmes'] },
    ]);
    // A number Excel took for a number is turned back: the phone's leading 0, the birth date's serial.
    const [first] = checkRows(file.rows, ['last_name', 'first_name', 'phone', 'ignore', 'birth_date', 'city'], 'auto');
    expect(first).toMatchObject({
      row: 2,
      input: { type: 'person', last_name: 'Dupont & fils <SA>', first_name: 'Zoé', phone: '0612345678', birth_date: '1980-03-15' },
    });
  });

  it('reads rich text (runs, an empty run, phonetic guides) and entities in shared strings', () => {
    const ns = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const file = readImportFile(
      zip({
        'xl/worksheets/sheet1.xml': `<worksheet xmlns="${ns}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="C2" t="inlineStr"><is><t>&#201;lise &amp; fils</t></is></c></row></sheetData></worksheet>`,
        'xl/sharedStrings.xml': `<sst xmlns="${ns}"><si><t>Nom</t></si><si><r><rPr><b/></rPr><t/></r><r><t xml:space="preserve">Du</t></r><r><t>pont</t></r><rPh sb="0" eb="1"><t>デュポン</t></rPh></si></sst>`,
      }),
    );
    expect(file.rows).toEqual([{ row: 2, cells: ['Dupont', '', 'Élise & fils'] }]);
  });

  it('refuses a zip that is not a workbook, and an older Excel file (.xls)', () => {
    expect(refusal(zip({ 'readme.txt': 'hello' }))).toEqual({ code: 'import_file_unreadable', details: { reason: 'zip_not_xlsx' } });
    expect(refusal(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]))).toMatchObject({ details: { reason: 'xls' } });
  });
});

describe('files that cannot be imported', () => {
  it('refuses an empty file, a header alone, a binary file, and files over the limits', () => {
    expect(refusal(Buffer.alloc(0)).code).toBe('import_file_empty');
    expect(refusal(utf8('Nom;Prénom\r\n;\r\n\r\n')).code).toBe('import_file_empty');
    expect(refusal(Buffer.from('%PDF-1.7\n\x00\x01\x02binary', 'latin1'))).toMatchObject({
      code: 'import_file_unreadable',
      details: { reason: 'binary' },
    });
    const limits = { max_bytes: IMPORT_MAX_BYTES, max_rows: IMPORT_MAX_ROWS };
    expect(refusal(Buffer.alloc(IMPORT_MAX_BYTES + 1, 'a'))).toEqual({ code: 'import_file_too_large', details: limits });
    const rows = Array.from({ length: IMPORT_MAX_ROWS + 1 }, (_, i) => `Nom${i}`).join('\n');
    expect(refusal(utf8(`Nom\n${rows}`))).toEqual({ code: 'import_file_too_large', details: limits });
    expect(readImportFile(utf8(`Nom\n${rows.split('\n').slice(1).join('\n')}`)).rows).toHaveLength(IMPORT_MAX_ROWS);
  });
});

describe('each row checked by the API’s rules', () => {
  it('gives each problem its field and a code the console words (never only the validator’s text)', () => {
    const header = ['Type', 'Nom', 'Raison sociale', 'SIRET', 'Email', 'Code postal', 'Ville', 'Adresse'];
    const rows = [
      ['Particulier', 'Dupont', '', '', 'jean@exemple.fr', '1000', 'Bourg', '1 rue Haute'],
      ['Entreprise', '', '', '12345678901234', 'pas-un-email', '', '', ''],
      ['Client VIP', 'Durand', '', '', '', '', 'Lyon', ''],
    ].map((cells, i) => ({ row: i + 2, cells }));
    const [good, bad, strange] = checkRows(rows, guessColumns(header, 8), 'auto');
    expect(good).toMatchObject({
      input: { type: 'person', address: { line1: '1 rue Haute', postcode: '01000', city: 'Bourg', country: 'FR' } },
    });
    expect(bad).toMatchObject({ row: 3 });
    const problems = bad && 'problems' in bad ? bad.problems : [];
    expect(problems.map((p) => [p.field, p.issue.code, p.issue.format ?? p.issue.received])).toEqual([
      ['siret', 'invalid_format', 'siret'],
      ['email', 'invalid_format', 'email'],
      ['company_name', 'invalid_type', 'undefined'],
    ]);
    const strangeProblems = strange && 'problems' in strange ? strange.problems : [];
    expect(strangeProblems.map((p) => [p.field, p.issue.code])).toEqual([
      ['type', 'invalid_value'],
      ['address_line1', 'invalid_type'],
      ['postcode', 'invalid_type'],
    ]);
  });

  it('reads dates as a French spreadsheet writes them', () => {
    expect(dateOf('15/03/1980')).toBe('1980-03-15');
    expect(dateOf('5.3.1980')).toBe('1980-03-05');
    expect(dateOf('1980-03-15 00:00:00')).toBe('1980-03-15');
    expect(dateOf('29295')).toBe('1980-03-15');
    expect(dateOf('mars 1980')).toBe('mars 1980');
  });
});
