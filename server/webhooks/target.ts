import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS resolution, injected so that tests can make a public name resolve to a private address. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * Addresses a webhook must never reach unless private targets are allowed: loopback, private
 * ranges, link-local (cloud metadata at 169.254.169.254 included), carrier-grade NAT, unspecified,
 * multicast and their IPv6 counterparts. IPv4-mapped IPv6 addresses are checked as IPv4.
 */
function blockedRanges(): BlockList {
  const list = new BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ];
  const v6: [string, number][] = [
    ['::', 128],
    ['::1', 128],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
    ['64:ff9b::', 96],
    ['fd00:ec2::', 32],
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

export class BlockedTargetError extends Error {
  override name = 'BlockedTargetError';
}

/** Resolves a webhook URL's host and returns the address to connect to, or throws BlockedTargetError. */
export type TargetGuard = (url: URL) => Promise<ResolvedAddress>;

/** Builds the check once; it is pure and reused for every attempt. */
export function createTargetGuard(options: { resolve: Resolver; allowPrivate: boolean }): TargetGuard {
  const blocked = blockedRanges();
  const isBlocked = (address: string): boolean => {
    const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1];
    if (mapped) return blocked.check(mapped, 'ipv4');
    return blocked.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  };

  return async (url) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const family = isIP(host);
    const addresses: ResolvedAddress[] = family ? [{ address: host, family: family as 4 | 6 }] : await options.resolve(host);
    if (addresses.length === 0) throw new Error(`${host} did not resolve`);
    if (!options.allowPrivate) {
      // Every address must be public: otherwise DNS could answer differently at connect time.
      const bad = addresses.find((a) => isBlocked(a.address));
      if (bad) throw new BlockedTargetError(`${host} resolves to ${bad.address}, a private, loopback or link-local address`);
    }
    return addresses[0] as ResolvedAddress;
  };
}
