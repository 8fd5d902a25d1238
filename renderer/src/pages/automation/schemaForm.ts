import type { ProductSchemaDocument } from '../../../../shared/products.js';
import type { ValidationIssue } from '../../../../shared/errors.js';

/**
 * The form a product's JSON Schema (getConsoleProductSchema) describes: one field per
 * property, in the schema's order, with the label the server gives (the field's title or
 * description), a required mark, and an input that suits its type.
 */
type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'date' | 'datetime';

export interface FieldSpec {
  key: string;
  label: string;
  required: boolean;
  kind: FieldKind;
  options: string[];
  /** value → label for a choice of codes (the product's enum_labels): shown, while the value is sent. */
  optionLabels: Record<string, string>;
  /** The product's example value for this field, quoted when a value is not in the expected form. */
  example?: unknown;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  initial: string | boolean;
}

type JsonSchema = Record<string, unknown>;

function asSchema(value: unknown): JsonSchema {
  return typeof value === 'object' && value !== null ? (value as JsonSchema) : {};
}

/** The non-null branch of anyOf/oneOf (a nullable or optional wrapper), else the schema itself. */
function unwrap(schema: JsonSchema): JsonSchema {
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (!Array.isArray(branches)) return schema;
  const useful = branches.map(asSchema).filter((b) => b.type !== 'null');
  return useful.length === 1 ? { ...schema, ...useful[0] } : schema;
}

function typeOf(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return type.find((t) => t !== 'null') as string | undefined;
  return typeof type === 'string' ? type : undefined;
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

export function fieldsOf(doc: ProductSchemaDocument): FieldSpec[] {
  const properties = asSchema(doc.json_schema.properties);
  const required = new Set(doc.required);
  return Object.entries(properties).map(([key, raw]) => {
    const schema = unwrap(asSchema(raw));
    const type = typeOf(schema);
    const options = Array.isArray(schema.enum) ? schema.enum.map(String) : schema.const !== undefined ? [String(schema.const)] : [];
    let kind: FieldKind;
    if (options.length > 0) kind = 'enum';
    else if (type === 'boolean') kind = 'boolean';
    else if (type === 'integer') kind = 'integer';
    else if (type === 'number') kind = 'number';
    else if (schema.format === 'date') kind = 'date';
    else if (schema.format === 'date-time') kind = 'datetime';
    else kind = 'text';
    const fallback = kind === 'boolean' ? false : '';
    const initial = schema.default === undefined ? fallback : kind === 'boolean' ? schema.default === true : String(schema.default);
    return {
      key,
      label:
        doc.labels[key] ??
        (typeof schema.title === 'string' ? schema.title : typeof schema.description === 'string' ? schema.description : key),
      required: required.has(key),
      kind,
      options,
      optionLabels: doc.enum_labels[key] ?? {},
      example: doc.example[key],
      min: numberOrUndefined(schema.minimum),
      max: numberOrUndefined(schema.maximum),
      minLength: numberOrUndefined(schema.minLength),
      maxLength: numberOrUndefined(schema.maxLength),
      pattern: typeof schema.pattern === 'string' ? schema.pattern : undefined,
      initial,
    };
  });
}

export type FormValues = Record<string, string | boolean>;

export function initialValues(fields: readonly FieldSpec[]): FormValues {
  return Object.fromEntries(fields.map((f) => [f.key, f.initial]));
}

/**
 * The dicData to send: empty fields left out (the server names them as missing), numbers as
 * numbers; what does not read as a number is sent as typed, for the server to call invalid.
 */
export function toDicData(fields: readonly FieldSpec[], values: FormValues): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.key];
    if (field.kind === 'boolean') {
      data[field.key] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (text === '') continue;
    if (field.kind === 'number' || field.kind === 'integer') {
      const n = Number(text.replace(',', '.'));
      data[field.key] = Number.isFinite(n) ? n : text;
    } else if (field.kind === 'datetime') {
      const ms = Date.parse(text);
      data[field.key] = Number.isNaN(ms) ? text : new Date(ms).toISOString();
    } else {
      data[field.key] = text;
    }
  }
  return data;
}

/** Per field, the problems a 400 validation_error listed (paths like body.dicData.postcode); '' for the rest. */
export function issuesByField(details: unknown): Record<string, ValidationIssue[]> {
  const out: Record<string, ValidationIssue[]> = {};
  if (!Array.isArray(details)) return out;
  for (const item of details) {
    if (typeof item !== 'object' || item === null) continue;
    const issue = item as ValidationIssue;
    if (typeof issue.path !== 'string' || typeof issue.message !== 'string') continue;
    const parts = issue.path.split('.');
    const key = parts[0] === 'body' && parts[1] === 'dicData' ? (parts[2] ?? '') : '';
    (out[key] ??= []).push(issue);
  }
  return out;
}
