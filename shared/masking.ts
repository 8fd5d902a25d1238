/**
 * Personal-data masking, applied to webhook payloads and MCP tool results while a cabinet has not
 * enabled LLM data sharing (part 6.4, last line). Fields are recognised by name wherever they sit:
 * names, email, phone, birth date, every line of an address, and the SIRET of an individual
 * entrepreneur (a SIRET next to no company name). Company names, amounts and ids stay clear.
 */
export const PERSONAL_FIELDS = ['last_name', 'first_name', 'email', 'phone', 'birth_date', 'address'] as const;

/**
 * Insurer forms (dicData) name people in their own words: insured_name, driver_birth_date,
 * holder_email. Any key ending in one of these is personal too; company_name stays clear.
 */
const PERSONAL_SUFFIX = /_(name|birth_date|email|phone|address)$/;

function isPersonalKey(key: string): boolean {
  return (PERSONAL_FIELDS as readonly string[]).includes(key) || (key !== 'company_name' && PERSONAL_SUFFIX.test(key));
}

export function maskValue(value: string): string {
  return value.length === 0 ? value : `${value[0]}***`;
}

function maskDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskValue(value);
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, k === 'country' ? v : maskDeep(v)]));
  }
  return value;
}

export function maskPersonalData<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => maskPersonalData(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  const individual = !('company_name' in object) || object.company_name === null || object.company_name === '';
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(object)) {
    if (isPersonalKey(key)) out[key] = maskDeep(field);
    else if (key === 'siret' && individual && typeof field === 'string') out[key] = maskValue(field);
    else out[key] = maskPersonalData(field);
  }
  return out as T;
}
