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

export type RequestLogger = (request: FastifyRequest, reply: FastifyReply, caller: Record<string, string> | undefined) => void;

/**
 * The one line an app (the agent's, the hub's) writes per answered request, from its onResponse
 * hook, with who called (the API key, the hub's device): its URL redacted, never a header or a body.
 */
export function requestLogger(logger: Logger): RequestLogger {
  return (request, reply, caller) => {
    const fields = {
      reqId: request.id,
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      // Gone when the client left before the answer: pino leaves an undefined field out.
      ip: request.ip as string | undefined,
    };
    logger.info(caller === undefined ? fields : { ...fields, ...caller }, 'request');
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
