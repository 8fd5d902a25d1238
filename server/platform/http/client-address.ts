import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { TrustProxy } from '../../config.js';
import { isLoopbackHost } from '../../config.js';
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

/** An IP address's bytes: 4 for IPv4, 16 for IPv6 (written with hex groups; see normalizeIPv6). */
export function addressBytes(address: string): Buffer {
  if (!address.includes(':')) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = groups(tail);
  const all = address.includes('::') ? [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

/** An IPv6 address in one form, hex groups only (the URL parser's, RFC 5952): an embedded IPv4 tail becomes two groups. */
export function normalizeIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/**
 * Where failed sign-ins and pairings are counted as a network: an IPv4 address as it is, an IPv6 one
 * by its /64, since one machine may take any address of its /64 (privacy addresses, or at will).
 * An IPv4 client seen through a dual-stack socket (::ffff:a.b.c.d) is that IPv4 address.
 */
export function throttleBucket(address: string): string {
  if (isIP(address) !== 6) return address;
  const bytes = addressBytes(normalizeIPv6(address));
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return [...bytes.subarray(12)].join('.');
  const groups = [0, 2, 4, 6].map((offset) => bytes.readUInt16BE(offset).toString(16));
  return `${groups.join(':')}::/64`;
}
