import type { NetworkInterfaceInfo } from 'node:os';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { MachineNetwork } from '../../server/lan/plan.js';

/** A machine whose host name and addresses a test changes at will (an address moving with DHCP). */
export interface TestNetwork extends MachineNetwork {
  setAddresses(addresses: string[]): void;
}

export function testNetwork(hostname: string, addresses: string[]): TestNetwork {
  let current = addresses;
  const entry = (address: string): NetworkInterfaceInfo =>
    address.includes(':')
      ? {
          address,
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          mac: '02:00:00:00:00:01',
          internal: false,
          cidr: `${address}/64`,
          scopeid: 0,
        }
      : { address, netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: `${address}/24` };
  return {
    hostname: () => hostname,
    interfaces: () => ({
      lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
      eth0: current.map(entry),
    }),
    setAddresses(addresses) {
      current = addresses;
    },
  };
}

export interface LanResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The SHA-256 fingerprint of the certificate the server presented. */
  certificateFingerprint: string;
}

/**
 * One HTTPS request to the LAN listener as a broker's client makes it: connects to `address`,
 * sends `name` as SNI and Host, and verifies the certificate against the office CA only.
 */
export function lanRequest(
  target: { address: string; port: number; name?: string; ca: string },
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<LanResponse> {
  const hostName = target.name ?? target.address;
  const hostHeader = `${hostName.includes(':') ? `[${hostName}]` : hostName}:${target.port}`;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: target.address,
        port: target.port,
        path,
        method: init.method ?? 'GET',
        servername: target.name,
        ca: target.ca,
        agent: false,
        headers: { host: hostHeader, ...init.headers },
      },
      (res) => {
        const certificateFingerprint = (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '';
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            certificateFingerprint,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

export function fingerprintOfPem(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}
