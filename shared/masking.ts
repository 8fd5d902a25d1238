import type { Client, Opportunity } from './crm.js';
import type { EventPayload, EventType } from './events.js';
import type { ToolPayloads } from './mcp.js';

/**
 * Personal-data masking, applied to webhook payloads and MCP tool results while a cabinet has not
 * enabled LLM data sharing (part 6.4, last line). PERSONAL_DATA below is the one list: for each
 * payload the service emits, the paths of its personal data and how each is hidden. Fields are
 * never recognised by their name alone, and a payload kind the list lacks is masked whole.
 */

/**
 * How a personal value is hidden:
 * - initial: every string under the path keeps its first character, then `***` ("Dupont" → "D***");
 *   numbers and booleans stay;
 * - whole: free text that may name anyone, replaced by `***`;
 * - individual_siret: as initial, but only when no company_name stands beside it (the SIRET of an
 *   individual entrepreneur names a person; a company's does not).
 */
export type Masking = 'initial' | 'whole' | 'individual_siret';

type FieldOf<T> = Extract<keyof T, string>;

/**
 * Every path into T in the table's syntax: `contact.last_name` (a field), `data[].contact.email`
 * (the field in each item of a list), `dicData.*` (every entry of a record, whatever its keys).
 */
type PayloadPath<T> = T extends readonly unknown[]
  ? never
  : T extends object
    ? { [K in FieldOf<T>]: FieldPaths<K, NonNullable<T[K]>> }[FieldOf<T>]
    : never;
type FieldPaths<K extends string, V> = V extends readonly (infer Item)[]
  ? `${K}[]` | `${K}[].${PayloadPath<NonNullable<Item>>}`
  : V extends object
    ? string extends keyof V
      ? `${K}.*`
      : K | `${K}.${PayloadPath<V>}`
    : K;

/** The personal data of a payload: a path that names no field of T is a type error. */
export type PersonalData<T> = { readonly [P in PayloadPath<T>]?: Masking };

/** Every payload that leaves the service: each webhook event's data, and each tool result. */
export type Payloads = { [T in EventType]: EventPayload<T> } & ToolPayloads;
export type PayloadKind = keyof Payloads;

const OPPORTUNITY = {
  'contact.last_name': 'initial',
  'contact.first_name': 'initial',
  'contact.email': 'initial',
  'contact.phone': 'initial',
  'contact.siret': 'individual_siret',
} as const satisfies PersonalData<Opportunity>;

const CLIENT = {
  last_name: 'initial',
  first_name: 'initial',
  email: 'initial',
  phone: 'initial',
  birth_date: 'initial',
  'address.line1': 'initial',
  'address.line2': 'initial',
  'address.postcode': 'initial',
  'address.city': 'initial',
  siret: 'individual_siret',
} as const satisfies PersonalData<Client>;

/** The same rules for each item of a page ({data, next_cursor, has_more, count}). */
function eachItem<R extends Record<string, Masking>>(rules: R): { readonly [P in FieldOf<R> as `data[].${P}`]: R[P] } {
  return Object.fromEntries(Object.entries(rules).map(([path, how]) => [`data[].${path}`, how])) as {
    [P in FieldOf<R> as `data[].${P}`]: R[P];
  };
}

/**
 * The list. Free text a robot or an insurer wrote (an MFA challenge, an error message, the
 * insurer's pending conditions) may name the client or carry a phone number: masked whole.
 * dicData's keys depend on each insurer's product (a licence plate, a policy number, a postcode,
 * a driver's name or birth date are all strings there): every string in it is masked.
 * Left clear on purpose: ids, amounts, codes, company names, the opportunity title, and whoami's
 * user, the broker the assistant acts for. A product schema's example is the insurer's, not a client's.
 */
