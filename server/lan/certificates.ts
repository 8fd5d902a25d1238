import { createHash, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { addressBytes, normalizeIPv6 } from '../platform/http/client-address.js';

/**
 * The office's own certificate authority and the server certificates it signs. EC P-256 keys,
 * SHA-256 signatures. The CA is name-constrained (RFC 5280 4.2.1.10) to the office's names, local
 * suffixes and private address ranges, so that a copy of its key cannot impersonate a public site
 * to a broker who trusted it; Chromium, Firefox, macOS and Node enforce the constraint.
 */

const crypto = webcrypto;
const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

const DAY_MS = 86_400_000;
const CA_LIFETIME_DAYS = 3650;
/** The CA/Browser Forum's ceiling, which Apple enforces even for private CAs' leaves. */
export const SERVER_CERTIFICATE_LIFETIME_DAYS = 397;

/** Suffixes that never resolve on the public internet, permitted whatever the office's names. */
const LOCAL_SUFFIXES = ['local', 'lan', 'home.arpa', 'internal', 'localdomain'] as const;

/** Private, shared and link-local ranges (RFC 1918, 6598, 3927, 4193, 4291): [address, prefix]. */
const PRIVATE_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['fc00::', 7],
  ['fe80::', 10],
];

export interface KeyAndCertificate {
  certificatePem: string;
  /** PKCS#8 PEM: kept in the install's secret store, never in the database or a response. */
  privateKeyPem: string;
}

/** What a CA may certify besides LOCAL_SUFFIXES and the private ranges, fixed at its creation. */
export interface AuthorityConstraints {
  /** The office's DNS names (host name, --name), each with its subdomains. */
  names: readonly string[];
  /** Addresses outside the private ranges the office listens on (some offices number their LAN so), exactly. */
  addresses: readonly string[];
}

export interface AuthorityOptions {
  constraints: AuthorityConstraints;
  now: number;
  /** Shown in the trust dialogs of every system: says whose CA it is. */
  label: string;
}

/** A new CA: 10 years, may sign server certificates only (path length 0), name-constrained. */
export async function createAuthority(options: AuthorityOptions): Promise<KeyAndCertificate> {
  const keys = await crypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: `CN=${escapeDn(options.label)}, O=Courtier`,
      notBefore: new Date(options.now - DAY_MS),
      notAfter: new Date(options.now + CA_LIFETIME_DAYS * DAY_MS),
      keys,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        new x509.Extension('2.5.29.30', true, nameConstraints(options.constraints)),
      ],
    },
    crypto,
  );
  return { certificatePem: certificate.toString('pem'), privateKeyPem: await privateKeyPem(keys.privateKey) };
}

export interface ServerCertificateOptions {
  authority: KeyAndCertificate;
  /** DNS names, the first one is the subject's common name. */
  names: readonly string[];
  addresses: readonly string[];
  now: number;
  lifetimeDays?: number;
}

/** A server certificate for the LAN listener, signed by the office CA. */
export async function issueServerCertificate(options: ServerCertificateOptions): Promise<KeyAndCertificate> {
  const issuer = new x509.X509Certificate(options.authority.certificatePem);
  const issuerKey = await importPrivateKey(options.authority.privateKeyPem);
  const keys = await crypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
  const lifetime = Math.min(options.lifetimeDays ?? SERVER_CERTIFICATE_LIFETIME_DAYS, SERVER_CERTIFICATE_LIFETIME_DAYS);
  const subjectNames: x509.JsonGeneralName[] = [
    ...options.names.map((value) => ({ type: 'dns' as const, value })),
    ...options.addresses.map((value) => ({ type: 'ip' as const, value })),
  ];
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: `CN=${escapeDn(options.names[0] ?? options.addresses[0] ?? 'courtier')}`,
      issuer: issuer.subject,
      notBefore: new Date(options.now - 60 * 60_000),
      notAfter: new Date(options.now + lifetime * DAY_MS),
      publicKey: keys.publicKey,
      signingKey: issuerKey,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension(subjectNames, false),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { certificatePem: certificate.toString('pem'), privateKeyPem: await privateKeyPem(keys.privateKey) };
}

/** What a certificate says about itself, read with Node's own parser (also for IT-provided ones). */
export interface CertificateFacts {
  names: string[];
  addresses: string[];
  notBefore: number;
  notAfter: number;
  fingerprintSha256: string;
}

export function describeCertificate(pem: string): CertificateFacts {
  const certificate = new NodeCertificate(pem);
  const names: string[] = [];
  const addresses: string[] = [];
  for (const entry of (certificate.subjectAltName ?? '').split(', ')) {
    if (entry.startsWith('DNS:')) names.push(entry.slice(4));
    else if (entry.startsWith('IP Address:')) addresses.push(normalizeAddress(entry.slice(11)));
  }
  return {
    names,
    addresses,
    notBefore: Date.parse(certificate.validFrom),
    notAfter: Date.parse(certificate.validTo),
    fingerprintSha256: fingerprintOf(pem),
  };
}

