import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createEncryptedFileStore, loadMasterKey, type SecretStore } from './secret-store.js';

/**
 * The OS keychain, reduced to what the store needs: Windows Credential Manager, the macOS
 * Keychain, or the Secret Service on Linux (through @napi-rs/keyring). Tests give a map instead.
 */
export interface KeyringBackend {
  get(service: string, account: string): string | null;
  set(service: string, account: string, value: string): void;
  /** True when something was deleted. */
  delete(service: string, account: string): boolean;
}

/** @napi-rs/keyring, loaded on first use: a missing prebuilt binary is a keychain that does not answer. */
function napiKeyringBackend(): KeyringBackend {
  type EntryClass = new (
    service: string,
    account: string,
  ) => {
    getPassword(): string | null;
    setPassword(password: string): void;
    deletePassword(): boolean;
  };
  let Entry: EntryClass | undefined;
  const entry = (service: string, account: string) => {
    Entry ??= (createRequire(import.meta.url)('@napi-rs/keyring') as { Entry: EntryClass }).Entry;
    return new Entry(service, account);
  };
  return {
    get: (service, account) => entry(service, account).getPassword(),
    set: (service, account, value) => entry(service, account).setPassword(value),
    delete: (service, account) => entry(service, account).deletePassword(),
  };
}

export interface KeychainProbe {
  available: boolean;
  /** Why not, in words (the keychain's own error). */
  reason?: string;
}

const PROBE_ACCOUNT = 'courtier-probe';

