import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { createGunzip, createInflate, createBrotliDecompress } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { ResolvedAddress } from './target.js';

interface OutboundRequest {
  url: string;
  /** The vetted address: the connection goes there, whatever DNS answers meanwhile. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
}

type OutboundResult = { kind: 'response'; status: number; body: string } | { kind: 'error'; error: string };

/** Sends one delivery; injected so that tests can replace the network. */
export type HttpSender = (request: OutboundRequest) => Promise<OutboundResult>;

const RESPONSE_EXCERPT_BYTES = 1024;

/**
 * The trusted roots: Node's bundled CAs, NODE_EXTRA_CA_CERTS (which an explicit ca list would
 * otherwise drop), and any extra PEM certificates given. TLS checks are never disabled.
 */
function trustedCertificates(extraCa: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = env.NODE_EXTRA_CA_CERTS ? [readFileSync(env.NODE_EXTRA_CA_CERTS, 'utf8')] : [];
  return [...rootCertificates, ...fromEnv, ...extraCa];
}

/** The connection goes to the address the target check vetted, never to a second DNS answer. */
function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [address]);
    else callback(null, address.address, address.family);
  };
}

/** How a failed connection, request or answer is recorded on the attempt. */
function networkError(err: NodeJS.ErrnoException): OutboundResult {
  return { kind: 'error', error: `${err.code ?? 'network_error'}: ${err.message}`.slice(0, 500) };
}

/** The body as sent, or decompressed when the endpoint compressed it (it is kept as an excerpt). */
function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  return decoder ? response.pipe(decoder) : response;
}

/**
 * One POST per delivery on node:https with a keep-alive agent: no redirects (a redirect could
 * lead past the target check), no retries of its own, the whole attempt bounded by the timeout,
 * the first KB of the answer kept. got would do the same at several times the CPU per delivery.
 */
export function createHttpSender(options: {
  timeoutMs: number;
  extraCa?: readonly string[];
  maxSockets?: number;
}): HttpSender & { close(): void } {
  // The trust store as one secure context built once: passed as `ca`, the root certificates would
  // be concatenated into the connection pool's key on every request (a large share of the CPU).
  const secureContext = createSecureContext({ ca: trustedCertificates(options.extraCa ?? []) });
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64, secureContext });
  const send: HttpSender = (request) =>
    new Promise((resolve) => {
      let settled = false;
      const finish = (result: OutboundResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const body = Buffer.from(request.body, 'utf8');
      const outgoing = httpsRequest(request.url, {
        method: 'POST',
        agent,
        headers: { ...request.headers, 'Content-Length': String(body.length), 'Accept-Encoding': 'gzip, deflate, br' },
        lookup: pinnedLookup(request.address),
      });
      const timer = setTimeout(() => {
        finish({ kind: 'error', error: 'timeout' });
        outgoing.destroy();
      }, options.timeoutMs);
      outgoing.on('error', (err: NodeJS.ErrnoException) => finish(networkError(err)));
      outgoing.on('response', (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const stream = decoded(response);
        stream.on('data', (chunk: Buffer) => {
          // The rest is read and dropped, so that the connection can be reused.
          if (kept >= RESPONSE_EXCERPT_BYTES) return;
          chunks.push(chunk);
          kept += chunk.length;
        });
        response.on('close', () => {
          if (!response.complete) finish({ kind: 'error', error: 'ECONNRESET: the connection closed before the answer ended' });
        });
        stream.on('error', (err: NodeJS.ErrnoException) => finish(networkError(err)));
        stream.on('end', () =>
          finish({
            kind: 'response',
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'),
          }),
        );
      });
      outgoing.end(body);
    });
  return Object.assign(send, { close: () => agent.destroy() });
}
