import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptSecret, encryptSecret } from './cipher.js';

/**
 * Where secrets the service must use again live (insurer passwords). The encrypted file store is
 * the default; the desktop app puts the OS keychain behind the same interface.
 */
export interface SecretStore {
  readonly kind: string;
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  delete(name: string): void;
}

const MASTER_KEY_BYTES = 32;

/**
 * The master key: COURTIER_MASTER_KEY (32 bytes as base64 or hex) when set, else
 * secrets/master.key in the data dir, created once with 0600 permissions.
 */
export function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv, randomBytes: (n: number) => Buffer): Buffer {
  const fromEnv = env.COURTIER_MASTER_KEY;
  if (fromEnv) {
    const key = /^[0-9a-fA-F]{64}$/.test(fromEnv) ? Buffer.from(fromEnv, 'hex') : Buffer.from(fromEnv, 'base64');
    if (key.length !== MASTER_KEY_BYTES) throw new Error('COURTIER_MASTER_KEY must be 32 bytes, as 64 hex characters or base64.');
    return key;
  }
  const dir = join(dataDir, 'secrets');
  const file = join(dir, 'master.key');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(MASTER_KEY_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== MASTER_KEY_BYTES)
    throw new Error(`${file} is damaged; restore it from a backup (secrets encrypted with it cannot be read otherwise).`);
  return key;
}

/**
 * AES-256-GCM, one file per secret (named by a hash of the secret's name), written atomically:
 * a CLI and a running server can both use it, and every read sees the latest value.
 */
export function createEncryptedFileStore(dataDir: string, masterKey: Buffer): SecretStore {
  const dir = join(dataDir, 'secrets', 'store');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fileOf = (name: string) => join(dir, `${createHash('sha256').update(name).digest('hex')}.enc`);
  return {
    kind: 'encrypted-file',
    get(name) {
      let sealed: string;
      try {
        sealed = readFileSync(fileOf(name), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
      return decryptSecret(masterKey, sealed);
    },
    set(name, value) {
      const file = fileOf(name);
      const temp = `${file}.${process.pid}.tmp`;
      writeFileSync(temp, encryptSecret(masterKey, value), { mode: 0o600 });
      renameSync(temp, file);
    },
    delete(name) {
      rmSync(fileOf(name), { force: true });
    },
  };
}
