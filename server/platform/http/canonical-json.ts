/**
 * JSON with sorted keys, so that the same value hashes the same whatever its key order: the text
 * JSON.stringify would write for a copy whose keys were sorted (by UTF-16 code units), undefined
 * members left out. Written with loops and string appends: Object.entries, filter, sort, map and
 * join would build arrays at every level, a visible share of an idempotent create's work.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = '';
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member !== undefined) text += `,${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `{${text.slice(1)}}`;
}
