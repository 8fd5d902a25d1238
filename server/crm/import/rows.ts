import type { z } from 'zod';
import { ADDRESS_IMPORT_FIELDS, type ImportBody, type ImportColumn, type ImportField } from '../../../shared/console-import.js';
import { CLIENT_CONTACT_FIELDS, createClientBody, type CreateClientInput } from '../../../shared/crm.js';
import type { ValidationIssue } from '../../../shared/errors.js';
import { toValidationIssues } from '../../platform/http/validation.js';
import { countryOf, dateOf, phoneOf, postcodeOf, typeOf } from './columns.js';
import type { SheetRow } from './file.js';

/**
 * Each row of the file as the body of a client's creation, checked by the API's own rules
 * (createClientBody): a valid row is the input the CRM creates, a refused one its problems, each
 * with the field of the file it is about and the issue's code and parameters.
 */

export interface Problem {
  field: ImportField;
  issue: ValidationIssue;
}
export type CheckedRow = { row: number; input: CreateClientInput } | { row: number; problems: Problem[] };

type Cells = Partial<Record<ImportField, string>>;

/** The non-empty cells of a row by the field their column fills. */
function cellsOf(row: SheetRow, columns: readonly ImportColumn[]): Cells {
  const cells: Cells = {};
  columns.forEach((column, i) => {
    const value = row.cells[i] ?? '';
    if (column !== 'ignore' && value !== '') cells[column] = value;
  });
  return cells;
}

/** The address when the row has a street, a postcode or a city; a country alone is no address. */
function addressOf(cells: Cells): Partial<Record<string, string>> | undefined {
  if (cells.address_line1 === undefined && cells.postcode === undefined && cells.city === undefined) return undefined;
  const country = cells.country === undefined ? undefined : countryOf(cells.country);
  const address = {
    line1: cells.address_line1,
    line2: cells.address_line2,
    postcode: cells.postcode === undefined ? undefined : postcodeOf(cells.postcode, country),
    city: cells.city,
    country,
  };
  // A key given as undefined would reach the client's stored address: only what the row gives.
  return definedOnly(address);
}

function definedOnly<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function typeFor(cells: Cells, defaultType: ImportBody['default_type']): string | undefined {
  if (cells.type !== undefined) return typeOf(cells.type) ?? cells.type;
  if (defaultType !== 'auto') return defaultType;
  return cells.company_name !== undefined || cells.siret !== undefined ? 'company' : 'person';
}

/** The creation body of a row, with undefined for what the row does not give. */
function bodyOf(cells: Cells, defaultType: ImportBody['default_type']): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: typeFor(cells, defaultType),
    last_name: cells.last_name,
    first_name: cells.first_name,
    company_name: cells.company_name,
    siret: cells.siret,
    email: cells.email,
    phone: cells.phone === undefined ? undefined : phoneOf(cells.phone),
    address: addressOf(cells),
    birth_date: cells.birth_date === undefined ? undefined : dateOf(cells.birth_date),
  };
  return definedOnly(body);
}

/** The field of the file a problem's path names: body.address.city → city. */
function fieldOf(path: string): ImportField {
  const [first, second] = path.split('.');
  if (first === 'address') return Object.entries(ADDRESS_IMPORT_FIELDS).find(([part]) => part === second)?.[1] ?? 'address_line1';
  return first === 'type' || CLIENT_CONTACT_FIELDS.some((field) => field === first) ? (first as ImportField) : 'last_name';
}

/**
 * A rule of the API's own (custom) as a code the console words: the name a type requires is a
 * missing field, a SIRET without its checksum a value not in the expected form.
 */
function wordable(issue: ValidationIssue, field: ImportField): ValidationIssue {
  if (issue.code !== 'custom') return issue;
  if (field === 'last_name' || field === 'company_name')
    return { path: issue.path, message: issue.message, code: 'invalid_type', expected: 'string', received: 'undefined' };
  if (field === 'siret') return { path: issue.path, message: issue.message, code: 'invalid_format', format: 'siret' };
  return issue;
}

function problemsOf(error: z.ZodError, body: unknown): Problem[] {
  return toValidationIssues(error, undefined, body).map((issue) => {
    const field = fieldOf(issue.path);
    return { field, issue: wordable(issue, field) };
  });
}

/** Every row checked, in the file's order. */
export function checkRows(
  rows: readonly SheetRow[],
  columns: readonly ImportColumn[],
  defaultType: ImportBody['default_type'],
): CheckedRow[] {
  return rows.map((row) => {
    const body = bodyOf(cellsOf(row, columns), defaultType);
    const parsed = createClientBody.safeParse(body);
    return parsed.success ? { row: row.row, input: parsed.data } : { row: row.row, problems: problemsOf(parsed.error, body) };
  });
}