export const PERSONAL_DATA = {
  'opportunity.created': { 'contact.last_name': 'initial', 'contact.siret': 'individual_siret' },
  'opportunity.stage_changed': {},
  'opportunity.won': {},
  'opportunity.lost': {},
  'devis.generated': {},
  'devis.failed': { reason: 'whole' },
  'devis.signed': {},
  'job.completed': { suspens: 'whole' },
  'job.failed': { 'error.message': 'whole' },
  'job.mfa_required': { challenge: 'whole' },
  'insurer.portal_changed': {},
  'contract.signed': {},
  'comparaison.completed': {},
  'client.updated': CLIENT,
  'client.erased': {},
  'webhook.test': {},
  whoami: {},
  product_list: {},
  product_schema: {},
  opportunity: OPPORTUNITY,
  opportunity_page: eachItem(OPPORTUNITY),
  client: CLIENT,
  client_page: eachItem(CLIENT),
  client_erasure: {},
  devis: { 'dicData.*': 'initial', suspens: 'whole' },
  devis_pdf_link: {},
  tarification: {},
  job: { 'result.suspens': 'whole', 'error.message': 'whole', 'mfa.challenge': 'whole' },
  risk_schema: {},
  comparison_started: {},
  comparison: { 'resultats[].error.message': 'whole' },
} as const satisfies { readonly [K in PayloadKind]: PersonalData<Payloads[K]> };

type Segment = { field: string; each: boolean } | { field: null; each: false };
interface CompiledRule {
  segments: readonly Segment[];
  how: Masking;
}

function parsePath(path: string): Segment[] {
  return path.split('.').map((part) => {
    if (part === '*') return { field: null, each: false };
    return part.endsWith('[]') ? { field: part.slice(0, -2), each: true } : { field: part, each: false };
  });
}

/** Parsed once: the table is constant. */
const COMPILED: ReadonlyMap<string, readonly CompiledRule[]> = new Map(
  Object.entries(PERSONAL_DATA).map(([kind, rules]): [string, CompiledRule[]] => [
    kind,
    Object.entries(rules).map(([path, how]) => ({ segments: parsePath(path), how })),
  ]),
);

function maskValue(value: string): string {
  return value.length === 0 ? value : `${value[0]}***`;
}

function maskText(value: string): string {
  return value.length === 0 ? value : '***';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Every string in value, however deep, through mask; numbers, booleans and nulls stay. */
function maskStrings(value: unknown, mask: (s: string) => string): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskStrings(v, mask)]));
  return value;
}

function maskField(value: unknown, how: Masking, holder: Record<string, unknown>): unknown {
  if (how === 'whole') return maskStrings(value, maskText);
  if (how === 'individual_siret' && typeof holder.company_name === 'string' && holder.company_name !== '') return value;
  return maskStrings(value, maskValue);
}

/** A copy of value with the rule applied where its path leads; absent and null fields stay as they are. */
function applyRule(value: unknown, segments: readonly Segment[], how: Masking): unknown {
  const [segment, ...rest] = segments;
  if (!segment || !isRecord(value)) return value;
  const fields = segment.field === null ? Object.keys(value) : [segment.field];
  const copy = { ...value };
  const step = (item: unknown) => (rest.length > 0 ? applyRule(item, rest, how) : maskField(item, how, value));
  for (const field of fields) {
    if (!Object.hasOwn(copy, field)) continue;
    const current = copy[field];
    copy[field] = segment.each ? (Array.isArray(current) ? current.map(step) : current) : step(current);
  }
  return copy;
}

/**
 * The payload as it may leave the service while the cabinet does not share personal data: its
 * kind's rules applied. A kind the table does not know (an event type read back from an older or
 * newer database) is masked whole rather than passed through.
 */
export function maskPersonalData<T>(kind: PayloadKind, value: T): T {
  const rules = COMPILED.get(kind);
  if (!rules) return maskStrings(value, maskText) as T;
  return rules.reduce<unknown>((masked, rule) => applyRule(masked, rule.segments, rule.how), value) as T;
}
