import { IMPORT_LISTED_MAX, IMPORT_PREVIEW_ROWS, type ImportBody, type ImportColumn } from '../../../shared/console-import.js';
import type { CreateClientInput } from '../../../shared/crm.js';
import type { Deps } from '../../deps.js';
import { validationError } from '../../platform/http/validation.js';
import { createClients } from '../clients.js';
import * as store from '../store.js';
import { guessColumns, plain } from './columns.js';
import { readImportFile, type ReadFile } from './file.js';
import { checkRows, type Problem } from './rows.js';

/**
 * Importing a file of clients: read it, fill each client from its columns, check every row, and
 * tell the rows the cabinet has already (by email, SIRET or a person's identity) from the new
 * ones. The preview writes nothing; the import creates the new rows in one transaction.
 */

type Match = 'email' | 'siret' | 'identity';
interface AlreadyThere {
  row: number;
  match: Match;
  existing: 'cabinet' | 'file';
  first_row: number | null;
}
interface Sorted {
  valid: { row: number; input: CreateClientInput }[];
  alreadyThere: AlreadyThere[];
  refused: { row: number; problems: Problem[] }[];
}
interface Identity {
  type: string;
  email?: string | null;
  siret?: string | null;
  lastName?: string | null;
  firstName?: string | null;
  birthDate?: string | null;
}

/** The keys a client is recognised by: its email (any case), its SIRET, a person's names and birth date. */
function keysOf(client: Identity): [Match, string][] {
  const keys: [Match, string][] = [];
  if (client.email) keys.push(['email', client.email.toLowerCase()]);
  if (client.siret) keys.push(['siret', client.siret]);
  if (client.type === 'person' && client.lastName && client.firstName && client.birthDate)
    keys.push(['identity', `${plain(client.lastName)}|${plain(client.firstName)}|${client.birthDate}`]);
  return keys;
}

function cabinetKeys(deps: Pick<Deps, 'db'>, cabinetId: string): Set<string> {
  return new Set(store.clientIdentities(deps.db.orm, cabinetId).flatMap((c) => keysOf(c).map(([m, k]) => `${m}:${k}`)));
}

const identityOf = (input: CreateClientInput): Identity => ({
  type: input.type,
  email: input.email,
  siret: input.siret,
  lastName: input.last_name,
  firstName: input.first_name,
  birthDate: input.birth_date,
});

/** Sorts the file's rows: refused, already there (in the cabinet, or in an earlier row), or to create. */
function sortRows(file: ReadFile, columns: readonly ImportColumn[], body: ImportBody, known: ReadonlySet<string>): Sorted {
  const sorted: Sorted = { valid: [], alreadyThere: [], refused: [] };
  const seen = new Map<string, number>();
  for (const checked of checkRows(file.rows, columns, body.default_type)) {
    if ('problems' in checked) {
      sorted.refused.push(checked);
      continue;
    }
    const keys = keysOf(identityOf(checked.input)).map(([match, key]) => ({ match, key: `${match}:${key}` }));
    const inCabinet = keys.find(({ key }) => known.has(key));
    const inFile = keys.find(({ key }) => seen.has(key));
    if (inCabinet) sorted.alreadyThere.push({ row: checked.row, match: inCabinet.match, existing: 'cabinet', first_row: null });
    else if (inFile)
      sorted.alreadyThere.push({ row: checked.row, match: inFile.match, existing: 'file', first_row: seen.get(inFile.key) ?? null });
    else sorted.valid.push(checked);
    for (const { key } of keys) if (!seen.has(key)) seen.set(key, checked.row);
  }
  return sorted;
}

/** The broker's columns, or the guessed ones; one per column of the file, each field at most once. */
function columnsFor(file: ReadFile, body: ImportBody): ImportColumn[] {
  const width = file.rows.reduce((most, row) => Math.max(most, row.cells.length), file.header.length);
  if (body.columns === undefined) return guessColumns(file.header, width);
  if (body.columns.length !== width)
    throw validationError([{ path: 'body.columns', message: `the file has ${width} columns: give one choice per column`, code: 'custom' }]);
  const fields = body.columns.filter((column) => column !== 'ignore');
  const twice = fields.find((field, i) => fields.indexOf(field) !== i);
  if (twice) throw validationError([{ path: 'body.columns', message: `${twice} is chosen for two columns`, code: 'custom' }]);
  return body.columns;
}

/** What the broker reads of a file: its kind, its columns and what fills them, the counts, the rows listed. */
function describe(file: ReadFile, columns: readonly ImportColumn[], sorted: Sorted) {
  return {
    file: { format: file.format, encoding: file.encoding, separator: file.separator },
    columns: columns.map((field, i) => ({
      header: file.header[i] ?? '',
      field,
      samples: file.rows
        .map((row) => row.cells[i] ?? '')
        .filter((cell) => cell !== '')
        .slice(0, 3),
    })),
    counts: {
      rows: file.rows.length,
      valid: sorted.valid.length,
      already_there: sorted.alreadyThere.length,
      refused: sorted.refused.length,
    },
    refused: sorted.refused.slice(0, IMPORT_LISTED_MAX),
    already_there: sorted.alreadyThere.slice(0, IMPORT_LISTED_MAX),
  };
}

function readBody(body: ImportBody): { file: ReadFile; columns: ImportColumn[] } {
  const file = readImportFile(Buffer.from(body.content_base64, 'base64'));
  return { file, columns: columnsFor(file, body) };
}

/** What importing the file would do, and its first rows as they would be created; writes nothing. */
export function previewImport(deps: Pick<Deps, 'db'>, cabinetId: string, body: ImportBody) {
  const { file, columns } = readBody(body);
  const sorted = sortRows(file, columns, body, cabinetKeys(deps, cabinetId));
  const preview = sorted.valid.slice(0, IMPORT_PREVIEW_ROWS).map(({ row, input }) => ({
    row,
    client: {
      type: input.type,
      last_name: input.last_name ?? null,
      first_name: input.first_name ?? null,
      company_name: input.company_name ?? null,
      siret: input.siret ?? null,
      email: input.email ?? null,
      phone: input.phone ?? null,
      address: input.address ? { line2: null, ...input.address } : null,
      birth_date: input.birth_date ?? null,
    },
  }));
  return { ...describe(file, columns, sorted), preview };
}

/**
 * Imports the file: its new valid rows are created in one IMMEDIATE transaction, so that the rows
 * the cabinet has are read and the new ones written with no other write between (a second import
 * of the same file waits, then finds them all there). An error anywhere creates none.
 */
export function importClients(deps: Deps, cabinetId: string, body: ImportBody) {
  const { file, columns } = readBody(body);
  return deps.db.immediateTransaction(() => {
    const sorted = sortRows(file, columns, body, cabinetKeys(deps, cabinetId));
    const created = createClients(
      deps,
      cabinetId,
      sorted.valid.map(({ input }) => input),
    );
    return { ...describe(file, columns, sorted), created: created.length };
  });
}
