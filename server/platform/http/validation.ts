import type { z } from 'zod';
import type { ValidationIssue } from '../../../shared/errors.js';
import { ApiError } from '../../errors.js';

type ZodIssue = z.core.$ZodIssue;

/** The JSON kind of a value, as zod names types (undefined for a missing field). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The value at a path of the input, or undefined when the path leads nowhere (a missing field). */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A limit as JSON can carry it: bigints become numbers, dates their time. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.getTime();
  return undefined;
}

function isJsonPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * The parameters a client needs to word the problem itself: the limits broken, the values allowed,
 * the format expected. Never the value sent (it may be a password).
 */
function parametersOf(issue: ZodIssue, input: unknown): Omit<ValidationIssue, 'path' | 'message'> {
  switch (issue.code) {
    case 'invalid_type':
      return { code: issue.code, expected: issue.expected, received: kindOf(valueAt(input, issue.path)) };
    case 'too_small':
      return { code: issue.code, origin: issue.origin, minimum: asNumber(issue.minimum), inclusive: issue.inclusive ?? true };
    case 'too_big':
      return { code: issue.code, origin: issue.origin, maximum: asNumber(issue.maximum), inclusive: issue.inclusive ?? true };
    case 'invalid_format':
      // A built-in format's pattern is zod's own business; a regex's is the rule the field follows.
      return {
        code: issue.code,
        format: issue.format,
        ...(issue.format === 'regex' && issue.pattern !== undefined ? { pattern: issue.pattern } : {}),
      };
    case 'invalid_value':
      return { code: issue.code, values: issue.values.filter(isJsonPrimitive) };
    case 'not_multiple_of':
      return { code: issue.code, divisor: asNumber(issue.divisor) };
    case 'unrecognized_keys':
      return { code: issue.code, keys: issue.keys };
    default:
      return { code: issue.code };
  }
}

/**
 * zod issues as {path, message, code, …parameters}, the path prefixed by where the value came from
 * (body, query, path, or a deeper prefix such as body.dicData). `input` is what was validated: it
 * tells a missing field (received undefined) from one of the wrong type.
 */
export function toValidationIssues(error: z.ZodError, part?: string, input?: unknown): ValidationIssue[] {
  return error.issues.map((issue) => {
    const parameters = parametersOf(issue, input);
    return {
      path: [...(part ? [part] : []), ...issue.path.map(String)].join('.'),
      message: issue.message,
      ...(Object.fromEntries(Object.entries(parameters).filter(([, v]) => v !== undefined)) as typeof parameters),
    };
  });
}

/** The one 400 validation_error: a summary for people, one detail per problem for programs. */
export function validationError(issues: ValidationIssue[]): ApiError {
  const summary = issues
    .slice(0, 5)
    .map((i) => `${i.path}: ${i.message}`)
    .join('; ');
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new ApiError('validation_error', `The request is invalid: ${summary}${more}.`, issues);
}
