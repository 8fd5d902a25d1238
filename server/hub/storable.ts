import { unsyncableTextIssues } from '../platform/http/syncable-text.js';
import { validationError } from '../platform/http/validation.js';

/**
 * Throws a validation_error naming every place (up to 20) that PostgreSQL could not store: JSON can
 * carry U+0000 and unpaired surrogates, refused here with where rather than failing as a 500.
 */
export function assertStorable(value: unknown, path: string): void {
  const issues = unsyncableTextIssues(value, path);
  if (issues.length > 0) throw validationError(issues);
}
