import { gunzipSync } from 'node:zlib';
import { posix } from 'node:path';
import { MAX_PACKAGE_BYTES, PackageFilesError } from './package-files.js';

/**
 * The regular files of a gzipped tar (what `npm pack` writes), by path. The one top folder every
 * entry shares (`package/` for npm) is stripped. Links, devices, absolute paths and `..` are
 * refused: a package's files land inside its own folder, nowhere else.
 */
export function readTarball(gzipped: Buffer): Map<string, Buffer> {
  let tar: Buffer;
  try {
    tar = gunzipSync(gzipped, { maxOutputLength: MAX_PACKAGE_BYTES + 1024 * 1024 });
  } catch (err) {
    throw new PackageFilesError(`not a gzipped tar (${(err as Error).message}).`);
  }
  const files = new Map<string, Buffer>();
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    if (!Number.isFinite(size) || size < 0 || offset + 512 + size > tar.length) throw new PackageFilesError('the tar is truncated.');
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type === 'x' || type === 'g' || type === '5') continue; // pax headers, folders
    if (type !== '0') throw new PackageFilesError(`${name}: only plain files may be in a package (a link or a device is not).`);
    name = posix.normalize(name.replace(/^\.\//, ''));
    if (name.startsWith('/') || name === '..' || name.startsWith('../') || /^[A-Za-z]:/.test(name) || name.includes('\\')) {
      throw new PackageFilesError(`${name}: a path outside the package.`);
    }
    files.set(name, body);
  }
  const tops = new Set([...files.keys()].map((path) => path.split('/')[0]));
  const [top] = tops;
  if (tops.size === 1 && top !== undefined && !files.has(top)) {
    return new Map([...files].map(([path, body]) => [path.slice(top.length + 1), body]));
  }
  return files;
}
