import type { z } from 'zod';
import type { ValidationIssue } from '../../shared/errors.js';
import { ApiError } from '../errors.js';

/** zod issues as {path, message}, the path prefixed by where the value came from (body, query, path). */
export function toValidationIssues(error: z.ZodError, part?: string): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: [...(part ? [part] : []), ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
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
