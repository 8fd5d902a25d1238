import type { ValidationIssue } from '../../shared/errors.js';
import { validationError } from '../http/validation.js';

/**
 * PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses an unpaired surrogate (text would
 * silently turn it into U+FFFD, changing a record's id). JSON can carry both: refused here, with
 * where, as a validation error, instead of failing in the database as a 500.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_ISSUES = 20;

function collect(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (issues.length >= MAX_ISSUES) return;
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) issues.push({ path, message: 'text with U+0000 or an unpaired surrogate cannot be stored' });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => collect(item, `${path}.${i}`, issues));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (UNSTORABLE.test(key)) issues.push({ path: `${path}.${key}`, message: 'a key with U+0000 or an unpaired surrogate cannot be stored' });
    collect(item, `${path}.${key}`, issues);
  }
}

/** Throws a validation_error naming every place (up to 20) that PostgreSQL could not store. */
export function assertStorable(value: unknown, path: string): void {
  const issues: ValidationIssue[] = [];
  collect(value, path, issues);
  if (issues.length > 0) throw validationError(issues);
}
