import type { FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';
import { isLoopbackHost } from '../config.js';
import { isLanRequest } from './listener.js';

/** What Fastify's `trustProxy` takes. */
export type FastifyTrustProxy = false | string[] | ((address: string, hop: number) => boolean);

/**
 * Fastify's `trustProxy` for COURTIER_TRUST_PROXY. Addresses and CIDR blocks go as they are: only
 * those peers' X-Forwarded-* headers are believed. A hop count becomes "the last N hops, whoever
 * they are" (Fastify 5 no longer honours a bare number: it cannot check the peer), so it is right
 * only when every request really comes through that many proxies.
 */
export function fastifyTrustProxy(setting: TrustProxy): FastifyTrustProxy {
  if (setting === false) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting;
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (::ffff:127.0.0.1) on a dual-stack socket. */
function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return isLoopbackHost(address) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address);
}

/** Headers a proxy adds to say whom it forwards for. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

/**
 * Whether the request comes from a person at this machine: the TCP peer itself is a loopback
 * address. Forwarded headers never make a request local; when a trusted proxy forwards it, the
 * client it names must be loopback too, so that a reverse proxy on this machine does not make
 * every LAN client look local. A forwarding header that no configured proxy vouches for (a proxy
 * on this machine that COURTIER_TRUST_PROXY does not list) makes it not local either: a browser
 * at the machine never sends one. Nothing that came in on the office LAN listener is local.
 */
export function isFromThisMachine(request: FastifyRequest): boolean {
  // The office LAN listener is for colleagues: nothing there counts as this machine, whatever the peer.
  if (isLanRequest(request)) return false;
  const peer = request.socket.remoteAddress;
  if (!isLoopbackAddress(peer) || !isLoopbackAddress(request.ip)) return false;
  const forwarded = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
  return !forwarded || request.ip !== peer;
}
