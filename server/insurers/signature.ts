import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AdapterSigner } from './registry.js';
import { digestFiles, packageFiles, SIGNATURE_FILE } from './package-files.js';

/**
 * An adapter package's signature: an ed25519 signature over the package's name, version and the
 * SHA-256 of each of its files, with the public key that checks it. A file added, removed or
 * changed after signing breaks it.
 */
const signatureSchema = z.strictObject({
  format: z.literal(1),
  algorithm: z.literal('ed25519'),
  public_key: z.string().min(1).max(1000),
  package: z.strictObject({ name: z.string(), version: z.string() }),
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
  signature: z.string().min(1).max(200),
});

/** Why a package's signature is not good: refused when the policy requires signed adapters. */
export class SignatureError extends Error {
  override name = 'SignatureError';
  constructor(
    readonly code: 'adapter_unsigned' | 'adapter_signature_invalid' | 'adapter_signer_untrusted',
    message: string,
  ) {
    super(message);
  }
}

/** What is signed: one line per file, sorted, after the package's name and version. */
function signedText(pkg: { name: string; version: string }, files: Record<string, string>): Buffer {
  const lines = Object.keys(files)
    .sort()
    .map((path) => `${files[path]}  ${path}`);
  return Buffer.from(['courtier-adapter-signature/1', `${pkg.name}@${pkg.version}`, ...lines, ''].join('\n'));
}

/** `ed25519:` and the first 16 bytes of the SHA-256 of the key's SPKI DER, in hex. */
function keyFingerprint(key: KeyObject): string {
  return `ed25519:${createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 32)}`;
}

function ed25519PublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${key.asymmetricKeyType ?? 'unknown'} key, not ed25519`);
  return key;
}

/** The fingerprints of the policy's trusted keys; a key that does not parse is left out, with a problem. */
export function trustedFingerprints(pems: readonly string[]): { fingerprints: Set<string>; problems: string[] } {
  const fingerprints = new Set<string>();
  const problems: string[] = [];
  pems.forEach((pem, index) => {
    try {
      fingerprints.add(keyFingerprint(ed25519PublicKey(pem)));
    } catch (err) {
      problems.push(`adapters.trustedKeys[${index}] is not an ed25519 public key in PEM (${(err as Error).message}); it trusts nothing.`);
    }
  });
  return { fingerprints, problems };
}

/**
 * Signs the package in `dir` with an ed25519 private key (PEM, as `openssl genpkey -algorithm
 * ed25519` writes it) and writes its signature file. Returns the key's fingerprint.
 */
export function signPackage(dir: string, pkg: { name: string; version: string }, privateKeyPem: string): string {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new SignatureError('adapter_signature_invalid', 'The signing key must be an ed25519 private key.');
  const files = digestFiles(dir, packageFiles(dir));
  const publicKey = createPublicKey(key);
  const signature = sign(null, signedText(pkg, files), key).toString('base64');
  const document: z.infer<typeof signatureSchema> = {
    format: 1,
    algorithm: 'ed25519',
    public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    package: { name: pkg.name, version: pkg.version },
    files,
    signature,
  };
  writeFileSync(join(dir, SIGNATURE_FILE), `${JSON.stringify(document, null, 2)}\n`);
  return keyFingerprint(publicKey);
}

/**
 * Checks the signature of the package in `dir`: null when it has none; throws SignatureError when
 * it is bad (a file changed, added or removed; another package's; not from that key).
 */
export function readSigner(dir: string, pkg: { name: string; version: string }, trusted: ReadonlySet<string>): AdapterSigner | null {
  const path = join(dir, SIGNATURE_FILE);
  if (!existsSync(path)) return null;
  let document: z.infer<typeof signatureSchema>;
  let publicKey: KeyObject;
  try {
    document = signatureSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
    publicKey = ed25519PublicKey(document.public_key);
  } catch (err) {
    throw new SignatureError('adapter_signature_invalid', `${SIGNATURE_FILE} cannot be read (${(err as Error).message.split('\n')[0]}).`);
  }
  if (document.package.name !== pkg.name || document.package.version !== pkg.version) {
    throw new SignatureError(
      'adapter_signature_invalid',
      `the signature is for ${document.package.name}@${document.package.version}, not ${pkg.name}@${pkg.version}.`,
    );
  }
  const files = digestFiles(dir, packageFiles(dir));
  const changed = [
    ...Object.keys(files).filter((f) => document.files[f] !== files[f]),
    ...Object.keys(document.files).filter((f) => !(f in files)),
  ];
  if (changed.length > 0) {
    throw new SignatureError(
      'adapter_signature_invalid',
      `the package's files differ from what was signed (${changed.slice(0, 3).join(', ')}${changed.length > 3 ? '…' : ''}).`,
    );
  }
  if (!verify(null, signedText(pkg, files), publicKey, Buffer.from(document.signature, 'base64'))) {
    throw new SignatureError('adapter_signature_invalid', 'the signature does not match the package.');
  }
  const fingerprint = keyFingerprint(publicKey);
  return { fingerprint, trusted: trusted.has(fingerprint) };
}
