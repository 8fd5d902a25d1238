import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { needsRotation, openServerLog, SERVER_LOG_MAX_BYTES } from '../../electron/server-log.js';

describe('the server log', () => {
  it('is put aside only past its size limit', () => {
    expect(needsRotation(null)).toBe(false);
    expect(needsRotation(SERVER_LOG_MAX_BYTES)).toBe(false);
    expect(needsRotation(SERVER_LOG_MAX_BYTES + 1)).toBe(true);
  });

  it('appends to server.log (0600); a log past the limit becomes server.log.1 and a new one starts', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'courtier-log-')), 'logs');
    const first = openServerLog(dir);
    first.end('one\n');
    await once(first, 'close');
    const second = openServerLog(dir);
    second.end('two\n');
    await once(second, 'close');
    const file = join(dir, 'server.log');
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);

    writeFileSync(file, Buffer.alloc(SERVER_LOG_MAX_BYTES + 1, 0x61));
    const third = openServerLog(dir);
    third.end('three\n');
    await once(third, 'close');
    expect(statSync(`${file}.1`).size).toBe(SERVER_LOG_MAX_BYTES + 1);
    expect(readFileSync(file, 'utf8')).toBe('three\n');
  });
});
