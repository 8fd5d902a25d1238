import type { FastifyReply, FastifyRequest } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';

const SENSITIVE_QUERY = /^(key|api_key|apikey|token|access_token|refresh_token|code|code_verifier|password|secret|signature|sig)$/i;

/** A URL as it may be logged: values of secret-bearing query parameters are replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && SENSITIVE_QUERY.test(decodeURIComponentSafe(name)) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/**
 * The one line an app (the agent's, the hub's) writes per answered request, from its onResponse
 * hook, with who called: the API key, the hub's device. The caller's fields are spread last:
 * properties a literal adds after a spread cost V8 a new hidden class each.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply, caller: Record<string, string> | undefined): void {
  request.log.info(
    {
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ip: request.ip,
      ...caller,
    },
    'request',
  );
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Headers and fields that carry secrets are censored wherever a log line would include them.
 * Explicit paths, no wildcards: wildcard redaction clones every logged object, on every request.
 * The request line itself is built field by field (method, redacted URL, status…) and never
 * carries headers or bodies.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  'password',
  'key',
  'token',
  'secret',
  'credentials.password',
  'err.config.headers.authorization',
];

/**
 * pino with redaction. By default it writes to standard output asynchronously: lines written
 * while a write is in flight are coalesced into one, so a busy server does not pay one system
 * call per request line, and a quiet one still shows each line at once. Call flush() before exit.
 */
export function createLogger(options: { level: string; stream?: DestinationStream }): Logger {
  const stream = options.stream ?? pino.destination({ dest: 1, sync: false });
  return pino({ level: options.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream);
}
