/**
 * The desktop app's keychain store never answers a secret older than the last one written.
 * The OS keychain is the outside world here: a stand-in that refuses writes; the file store is real.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKeychainStore } from '../../server/secrets/keychain-store.js';
import { createEncryptedFileStore } from '../../server/secrets/secret-store.js';
import { memoryKeyring } from '../helpers/keyring.js';

describe('CWE-672 (use after release): a password changed while the keychain refused the write is the one in force', () => {
  it('the new value, kept in the encrypted file, wins over the keychain’s older one; the next accepted write moves it back', () => {
    const backend = memoryKeyring();
    const fallback = createEncryptedFileStore(mkdtempSync(join(tmpdir(), 'courtier-secrets-')), randomBytes(32));
    const store = createKeychainStore({ backend, service: 'Courtier', fallback });

    store.set('insurer:cab:axa', 'old password');
    expect(backend.entries.get('Courtier/secret:insurer:cab:axa')).toBe('old password');

    backend.refuseWrites = true;
    store.set('insurer:cab:axa', 'new password');
    expect(store.get('insurer:cab:axa')).toBe('new password');

    backend.refuseWrites = false;
    store.set('insurer:cab:axa', 'newest password');
    expect(store.get('insurer:cab:axa')).toBe('newest password');
    expect(fallback.get('insurer:cab:axa')).toBeUndefined();
  });

  it('a password deleted while the keychain refused to delete its copy is gone', () => {
    const backend = memoryKeyring();
    const fallback = createEncryptedFileStore(mkdtempSync(join(tmpdir(), 'courtier-secrets-')), randomBytes(32));
    const store = createKeychainStore({ backend, service: 'Courtier', fallback });
    store.set('insurer:cab:axa', 'a password');
    backend.refuseWrites = true;
    store.delete('insurer:cab:axa');
    expect(store.get('insurer:cab:axa')).toBeUndefined();
    backend.refuseWrites = false;
    store.set('insurer:cab:axa', 'set again');
    expect(store.get('insurer:cab:axa')).toBe('set again');
  });

  it('a password the CLI wrote to the file store (it cannot reach the keychain) is the one read', () => {
    const backend = memoryKeyring();
    const fallback = createEncryptedFileStore(mkdtempSync(join(tmpdir(), 'courtier-secrets-')), randomBytes(32));
    const store = createKeychainStore({ backend, service: 'Courtier', fallback });
    store.set('insurer:cab:axa', 'set in the desktop app');
    fallback.set('insurer:cab:axa', 'set later with courtier insurers set-credentials');
    expect(store.get('insurer:cab:axa')).toBe('set later with courtier insurers set-credentials');
  });
});
