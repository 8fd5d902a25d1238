import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';

/** Which of the service's listeners a request came in on: the loopback HTTP one, or the office LAN's HTTPS one. */
export type Listener = 'loopback' | 'lan';

/**
 * Whether the request came in on the office LAN listener. It is the only TLS listener, so the
 * socket tells (a trusted proxy's X-Forwarded-Proto never does: it only changes request.protocol).
 */
export function isLanRequest(request: FastifyRequest): boolean {
  return (request.raw.socket as Partial<TLSSocket>).encrypted === true;
}

export function listenerOf(request: FastifyRequest): Listener {
  return isLanRequest(request) ? 'lan' : 'loopback';
}
