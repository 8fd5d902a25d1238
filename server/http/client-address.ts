import { isIP } from 'node:net';
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

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const part = (text: string) => (text === '' ? [] : text.split(':'));
  const words = (texts: string[]) =>
    texts.flatMap((text) => {
      // An embedded IPv4 address (::ffff:192.0.2.1) is two groups.
      if (text.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = text.split('.').map(Number);
        return [(a << 8) | b, (c << 8) | d];
      }
      return [parseInt(text, 16)];
    });
  const left = words(part(head));
  const right = tail === undefined ? [] : words(part(tail));
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * Where failed sign-ins are counted and addresses blocked: an IPv4 address as it is, an IPv6 one by
 * its /64 network, since one machine may take any address of its /64 (privacy addresses, or at will)
 * and would otherwise start afresh at each.
 */
export function throttleBucket(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  // An IPv4 client seen through a dual-stack socket (::ffff:a.b.c.d) is that IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
