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

/** What JSON must escape in a string, and surrogates (JSON.stringify writes a lone one escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON. Most of a request line's strings need no escape, and JSON.stringify of a
 * short string costs many times what a test of this pattern does.
 */
function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

export type RequestLogger = (request: FastifyRequest, reply: FastifyReply, caller: Record<string, string> | undefined) => void;

/**
 * The one line an app (the agent's, the hub's) writes per answered request, from its onResponse
 * hook, with who called (the API key, the hub's device): the line `logger.info({ reqId, method,
 * url, status, ms, ip, ...caller }, 'request')` writes, written by hand to the logger's stream.
 * pino's generic path looks each field up among its serializers and redaction paths and escapes
 * it character by character, a visible share of a `GET /me`. The fields are ours (a redacted URL,
 * never a header or a body), so redaction has nothing to do here. For loggers made by createLogger
 * (no mixin, hooks or formatters); the logging tests compare its line with pino's.
 */
export function requestLogger(logger: Logger): RequestLogger {
  // What pino keeps of a logger to write a line (pino.symbols): its stream, its clock, its bindings as JSON.
  const kept = logger as unknown as Record<symbol, unknown>;
  const stream = kept[pino.symbols.streamSym] as DestinationStream;
  const time = kept[pino.symbols.timeSym] as () => string;
  const start = `{"level":${logger.levels.values.info}`;
  const bindings = kept[pino.symbols.chindingsSym] as string;
  return (request, reply, caller) => {
    if (!logger.isLevelEnabled('info')) return;
    let line = `${start}${time()}${bindings},"reqId":${jsonString(request.id)},"method":${jsonString(request.method)},"url":${jsonString(redactUrl(request.url))},"status":${reply.statusCode},"ms":${Math.round(reply.elapsedTime * 10) / 10}`;
    // The socket's address is gone when the client left before the answer: pino leaves the field out.
    const ip = request.ip as string | undefined;
    if (ip !== undefined) line += `,"ip":${jsonString(ip)}`;
    if (caller !== undefined) for (const name in caller) line += `,${jsonString(name)}:${jsonString(caller[name] as string)}`;
    stream.write(`${line},"msg":"request"}\n`);
  };
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
 * A log file or descriptor, written by sonic-boom through pino.destination: asynchronously, so
 * that lines written while a write is in flight go out together in one system call, and a quiet
 * service still shows each line at once; pino flushes it on exit and stops it on EPIPE. In
 * buffer mode, each line handed over as bytes: in its text mode sonic-boom measures the UTF-8
 * length of all the text still queued on every write, so under load each line would re-read the
 * lines queued before it.
 */
export function logDestination(
  dest: number | string,
): DestinationStream & { flush(callback?: (err?: Error) => void): void; flushSync(): void } {
  const sonic = pino.destination({ dest, sync: false, contentMode: 'buffer' });
  // With minLength 0, sonic-boom's own flush(callback) calls back at once, whatever is still
  // queued. It emits 'drain' each time its queue has been written out, so the destination knows
  // whether lines are pending and flush waits for that drain. When the reader of a pipe has gone
  // (EPIPE), pino replaces the stream's write with a no-op: nothing more will drain, nor needs to;
  // nor after another write error, or once the stream is closed.
  const sonicWrite = sonic.write;
  let pending = false;
  const settled = () => {
    pending = false;
  };
  sonic.on('drain', settled);
  sonic.on('close', settled);
  return {
    write: (line: string) => {
      pending = true;
      // sonic-boom's types know only its text mode's write.
      sonic.write(Buffer.from(line) as unknown as string);
    },
    flush: (callback) => {
      if (!pending || sonic.write !== sonicWrite) {
        callback?.();
        return;
      }
      const done = (err?: Error) => {
        sonic.off('drain', done).off('close', done).off('error', done);
        if (err) settled();
        callback?.(err);
      };
      sonic.once('drain', done).once('close', done).once('error', done);
    },
    flushSync: () => sonic.flushSync(),
  };
}

/**
 * pino with redaction, writing to standard output (logDestination) unless given a stream.
 * Call flush() before exit.
 */
export function createLogger(options: { level: string; stream?: DestinationStream }): Logger {
  const stream = options.stream ?? logDestination(1);
  return pino({ level: options.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream);
}
