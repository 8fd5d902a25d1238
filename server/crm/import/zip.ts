import { inflateRawSync } from 'node:zlib';

/**
 * The few files an .xlsx reader needs, out of its zip: the central directory names each entry and
 * where its data starts; entries are stored or deflated. Nothing else of the zip format is needed.
 */

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** An entry that inflates to more than this is refused: a small file must not become a huge one (a zip bomb). */
const MAX_ENTRY_BYTES = 64 * 1024 * 1024;

class ZipError extends Error {}

interface Entry {
  method: number;
  compressedSize: number;
  localOffset: number;
}

function endOfDirectory(zip: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 65535); at--) {
    if (zip.readUInt32LE(at) === END_OF_DIRECTORY) return at;
  }
  throw new ZipError('no zip directory');
}

function directory(zip: Buffer): Map<string, Entry> {
  const end = endOfDirectory(zip);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, Entry>();
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== DIRECTORY_ENTRY) throw new ZipError('broken zip directory');
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    entries.set(name, {
      method: zip.readUInt16LE(at + 10),
      compressedSize: zip.readUInt32LE(at + 20),
      localOffset: zip.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function entryData(zip: Buffer, entry: Entry): Buffer {
  const at = entry.localOffset;
  if (at + 30 > zip.length || zip.readUInt32LE(at) !== LOCAL_HEADER) throw new ZipError('broken zip entry');
  const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
  const data = zip.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data;
  if (entry.method !== 8) throw new ZipError(`zip method ${entry.method} not supported`);
  try {
    return inflateRawSync(data, { maxOutputLength: MAX_ENTRY_BYTES });
  } catch {
    throw new ZipError('zip entry does not inflate');
  }
}

/** Reads the zip's directory once; `file(name)` is the text of an entry, or undefined when there is none. */
export function openZip(zip: Buffer): { file: (name: string) => string | undefined } {
  const entries = directory(zip);
  return {
    file: (name) => {
      const entry = entries.get(name);
      return entry && entryData(zip, entry).toString('utf8');
    },
  };
}
