/**
 * The OS keychain in the desktop app. The store itself is server/secrets/keychain-store.ts, opened
 * by the server in its utility process (utility-entry.ts): insurer passwords and the master key go
 * to Windows Credential Manager, the macOS Keychain or the Secret Service, and when none answers the
 * encrypted file store of the data dir is used, with a warning (tray, log, preload status).
 */

/** The keychain "service" entries are filed under: the installed app and a development run never share entries. */
export function keychainService(packaged: boolean): string {
  return packaged ? 'Courtier' : 'Courtier (development)';
}

/** The warning in the broker's words, short enough for the tray. */
export function keychainWarning(kind: 'keychain' | 'encrypted-file', locale: 'fr' | 'en'): string | null {
  if (kind === 'keychain') return null;
  return locale === 'fr'
    ? 'Trousseau du système indisponible : mots de passe des assureurs dans le fichier chiffré du dossier de données'
    : 'OS keychain unavailable: insurer passwords are in the encrypted file of the data folder';
}
