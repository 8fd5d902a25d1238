import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { isLoopbackHost } from '../../config.js';
import { parseHostHeader } from '../../plugins/local-guard.js';
import { isLanRequest } from './listener.js';

/**
 * The origin clients reach this service at, without a trailing slash: on the office LAN listener,
 * the https name or address the client used (OAuth's issuer and resource follow it); else the configured public base
 * URL; else, for a client that used a loopback name (127.0.0.1, [::1], localhost), that name and
 * port, because RFC 9728 has the client check that the metadata names the very URL it called;
 * else http://127.0.0.1:<port>.
 */
export function publicBaseUrl(config: Config, request: FastifyRequest): string {
  const host = parseHostHeader(request.headers.host ?? '');
  // On the office LAN listener the guard already checked Host against the certificate's names.
  if (host && isLanRequest(request)) return `https://${host.hostname}${host.port === null ? '' : `:${host.port}`}`;
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  const port = request.socket.localPort ?? config.port;
  if (host && (isLoopbackHost(host.hostname) || !isLoopbackHost(config.host))) {
    return `${request.protocol}://${host.hostname}${host.port === null ? '' : `:${host.port}`}`;
  }
  return `http://127.0.0.1:${port}`;
}
