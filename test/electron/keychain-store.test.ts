import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKeychainStore, openDesktopSecretStore, probeKeychain } from '../../server/secrets/keychain-store.js';
import { createEncryptedFileStore, loadMasterKey } from '../../server/secrets/secret-store.js';
import { memoryKeyring } from '../helpers/keyring.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'courtier-keychain-'));

describe('the keychain secret store', () => {
  it('probe: answers, or says why not, never throws', () => {
    const ok = memoryKeyring();
    expect(probeKeychain(ok, 'Courtier')).toEqual({ available: true });
    expect(ok.entries.size).toBe(0);
    expect(probeKeychain(memoryKeyring({ failing: true }), 'Courtier')).toEqual({
      available: false,
      reason: 'Platform secure storage failure: the keychain refused.',
    });
  });

  it('keeps the master key and the insurer passwords in the keychain, not on disk', () => {
    const dataDir = tempDir();
    const keyring = memoryKeyring();
    const opened = openDesktopSecretStore({ dataDir, env: {}, randomBytes, backend: keyring, service: 'Courtier' });
    expect(opened.kind).toBe('keychain');
    expect(opened.warning).toBeNull();
    expect(opened.store.kind).toBe('keychain');
    expect(keyring.entries.get('Courtier/master-key')).toMatch(/^[A-Za-z0-9+/=]{44}$/);
    expect(existsSync(join(dataDir, 'secrets', 'master.key'))).toBe(false);
    opened.store.set('insurer:cab:axa', 'p@ssw0rd');
    expect(keyring.entries.get('Courtier/secret:insurer:cab:axa')).toBe('p@ssw0rd');
    expect(opened.store.get('insurer:cab:axa')).toBe('p@ssw0rd');
    opened.store.delete('insurer:cab:axa');
    expect(opened.store.get('insurer:cab:axa')).toBeUndefined();
  });

  it('moves an existing master key file into the keychain and still reads older secrets', () => {
    const dataDir = tempDir();
    const key = loadMasterKey(dataDir, {}, randomBytes);
    createEncryptedFileStore(dataDir, key).set('insurer:cab:generali', 'older');
    const keyring = memoryKeyring();
    const opened = openDesktopSecretStore({ dataDir, env: {}, randomBytes, backend: keyring });
    expect(keyring.entries.get('Courtier/master-key')).toBe(key.toString('base64'));
    expect(existsSync(join(dataDir, 'secrets', 'master.key'))).toBe(false);
    expect(opened.store.get('insurer:cab:generali')).toBe('older');
    // The next write moves it into the keychain and removes the file copy.
    opened.store.set('insurer:cab:generali', 'newer');
    expect(keyring.entries.get('Courtier/secret:insurer:cab:generali')).toBe('newer');
    expect(createEncryptedFileStore(dataDir, key).get('insurer:cab:generali')).toBeUndefined();
  });

  it('falls back to the encrypted file store, with a warning, when no keychain answers', () => {
    const dataDir = tempDir();
    const opened = openDesktopSecretStore({ dataDir, env: {}, randomBytes, backend: memoryKeyring({ failing: true }) });
    expect(opened.kind).toBe('encrypted-file');
    expect(opened.store.kind).toBe('encrypted-file');
    expect(opened.warning).toMatch(/OS keychain did not answer \(Platform secure storage failure/);
    opened.store.set('insurer:cab:axa', 'secret');
    expect(opened.store.get('insurer:cab:axa')).toBe('secret');
    expect(readFileSync(join(dataDir, 'secrets', 'master.key'), 'utf8')).toHaveLength(44);
  });

  it('a keychain that fails on one operation falls back for that operation, and says so', () => {
    const dataDir = tempDir();
    const keyring = memoryKeyring();
    const fallback = createEncryptedFileStore(dataDir, randomBytes(32));
    const failures: string[] = [];
    const store = createKeychainStore({ backend: keyring, service: 'Courtier', fallback, onFallback: (op) => failures.push(op) });
    keyring.failing = true;
    store.set('a', 'kept on disk');
    expect(fallback.get('a')).toBe('kept on disk');
    expect(store.get('a')).toBe('kept on disk');
    store.delete('a');
    expect(store.get('a')).toBeUndefined();
    expect(failures).toEqual(['set', 'delete']);
  });

  it('COURTIER_MASTER_KEY still wins', () => {
    const key = randomBytes(32);
    const keyring = memoryKeyring();
    const opened = openDesktopSecretStore({
      dataDir: tempDir(),
      env: { COURTIER_MASTER_KEY: key.toString('hex') },
      randomBytes,
      backend: keyring,
    });
    expect(opened.kind).toBe('keychain');
    expect(keyring.entries.has('Courtier/master-key')).toBe(false);
  });
});
