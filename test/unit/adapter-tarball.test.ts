import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readTarball } from '../../server/insurers/tarball.js';

/** One ustar entry: a 512-byte header (name, size, type, checksum) and its body padded to 512. */
function entry(name: string, body: string, type = '0'): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, 'utf8');
  header.write('0000644\0', 100);
  header.write(`${Buffer.byteLength(body).toString(8).padStart(11, '0')}\0`, 124);
  header.write('00000000000\0', 136);
  header.write(type, 156);
  header.write('ustar\0', 257);
  header.write('00', 263);
  header.fill(' ', 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  const padded = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  padded.write(body);
  return Buffer.concat([header, padded]);
}

const tarball = (...entries: Buffer[]) => gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));

describe('an adapter tarball', () => {
  it('gives its files without the top folder npm pack puts them in', () => {
    const files = readTarball(tarball(entry('package/package.json', '{}'), entry('package/dist/index.js', 'export {};')));
    expect([...files.keys()]).toEqual(['package.json', 'dist/index.js']);
    expect(files.get('dist/index.js')?.toString()).toBe('export {};');
  });

  it.each([
    ['a path that climbs out', entry('package/../../evil.js', 'x'), /outside the package/],
    ['an absolute path', entry('/etc/cron.d/evil', 'x'), /outside the package/],
    ['a symbolic link', entry('package/link', '', '2'), /only plain files/],
    ['a hard link', entry('package/hard', '', '1'), /only plain files/],
  ])('refuses %s', (_what, bad, message) => {
    expect(() => readTarball(tarball(entry('package/package.json', '{}'), bad))).toThrow(message);
  });

  it('refuses what is not a gzipped tar, and a truncated one', () => {
    expect(() => readTarball(Buffer.from('not a tarball'))).toThrow(/not a gzipped tar/);
    const whole = Buffer.concat([entry('package/package.json', 'x'.repeat(2000))]);
    expect(() => readTarball(gzipSync(whole.subarray(0, 1024)))).toThrow(/truncated/);
  });
});
