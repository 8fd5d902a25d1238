import { z } from 'zod';
import { CLIENT_CONTACT_FIELDS, CLIENT_TYPES, clientSchema, type ClientAddressPart, type ClientContactField } from './crm.js';
import { defineEndpoint } from './endpoint.js';
import { validationIssueSchema } from './errors.js';

/**
 * Importing clients from a spreadsheet in the console: the file is read and checked on the server
 * (one reader for CSV and .xlsx), previewed with each row's problems, then imported: the valid
 * rows created in one transaction, none of them if anything fails.
 */

/** The largest file read, and the most rows (the header aside) it may hold. */
export const IMPORT_MAX_BYTES = 5 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 10_000;
/** Rows shown as they will be created, and problems listed at most (the counts are always whole). */
export const IMPORT_PREVIEW_ROWS = 10;
export const IMPORT_LISTED_MAX = 500;

/** The column of the file for each part of a client's address (the other columns bear the client's field names). */
export const ADDRESS_IMPORT_FIELDS = {
  line1: 'address_line1',
  line2: 'address_line2',
  postcode: 'postcode',
  city: 'city',
  country: 'country',
} as const satisfies Record<ClientAddressPart, string>;

export type ImportField =
  'type' | Exclude<ClientContactField, 'address'> | (typeof ADDRESS_IMPORT_FIELDS)[keyof typeof ADDRESS_IMPORT_FIELDS];

/** What a column of the file can fill: its type, then a client's contact fields, the address spread out. */
export const IMPORT_FIELDS: readonly [ImportField, ...ImportField[]] = [
  'type',
  ...CLIENT_CONTACT_FIELDS.flatMap((field): ImportField[] => (field === 'address' ? Object.values(ADDRESS_IMPORT_FIELDS) : [field])),
];
const importColumnSchema = z.enum([...IMPORT_FIELDS, 'ignore']);
export type ImportColumn = z.infer<typeof importColumnSchema>;

/** auto: a company when the row has a company name or a SIRET, else a person. */
export const IMPORT_DEFAULT_TYPES = ['auto', ...CLIENT_TYPES] as const;

// The file in base64 is a third larger than its bytes.
const MAX_BASE64 = Math.ceil(IMPORT_MAX_BYTES / 3) * 4 + 4;
/** The route's body limit: the file in base64 and the mapping, with room for an over-size file to be told so. */
export const IMPORT_BODY_LIMIT = 2 * MAX_BASE64;

const importBody = z
  .strictObject({
    file_name: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .describe('The file’s name as the broker picked it; its kind is told from its bytes, not from the name.'),
    content_base64: z
      .string()
      .max(2 * MAX_BASE64)
      .describe(`The file, base64; at most ${IMPORT_MAX_BYTES} bytes and ${IMPORT_MAX_ROWS} rows besides the header.`),
    columns: z
      .array(importColumnSchema)
      .max(200)
      .optional()
      .describe('What each column of the file fills, in the file’s order; absent: guessed from the headers (French or English).'),
    default_type: z.enum(IMPORT_DEFAULT_TYPES).default('auto').describe('The type of a row whose type column is absent or empty.'),
  })
  .meta({ id: 'ClientImportFile' });
export type ImportBody = z.output<typeof importBody>;

const problemSchema = z.object({
  field: z.enum(IMPORT_FIELDS),
  issue: validationIssueSchema.describe('The problem, with its code and parameters to word it; message is for developers.'),
});
const refusedRowSchema = z.object({
  row: z.int().describe('The row in the sheet (the header is row 1).'),
  problems: z.array(problemSchema),
});
const alreadyThereSchema = z.object({
  row: z.int(),
  match: z.enum(['email', 'siret', 'identity']).describe('identity: same last name, first name and birth date.'),
  existing: z.enum(['cabinet', 'file']).describe('A client of the cabinet has it, or an earlier row of the file.'),
  first_row: z.int().nullable().describe('existing file: the earlier row.'),
});

const countsSchema = z.object({
  rows: z.int().describe('Rows read, the header aside and blank rows skipped.'),
  valid: z.int().describe('Rows that are created (by the import) or would be (by the preview).'),
  already_there: z.int(),
  refused: z.int(),
});

const fileSchema = z.object({
  format: z.enum(['csv', 'xlsx']),
  encoding: z.enum(['utf-8', 'utf-16', 'windows-1252']).nullable().describe('csv: how its text was read.'),
  separator: z.enum([';', ',', '\t']).nullable(),
});

const analysisSchema = z.object({
  file: fileSchema,
  columns: z.array(z.object({ header: z.string(), field: importColumnSchema, samples: z.array(z.string()).max(3) })),
  counts: countsSchema,
  refused: z.array(refusedRowSchema).describe(`At most ${IMPORT_LISTED_MAX}, in row order.`),
  already_there: z.array(alreadyThereSchema).describe(`At most ${IMPORT_LISTED_MAX}, in row order.`),
});

const FILE_ERRORS = ['import_file_unreadable', 'import_file_empty', 'import_file_too_large'] as const;
const TAG = 'Console: records';

export const previewClientImport = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/clients/import/preview',
  operationId: 'consolePreviewClientImport',
  summary: 'Read a CSV or .xlsx file of clients, and say what importing it would do (nothing is written)',
  tag: TAG,
  auth: 'console',
  body: importBody,
  responses: {
    200: {
      description: 'The columns and what fills them, the first rows as they will be created, and every row’s problems.',
      schema: analysisSchema
        .extend({
          preview: z.array(
            z.object({
              row: z.int(),
              client: clientSchema.pick({
                type: true,
                last_name: true,
                first_name: true,
                company_name: true,
                siret: true,
                email: true,
                phone: true,
                address: true,
                birth_date: true,
              }),
            }),
          ),
        })
        .meta({ id: 'ClientImportPreview' }),
    },
  },
  errors: FILE_ERRORS,
});

export const importClients = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/clients/import',
  operationId: 'consoleImportClients',
  summary: 'Import the clients of a CSV or .xlsx file: the valid rows, all in one transaction',
  description:
    'A row is already there, and not created again, when a client of the cabinet (or an earlier row) has its email (case-insensitive), ' +
    'its SIRET, or, for a person, its last name, first name and birth date (case- and accent-insensitive). Refused rows are listed with their problems.',
  tag: TAG,
  auth: 'console',
  body: importBody,
  responses: {
    200: {
      description: 'What was done: valid is the count created.',
      schema: analysisSchema.extend({ created: z.int() }).meta({ id: 'ClientImportResult' }),
    },
  },
  errors: FILE_ERRORS,
});

export const CONSOLE_IMPORT_ENDPOINTS = [previewClientImport, importClients] as const;