/** The SHA-256 fingerprint of a certificate's DER, as browsers and `openssl x509 -fingerprint -sha256` show it. */
export function fingerprintOf(pem: string): string {
  const hex = createHash('sha256').update(new NodeCertificate(pem).raw).digest('hex').toUpperCase();
  return hex.match(/../g)?.join(':') ?? hex;
}

/** Whether the certificate was signed by this CA (not by one it replaced). */
export function issuedByAuthority(certificatePem: string, authorityPem: string): boolean {
  const certificate = new NodeCertificate(certificatePem);
  const authority = new NodeCertificate(authorityPem);
  return certificate.checkIssued(authority) && certificate.verify(authority.publicKey);
}

/** Whether a name or address falls within the CA's constraints (so a leaf naming it would be refused by clients). */
export function permittedByAuthority(constraints: AuthorityConstraints, candidate: string): boolean {
  if (isIP(candidate)) {
    const address = normalizeAddress(candidate);
    return isPrivateAddress(address) || constraints.addresses.map(normalizeAddress).includes(address);
  }
  const name = candidate.toLowerCase();
  return permittedNames(constraints.names).some((permitted) => name === permitted || name.endsWith(`.${permitted}`));
}

/** In the private, shared, link-local or loopback ranges: certifiable by any office CA. */
export function isPrivateAddress(address: string): boolean {
  return PRIVATE_RANGES.some(([base, prefix]) => inRange(address, base, prefix)) || isLoopbackAddress(address);
}

function permittedNames(names: readonly string[]): string[] {
  return [...new Set([...names.map((n) => n.toLowerCase()), ...LOCAL_SUFFIXES])];
}

/** NameConstraints ::= SEQUENCE { permittedSubtrees [0] GeneralSubtrees }: DER by hand, it is that small. */
function nameConstraints(constraints: AuthorityConstraints): ArrayBuffer {
  const subtrees = [
    ...permittedNames(constraints.names).map((name) => der(0x30, der(0x82, Buffer.from(name, 'ascii')))),
    ...constraints.addresses.map((address) =>
      der(
        0x30,
        der(
          0x87,
          Buffer.concat([
            addressBytes(normalizeAddress(address)),
            maskBytes(address.includes(':') ? 128 : 32, address.includes(':') ? 16 : 4),
          ]),
        ),
      ),
    ),
    ...PRIVATE_RANGES.map(([base, prefix]) =>
      der(0x30, der(0x87, Buffer.concat([addressBytes(base), maskBytes(prefix, base.includes(':') ? 16 : 4)]))),
    ),
    // Loopback too: the certificate may be used at https://127.0.0.1 on the machine itself.
    der(0x30, der(0x87, Buffer.concat([addressBytes('127.0.0.0'), maskBytes(8, 4)]))),
  ];
  const encoded = der(0x30, der(0xa0, Buffer.concat(subtrees)));
  return encoded.buffer.slice(encoded.byteOffset, encoded.byteOffset + encoded.byteLength) as ArrayBuffer;
}

function der(tag: number, content: Buffer): Buffer {
  const length = content.length;
  const header =
    length < 0x80
      ? Buffer.from([tag, length])
      : length < 0x100
        ? Buffer.from([tag, 0x81, length])
        : Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  return Buffer.concat([header, content]);
}

function maskBytes(prefix: number, size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let bit = 0; bit < prefix; bit++) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) | (0x80 >> (bit & 7));
  return bytes;
}

function inRange(address: string, base: string, prefix: number): boolean {
  if (address.includes(':') !== base.includes(':')) return false;
  const a = addressBytes(normalizeAddress(address));
  const b = addressBytes(base);
  const mask = maskBytes(prefix, b.length);
  return mask.every((m, i) => ((a[i] ?? 0) & m) === ((b[i] ?? 0) & m));
}

function isLoopbackAddress(address: string): boolean {
  return address === '::1' || inRange(address, '127.0.0.0', 8);
}

/** Node prints IPv6 SANs in full and upper case; compare them in one form (the URL parser's, RFC 5952). */
export function normalizeAddress(address: string): string {
  return address.includes(':') ? normalizeIPv6(address) : address;
}

function serialNumber(): string {
  // Positive, 16 random bytes (RFC 5280 asks for at most 20 octets, CA/B for 64 bits of entropy).
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

function escapeDn(value: string): string {
  return value.replace(/([,+"\\<>;=#])/g, '\\$1');
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END PRIVATE KEY-----\n`;
}

async function importPrivateKey(pem: string): Promise<webcrypto.CryptoKey> {
  const body = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  return crypto.subtle.importKey('pkcs8', Buffer.from(body, 'base64'), EC_KEY, false, ['sign']);
}
