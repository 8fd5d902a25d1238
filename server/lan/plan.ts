import type { NetworkInterfaceInfo } from 'node:os';
import { lanNameSchema } from '../../shared/lan.js';
import type { CertificateFacts } from './certificates.js';
import { normalizeAddress } from './certificates.js';

/** What the LAN mode needs to know of the machine, injected so that tests give it any network. */
export interface MachineNetwork {
  hostname(): string;
  interfaces(): NodeJS.Dict<NetworkInterfaceInfo[]>;
}

/** Renew this long before a certificate expires, so that it never lapses between two checks. */
const RENEW_BEFORE_MS = 30 * 86_400_000;

/** Every address the machine has now, loopback and link-local excepted. */
export function machineAddresses(network: MachineNetwork): string[] {
  const found: string[] = [];
  for (const entries of Object.values(network.interfaces())) {
    for (const entry of entries ?? []) {
      if (entry.internal) continue;
      if (entry.family === 'IPv6' && /^fe80:/i.test(entry.address)) continue;
      if (entry.family === 'IPv4' && entry.address.startsWith('169.254.')) continue;
      found.push(normalizeAddress(entry.address));
    }
  }
  return [...new Set(found)];
}

/**
 * Where the listener serves: the configured addresses the machine has (the others are reported),
 * or, with none configured, every non-loopback IPv4 address (IPv6 ones change with privacy
 * extensions; an office gives them with --address when it wants them).
 */
export function listenerAddresses(
  configured: readonly string[] | null,
  network: MachineNetwork,
): { addresses: string[]; missing: string[] } {
  const present = machineAddresses(network);
  if (configured === null) return { addresses: present.filter((a) => !a.includes(':')), missing: [] };
  const wanted = configured.map(normalizeAddress);
  return { addresses: wanted.filter((a) => present.includes(a)), missing: wanted.filter((a) => !present.includes(a)) };
}

/** The certificate's DNS names: the host name, its .local name (mDNS), then the configured names. */
export function certificateNames(hostname: string, extraNames: readonly string[]): string[] {
  const host = hostname.trim().toLowerCase().replace(/\.$/, '');
  const short = host.split('.')[0] ?? host;
  const candidates = [host, short, `${short}.local`, ...extraNames.map((n) => n.toLowerCase())];
  return [...new Set(candidates.filter((name) => lanNameSchema.safeParse(name).success))];
}

export type RenewalReason = 'none_yet' | 'names_changed' | 'addresses_changed' | 'expiring' | 'other_authority';

/** Why the served certificate must be replaced now, or null when it still fits. */
export function renewalReason(
  current: (CertificateFacts & { issuedByCurrentAuthority: boolean }) | null,
  wanted: { names: readonly string[]; addresses: readonly string[] },
  now: number,
): RenewalReason | null {
  if (current === null) return 'none_yet';
  if (!current.issuedByCurrentAuthority) return 'other_authority';
  if (!sameSet(current.names, wanted.names)) return 'names_changed';
  if (!sameSet(current.addresses.map(normalizeAddress), wanted.addresses.map(normalizeAddress))) return 'addresses_changed';
  if (current.notAfter - now <= RENEW_BEFORE_MS) return 'expiring';
  return null;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  return left.size === new Set(b).size && b.every((x) => left.has(x));
}

/** host:port as a browser sends it in Host and Origin, IPv6 in brackets. */
export function hostWithPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
