import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { holdsSecret, redactSecrets } from '../../server/robots/secret-forms.js';
import { readZipEntries, ZipFormatError } from '../../server/robots/zip-entries.js';

const SECRET = 'Kanari+7f "quote" & <tag> 100% été';

describe('the forms of a secret that a trace may hold', () => {
  it('finds it as typed, URL- and form-encoded, JSON- and HTML-escaped', () => {
    const forms = [
      SECRET,
      encodeURIComponent(SECRET),
      new URLSearchParams({ password: SECRET }).toString(),
      JSON.stringify({ value: SECRET }),
      '<input value="Kanari+7f &quot;quote&quot; &amp; &lt;tag&gt; 100% été">',
    ];
    for (const form of forms) expect(holdsSecret([Buffer.from(`…${form}…`)], [SECRET]), form).toBe(true);
    expect(holdsSecret([Buffer.from('nothing of the sort')], [SECRET])).toBe(false);
  });

  it('finds it inside base64 data wherever it starts (each of the three alignments)', () => {
    for (let before = 0; before < 6; before++) {
      const data = Buffer.concat([randomBytes(before), Buffer.from(SECRET), randomBytes(5)]).toString('base64');
      expect(holdsSecret([Buffer.from(data)], [SECRET]), `${before} bytes before it`).toBe(true);
    }
  });

  it('redacts every form from a message', () => {
    expect(redactSecrets(`login failed for ${SECRET} (${encodeURIComponent(SECRET)})`, [SECRET])).toBe('login failed for ••• (•••)');
  });
});

/** A zip of one deflated entry, as Playwright writes them (no data descriptor, no zip64). */
function zipOf(name: string, data: Buffer): Buffer {
  const compressed = deflateRawSync(data);
  const nameBytes = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(compressed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(compressed.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  central.writeUInt32LE(0, 42);
  const centralOffset = local.length + nameBytes.length + compressed.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBytes.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, nameBytes, compressed, central, nameBytes, end]);
}

describe('reading a trace archive', () => {
  it('inflates its entries', async () => {
    const entries = await readZipEntries(zipOf('trace.trace', Buffer.from('{"type":"before"}\n'.repeat(100))));
    expect(entries).toEqual([{ name: 'trace.trace', data: Buffer.from('{"type":"before"}\n'.repeat(100)) }]);
  });

  it('refuses what it cannot read rather than calling it clean', async () => {
    await expect(readZipEntries(Buffer.from('not a zip at all, just text'))).rejects.toThrow(ZipFormatError);
    const truncated = zipOf('trace.trace', Buffer.from('x'.repeat(1000)));
    await expect(readZipEntries(truncated.subarray(0, truncated.length - 30))).rejects.toThrow(ZipFormatError);
  });
});
