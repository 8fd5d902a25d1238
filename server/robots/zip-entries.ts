import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';

const inflate = promisify(inflateRaw);

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

export class ZipFormatError extends Error {
  override name = 'ZipFormatError';
}

/**
 * The entries of a zip archive (such as a Playwright trace), uncompressed. Only what Playwright
 * writes is supported: stored or deflated entries, no zip64, no encryption; anything else throws
 * ZipFormatError, so that a caller checking the contents never mistakes "unreadable" for "clean".
 */
export async function readZipEntries(zip: Buffer): Promise<{ name: string; data: Buffer }[]> {
  const end = findEndOfCentralDirectory(zip);
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const entries: { name: string; data: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    if (offset + 46 > zip.length || zip.readUInt32LE(offset) !== CENTRAL_DIRECTORY_ENTRY)
      throw new ZipFormatError('broken central directory');
    const flags = zip.readUInt16LE(offset + 8);
    const method = zip.readUInt16LE(offset + 10);
    const compressedSize = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const localOffset = zip.readUInt32LE(offset + 42);
    const name = zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    if (flags & 1) throw new ZipFormatError(`${name} is encrypted`);
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff) throw new ZipFormatError('zip64 archives are not supported');
    entries.push({ name, data: await entryData(zip, localOffset, compressedSize, method, name) });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function findEndOfCentralDirectory(zip: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new ZipFormatError('not a zip archive');
}

/** Inflated off the main thread: a trace can be several megabytes. */
async function entryData(zip: Buffer, localOffset: number, compressedSize: number, method: number, name: string): Promise<Buffer> {
  if (localOffset + 30 > zip.length || zip.readUInt32LE(localOffset) !== LOCAL_FILE_HEADER)
    throw new ZipFormatError(`broken local header of ${name}`);
  const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
  const raw = zip.subarray(start, start + compressedSize);
  if (method === STORED) return raw;
  if (method === DEFLATED) return inflate(raw);
  throw new ZipFormatError(`${name} uses compression method ${method}`);
}
