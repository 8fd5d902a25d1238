import { ERROR_STATUS, type ErrorCode } from '../shared/errors.js';

/**
 * The one error type the service throws on purpose. Its code maps to an HTTP status through
 * ERROR_STATUS; the error handler is the only place that writes the response body.
 */
export class ApiError extends Error {
  /** Plain field, not a getter: Fastify assigns statusCode on validation errors. */
  statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[code];
  }
}

/** Thrown by CLI commands for a wrong invocation: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A database this build must not touch: written by a newer Courtier, or not Courtier's. Nothing was changed. */
export class DatabaseVersionError extends Error {
  override name = 'DatabaseVersionError';
}
