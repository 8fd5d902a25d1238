import { BlockList, isIP } from 'node:net';

/** Compiles a key's allowlist (addresses and CIDR blocks, IPv4 and IPv6) into a matcher. */
export function compileIpAllowlist(rules: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const rule of rules) {
    const [address = '', prefix] = rule.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (ip) => {
    const address = unmapIpv4(ip);
    const family = isIP(address);
    if (family === 0) return false;
    return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** ::ffff:192.0.2.1 (an IPv4 client on a dual-stack socket) is checked as 192.0.2.1. */
function unmapIpv4(ip: string): string {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return match?.[1] ?? ip;
}
