import type { KeyringBackend } from '../../server/secrets/keychain-store.js';

/** The OS keychain (the outside world here): entries in a map; `failing` refuses everything, `refuseWrites` only writes and deletes (a locked keychain, a denied prompt). */
export interface MemoryKeyring extends KeyringBackend {
  entries: Map<string, string>;
  failing: boolean;
  refuseWrites: boolean;
}

export function memoryKeyring(options: { failing?: boolean } = {}): MemoryKeyring {
  const entries = new Map<string, string>();
  const refuse = (write: boolean) => {
    if (backend.failing || (write && backend.refuseWrites)) throw new Error('Platform secure storage failure: the keychain refused.');
  };
  const backend: MemoryKeyring = {
    entries,
    failing: options.failing ?? false,
    refuseWrites: false,
    get(service, account) {
      refuse(false);
      return entries.get(`${service}/${account}`) ?? null;
    },
    set(service, account, value) {
      refuse(true);
      entries.set(`${service}/${account}`, value);
    },
    delete(service, account) {
      refuse(true);
      return entries.delete(`${service}/${account}`);
    },
  };
  return backend;
}
