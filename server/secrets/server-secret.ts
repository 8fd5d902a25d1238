import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET_BYTES = 32;

/**
 * The server's own secret (cursor and download-link signatures), created once in the data dir
 * with 0600 permissions and kept across restarts so that cursors and links stay valid.
 */
export function loadServerSecret(dataDir: string, randomBytes: (n: number) => Buffer): Buffer {
  const dir = join(dataDir, 'secrets');
  const file = join(dir, 'server.key');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    // 'wx': if another process (a CLI next to the server) created it first, read theirs.
    writeFileSync(file, randomBytes(SECRET_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (secret.length !== SECRET_BYTES) throw new Error(`${file} is damaged: remove it (cursors and download links will be renewed).`);
  return secret;
}

/** One key per purpose, so that a cursor can never pass as a download signature. */
export function deriveKey(secret: Buffer, purpose: 'cursor' | 'download-link' | 'webhook-secrets' | 'csrf' | 'audit-chain'): Buffer {
  return createHmac('sha256', secret).update(`courtier:${purpose}`).digest();
}
