import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Got, RequestError } from 'got';
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

/** got with keep-alive agents, no redirects (a redirect could lead past the target check), no retries of its own. */
export function createHttpSender(options: { timeoutMs: number; extraCa?: readonly string[]; maxSockets?: number }): HttpSender & { close(): void } {
  // The trust store as one secure context built once: passed as `ca`, the ~140 root certificates
  // would be concatenated into the connection pool's key on every request (a quarter of the CPU).
  const secureContext = createSecureContext({ ca: trustedCertificates(options.extraCa ?? []) });
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64, secureContext });
  // Loaded with the first delivery: an install without webhooks never pays got's ~25 MB.
  let client: Promise<Got> | undefined;
  const send: HttpSender = async (request) => {
    try {
      client ??= import('got').then((m) => m.default);
      const got = await client;
      const response = await got.post(request.url, {
        body: request.body,
        headers: request.headers,
        agent: { https: agent },
        timeout: { request: options.timeoutMs },
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        decompress: true,
        dnsLookup: ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (lookupOptions?.all) callback(null, [request.address]);
          else callback(null, request.address.address, request.address.family);
        }) as never,
      });
      const raw = response.rawBody.subarray(0, RESPONSE_EXCERPT_BYTES);
      return { kind: 'response', status: response.statusCode, body: raw.toString('utf8') };
    } catch (err) {
      const error = err as RequestError;
      if (error.code === 'ETIMEDOUT' || error.name === 'TimeoutError') return { kind: 'error', error: 'timeout' };
      return { kind: 'error', error: `${error.code ?? 'network_error'}: ${error.message}`.slice(0, 500) };
    }
  };
  return Object.assign(send, { close: () => agent.destroy() });
}