/** Whether the keychain answers: writes, reads back and deletes a throwaway entry. Never throws. */
export function probeKeychain(backend: KeyringBackend, service: string): KeychainProbe {
  const value = `probe-${process.pid}-${Date.now()}`;
  try {
    backend.set(service, PROBE_ACCOUNT, value);
    const read = backend.get(service, PROBE_ACCOUNT);
    backend.delete(service, PROBE_ACCOUNT);
    if (read !== value) return { available: false, reason: 'the keychain did not return what was written' };
    return { available: true };
  } catch (err) {
    return { available: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

export interface KeychainStoreOptions {
  backend: KeyringBackend;
  /** The keychain "service" every entry is filed under (e.g. "Courtier"). */
  service: string;
  /** Where values go when the keychain refuses a write, and where older values are read from. */
  fallback: SecretStore;
  /** Told when the keychain failed on one operation and the fallback was used. */
  onFallback?: (operation: 'get' | 'set' | 'delete', err: unknown) => void;
}

const SECRET_ACCOUNT_PREFIX = 'secret:';
/** What the file store holds for a secret deleted while the keychain refused to delete its copy. */
const DELETED = '\u0000deleted';

/**
 * Secrets in the OS keychain, one entry per secret. Values written before (by the CLI, or while
 * the keychain was unavailable) are still read from the encrypted file store and moved into the
 * keychain on the next write; a keychain that fails on one operation falls back to the file store
 * for it, so a locked keychain never loses an insurer password.
 *
 * A value in the file store is always the newest: every write to the keychain removes the file's
 * copy, so one there was written after (the keychain refused a write, or the CLI, which cannot
 * reach the keychain, changed it). Reads look there first, so a refused write never leaves the
 * keychain's older value in force.
 */
export function createKeychainStore(options: KeychainStoreOptions): SecretStore {
  const { backend, service, fallback } = options;
  const account = (name: string) => `${SECRET_ACCOUNT_PREFIX}${name}`;
  return {
    kind: 'keychain',
    get(name) {
      const newer = fallback.get(name);
      if (newer === DELETED) return undefined;
      if (newer !== undefined) return newer;
      try {
        return backend.get(service, account(name)) ?? undefined;
      } catch (err) {
        options.onFallback?.('get', err);
        return undefined;
      }
    },
    set(name, value) {
      try {
        backend.set(service, account(name), value);
      } catch (err) {
        options.onFallback?.('set', err);
        fallback.set(name, value);
        // Best effort: the older keychain entry is shadowed by the file's value anyway.
        try {
          backend.delete(service, account(name));
        } catch {
          // the keychain refuses everything right now
        }
        return;
      }
      // The keychain has it now: no second copy on disk.
      fallback.delete(name);
    },
    delete(name) {
      try {
        backend.delete(service, account(name));
      } catch (err) {
        options.onFallback?.('delete', err);
        // The keychain keeps its copy for now: a newer "deleted" in the file store shadows it.
        fallback.set(name, DELETED);
        return;
      }
      fallback.delete(name);
    },
  };
}

const MASTER_KEY_ACCOUNT = 'master-key';
const MASTER_KEY_BYTES = 32;

/**
 * The master key of the encrypted file store, kept in the keychain: taken from it, else moved
 * into it from secrets/master.key (the file is removed once the keychain returns the same key),
 * else created in it. COURTIER_MASTER_KEY still wins when set.
 */
function loadMasterKeyFromKeychain(
  backend: KeyringBackend,
  service: string,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  randomBytes: (n: number) => Buffer,
): Buffer {
  if (env.COURTIER_MASTER_KEY) return loadMasterKey(dataDir, env, randomBytes);
  const stored = backend.get(service, MASTER_KEY_ACCOUNT);
  if (stored !== null) {
    const key = Buffer.from(stored, 'base64');
    if (key.length !== MASTER_KEY_BYTES)
      throw new Error(`The master key in the OS keychain (${service}/${MASTER_KEY_ACCOUNT}) is damaged.`);
    return key;
  }
  const file = join(dataDir, 'secrets', 'master.key');
  const key = existsSync(file) ? loadMasterKey(dataDir, {}, randomBytes) : randomBytes(MASTER_KEY_BYTES);
  backend.set(service, MASTER_KEY_ACCOUNT, key.toString('base64'));
  if (backend.get(service, MASTER_KEY_ACCOUNT) !== key.toString('base64')) throw new Error('The OS keychain did not keep the master key.');
  if (existsSync(file) && readFileSync(file, 'utf8').trim() === key.toString('base64')) rmSync(file, { force: true });
  return key;
}

export interface DesktopSecrets {
  store: SecretStore;
  /** 'keychain', or 'encrypted-file' when the keychain does not answer. */
  kind: 'keychain' | 'encrypted-file';
  /** Set when the keychain does not answer: shown in the tray, the console and the log. */
  warning: string | null;
}

/**
 * The desktop app's secrets: the OS keychain when it answers (insurer passwords and the master
 * key), else the encrypted file store of the data dir with a warning. Never throws for a keychain
 * that is missing, locked or refusing.
 */
export function openDesktopSecretStore(options: {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  randomBytes: (n: number) => Buffer;
  service?: string;
  backend?: KeyringBackend;
  onFallback?: KeychainStoreOptions['onFallback'];
}): DesktopSecrets {
  const service = options.service ?? 'Courtier';
  const backend = options.backend ?? napiKeyringBackend();
  const probe = probeKeychain(backend, service);
  if (probe.available) {
    try {
      const masterKey = loadMasterKeyFromKeychain(backend, service, options.dataDir, options.env, options.randomBytes);
      const fallback = createEncryptedFileStore(options.dataDir, masterKey);
      return {
        store: createKeychainStore({ backend, service, fallback, onFallback: options.onFallback }),
        kind: 'keychain',
        warning: null,
      };
    } catch (err) {
      probe.available = false;
      probe.reason = err instanceof Error ? err.message : String(err);
    }
  }
  const store = createEncryptedFileStore(options.dataDir, loadMasterKey(options.dataDir, options.env, options.randomBytes));
  return {
    store,
    kind: 'encrypted-file',
    warning:
      `The OS keychain did not answer (${probe.reason ?? 'unknown reason'}): insurer passwords are kept in the encrypted file store ` +
      `of the data folder, under a key file beside them. Unlock or install a keychain (Secret Service on Linux) and restart Courtier.`,
  };
}
