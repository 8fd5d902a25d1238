import { createHash } from 'node:crypto';

/** RFC 9562's namespace for names that are URLs. */
const URL_NAMESPACE = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');

/**
 * A name-based UUID (RFC 9562, version 5): the same name gives the same id on every install, for
 * records whose identity is natural (one contract per quote) and that several installs may create.
 */
export function nameBasedUuid(name: string): string {
  const hash = createHash('sha1').update(URL_NAMESPACE).update(name).digest();
  hash.writeUInt8((hash.readUInt8(6) & 0x0f) | 0x50, 6);
  hash.writeUInt8((hash.readUInt8(8) & 0x3f) | 0x80, 8);
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
