import type { RiskSchemaDocument } from '../../../../shared/comparaisons.js';
import type { ValidationIssue } from '../../../../shared/errors.js';
import type { Lang } from '../../i18n.js';
import type { FieldSpec, FormValues } from '../automation/schemaForm.js';

/**
 * The Compare page's form, built from a line's common risk model (getConsoleRiskSchema): one
 * group per object of the schema (the driver, the vehicle…), a field per property, labelled in the
 * console's language; a field's key is its path in the risk ("vehicule.marque").
 */
export interface RiskGroup {
  /** The group's path in the risk; '' for the fields at the top (the level of cover). */
  key: string;
  label: string;
  fields: FieldSpec[];
}

type JsonSchema = Record<string, unknown>;

const asSchema = (value: unknown): JsonSchema => (typeof value === 'object' && value !== null ? (value as JsonSchema) : {});
const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);
const stringRecord = (value: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(asSchema(value)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

function labelOf(schema: JsonSchema, lang: Lang, fallback: string): string {
  const label = lang === 'en' ? (schema['x-title-en'] ?? schema.title) : schema.title;
  return typeof label === 'string' ? label : fallback;
}

function fieldOf(key: string, schema: JsonSchema, required: boolean, lang: Lang, example: unknown): FieldSpec {
  const options = Array.isArray(schema.enum) ? schema.enum.map(String) : [];
  const kind: FieldSpec['kind'] =
    options.length > 0
      ? 'enum'
      : schema.type === 'boolean'
        ? 'boolean'
        : schema.type === 'integer'
          ? 'integer'
          : schema.type === 'number'
            ? 'number'
            : schema.format === 'date'
              ? 'date'
              : 'text';
  return {
    key,
    label: labelOf(schema, lang, key),
    required,
    kind,
    options,
    optionLabels: stringRecord(lang === 'en' ? (schema['x-enum-labels-en'] ?? schema['x-enum-labels']) : schema['x-enum-labels']),
    example,
    min: numberOrUndefined(schema.minimum),
    max: numberOrUndefined(schema.maximum),
    minLength: numberOrUndefined(schema.minLength),
    maxLength: numberOrUndefined(schema.maxLength),
    pattern: typeof schema.pattern === 'string' ? schema.pattern : undefined,
    initial: kind === 'boolean' ? false : '',
  };
}

/** The groups of the form, in the schema's order; the top-level choices gather in a last group. */
export function riskGroups(doc: Pick<RiskSchemaDocument, 'json_schema' | 'example'>, lang: Lang, topLabel: string): RiskGroup[] {
  const root = asSchema(doc.json_schema);
  const requiredAtTop = new Set(Array.isArray(root.required) ? root.required.map(String) : []);
  const groups: RiskGroup[] = [];
  const top: FieldSpec[] = [];
  for (const [key, raw] of Object.entries(asSchema(root.properties))) {
    const schema = asSchema(raw);
    const exampleOf = asSchema(doc.example[key]);
    if (schema.type !== 'object') {
      top.push(fieldOf(key, schema, requiredAtTop.has(key), lang, doc.example[key]));
      continue;
    }
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    groups.push({
      key,
      label: labelOf(schema, lang, key),
      fields: Object.entries(asSchema(schema.properties)).map(([name, inner]) =>
        fieldOf(`${key}.${name}`, asSchema(inner), required.has(name), lang, exampleOf[name]),
      ),
    });
  }
  if (top.length > 0) groups.push({ key: '', label: topLabel, fields: top });
  return groups;
}

/** A value typed in a field, as the risk carries it: numbers as numbers, an empty field left out. */
function riskValue(field: FieldSpec, value: string | boolean | undefined): unknown {
  if (field.kind === 'boolean') return value === true ? true : undefined;
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') return undefined;
  if (field.kind !== 'number' && field.kind !== 'integer') return text;
  const n = Number(text.replace(',', '.'));
  return Number.isFinite(n) ? n : text;
}

/** The risk to send: each group an object of its filled fields (what is left out, the service names as missing). */
export function toRisk(groups: readonly RiskGroup[], values: FormValues): Record<string, unknown> {
  const risk: Record<string, unknown> = {};
  for (const group of groups) {
    const target: Record<string, unknown> = group.key === '' ? risk : {};
    for (const field of group.fields) {
      const value = riskValue(field, values[field.key]);
      if (value !== undefined) target[field.key.slice(group.key === '' ? 0 : group.key.length + 1)] = value;
    }
    if (group.key !== '') risk[group.key] = target;
  }
  return risk;
}

/**
 * A 400's problems by field key ("vehicule.marque", from paths like body.risque.vehicule.marque);
 * an object left out altogether is one problem of each of its required fields; '' for the rest.
 */
export function riskIssuesByField(details: unknown, groups: readonly RiskGroup[]): Record<string, ValidationIssue[]> {
  const out: Record<string, ValidationIssue[]> = {};
  if (!Array.isArray(details)) return out;
  const keys = new Set(groups.flatMap((g) => g.fields.map((f) => f.key)));
  for (const item of details) {
    const issue = asSchema(item) as Partial<ValidationIssue>;
    if (typeof issue.path !== 'string' || typeof issue.message !== 'string') continue;
    const parts = issue.path.split('.');
    const key = parts[0] === 'body' && parts[1] === 'risque' ? parts.slice(2).join('.') : '';
    const group = groups.find((g) => g.key !== '' && g.key === key);
    if (group) for (const f of group.fields.filter((f) => f.required)) (out[f.key] ??= []).push(issue as ValidationIssue);
    else (out[keys.has(key) ? key : ''] ??= []).push(issue as ValidationIssue);
  }
  return out;
}
