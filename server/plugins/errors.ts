import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.js';
import { ApiError } from '../errors.js';

/** Fastify's own client errors, mapped to our codes. */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Send the body as application/json.' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'unsupported_media_type', message: 'Send the body as application/json.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'The body is larger than 1 MiB.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The body is not valid JSON.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'invalid_json', message: 'The body does not match its Content-Length.' },
};

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const body: ErrorBody = { error: error.code, message: error.message, request_id: request.id };
  if (error.details !== undefined) body.details = error.details;
  if (error.headers) reply.headers(error.headers);
  return reply.code(ERROR_STATUS[error.code]).type('application/json; charset=utf-8').send(body);
}

export function toApiError(error: FastifyError | Error): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) return new ApiError(known.code, known.message);
  // JSON.parse failures (and secure-json-parse's prototype-poisoning refusals) arrive as 400s.
  if (fastifyError.statusCode === 400 && (error instanceof SyntaxError || /JSON|prototype|constructor/i.test(error.message))) {
    return new ApiError('invalid_json', `The body is not valid JSON: ${error.message}`);
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return new ApiError('not_found', 'No such route.');
  if (status === 413) return new ApiError('payload_too_large', 'The body is larger than 1 MiB.');
  if (status === 414) return new ApiError('uri_too_long', 'A path segment is longer than 200 characters.');
  if (status === 415) return new ApiError('unsupported_media_type', 'Send the body as application/json.');
  // Any other client error Fastify raises (a method it cannot route, a malformed URL) is ours to word.
  if (status >= 400 && status < 500) return new ApiError('bad_request', `The request could not be read: ${error.message}`);
  return undefined;
}

/**
 * Fastify's body errors worded for the route: its own body limit (a binary route takes more than
 * the app's 1 MiB of JSON) and the content type it reads.
 */
function forRoute(error: ApiError, request: FastifyRequest): ApiError {
  const binary = request.routeOptions.config?.endpoint?.bodyEncoding === 'binary';
  if (error.code === 'payload_too_large' && request.routeOptions.bodyLimit !== undefined) {
    return new ApiError('payload_too_large', `The body is larger than ${describeBytes(request.routeOptions.bodyLimit)}.`);
  }
  if (error.code === 'unsupported_media_type' && binary)
    return new ApiError('unsupported_media_type', 'Send the body as application/octet-stream.');
  return error;
}

function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

/** The body of an error answered straight on the socket, before Fastify has a request. */
function rawErrorResponse(error: ApiError, requestId: string): string {
  const body = JSON.stringify({ error: error.code, message: error.message, request_id: requestId } satisfies ErrorBody);
  return [
    `HTTP/1.1 ${ERROR_STATUS[error.code]} ${error.code}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Socket-level errors (unparseable requests, oversized headers) in the same error shape as the rest. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket, newId: () => string): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('request_header_fields_too_large', 'The request headers are larger than 16 KiB.')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request took too long to arrive.')
        : new ApiError('bad_request', 'The request could not be parsed as HTTP/1.1.');
  socket.end(rawErrorResponse(error, newId()));
}

/**
 * The only place that writes error bodies: {error, message, details?, request_id}. Unknown paths
 * are 404 not_found; a known path with another method is 405 with Allow.
 */
interface RegisteredRoute {
  method: string;
  url: string;
  /** Undefined for a route registered without a contract line. */
  operationId: string | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after this plugin, as method + URL pattern (HEAD twins included), with its contract line's operationId. */
    listRoutes(): RegisteredRoute[];
  }
}

export interface ErrorsPluginOptions {
  /** What an error the routes did not expect means, when it has a meaning of its own here (a database down). */
  recognise?: (error: Error) => ApiError | undefined;
}

export const errorsPlugin = fp(
  async (app, options: ErrorsPluginOptions) => {
    const routes = FindMyWay();
    const list: RegisteredRoute[] = [];
    app.decorate('listRoutes', () => [...list]);
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        list.push({ method, url: route.url, operationId: route.config?.endpoint?.operationId });
        try {
          routes.on(method as HTTPMethod, route.url, () => undefined);
        } catch {
          // Already known (HEAD twins and the like): nothing to add.
        }
      }
    });

    app.setErrorHandler((error: FastifyError | Error, request, reply) => {
      const apiError = toApiError(error);
      // Our own errors say what they mean; Fastify's are worded for the route.
      if (apiError) return sendError(request, reply, error instanceof ApiError ? apiError : forRoute(apiError, request));
      const recognised = options.recognise?.(error);
      if (recognised) {
        request.log.warn({ err: error, code: recognised.code }, recognised.message);
        return sendError(request, reply, recognised);
      }
      request.log.error({ err: error }, 'unhandled error');
      return sendError(
        request,
        reply,
        new ApiError('internal_error', 'Something went wrong on our side. Quote the request_id if you report it.'),
      );
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '/';
      const allowed = (['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const).filter((m) => routes.find(m, path) !== null);
      if (allowed.length > 0) {
        return sendError(
          request,
          reply,
          new ApiError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, undefined, {
            Allow: allowed.join(', '),
          }),
        );
      }
      return sendError(request, reply, new ApiError('not_found', `No route ${request.method} ${path}. See /api/v1/public/docs.`));
    });
  },
  { name: 'courtier-errors' },
);
