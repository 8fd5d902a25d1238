import type { ValidationIssue } from '../../../shared/errors.js';
import { UNSYNCABLE_TEXT } from '../../../shared/sync-rules.js';

/** An install that stored such text would hold a change no hub takes (see UNSYNCABLE_TEXT). */

/** Enough to name the places to fix, without an answer as large as a body full of them. */
const MAX_ISSUES = 20;

const VALUE_MESSAGE = 'text must not contain a NUL character (U+0000) or an unpaired surrogate: the sync cannot store it';
const KEY_MESSAGE = 'a key must not contain a NUL character (U+0000) or an unpaired surrogate: the sync cannot store it';

/**
 * Parsed JSON, query strings (objects of a null-prototype class) and forms hold the client's text;
 * a raw body (a Buffer) holds bytes, not text.
 */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value);
}

function issueAt(path: readonly string[], message: string): ValidationIssue {
  return { path: path.join('.'), message, code: 'custom' };
}

function collect(value: unknown, path: readonly string[], issues: ValidationIssue[]): void {
  if (issues.length >= MAX_ISSUES) return;
  if (typeof value === 'string') {
    if (UNSYNCABLE_TEXT.test(value)) issues.push(issueAt(path, VALUE_MESSAGE));
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => collect(item, [...path, String(i)], issues));
    return;
  }
  if (!isRecord(value)) return;
  for (const [key, item] of Object.entries(value)) {
    if (UNSYNCABLE_TEXT.test(key) && issues.length < MAX_ISSUES) issues.push(issueAt([...path, key], KEY_MESSAGE));
    collect(item, [...path, key], issues);
  }
}

/**
 * Every string of a request's input, keys included, that the sync could not store, as validation
 * issues whose path starts with `part` (body, query, path, arguments): at most 20.
 */
export function unsyncableTextIssues(input: unknown, part: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  collect(input, [part], issues);
  return issues;
}
