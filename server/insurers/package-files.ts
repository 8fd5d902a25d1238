import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The file an adapter package's signature is written to, at its root. */
export const SIGNATURE_FILE = 'courtier-signature.json';

/** Not part of a package: a checkout's history, the author's dependencies, and the signature itself. */
const LEFT_OUT = new Set(['.git', 'node_modules']);

/** Packages are small; anything bigger is refused before it is read whole. */
export const MAX_PACKAGE_BYTES = 32 * 1024 * 1024;
const MAX_PACKAGE_FILES = 2_000;

export class PackageFilesError extends Error {
  override name = 'PackageFilesError';
}

/**
 * The files of an adapter package in a directory, by their path relative to it (with `/`), sorted:
 * every regular file but `.git/`, `node_modules/` and the signature. A symbolic link is refused
 * (it could point outside the package).
 */
export function packageFiles(dir: string): string[] {
  const files: string[] = [];
  let total = 0;
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative ? posix.join(relative, entry.name) : entry.name;
      if (!relative && (LEFT_OUT.has(entry.name) || entry.name === SIGNATURE_FILE)) continue;
      if (entry.isSymbolicLink()) throw new PackageFilesError(`${path} is a symbolic link; a package holds plain files only.`);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        total += lstatSync(join(dir, path)).size;
        files.push(path);
        if (files.length > MAX_PACKAGE_FILES) throw new PackageFilesError(`the package holds more than ${MAX_PACKAGE_FILES} files.`);
        if (total > MAX_PACKAGE_BYTES) throw new PackageFilesError(`the package is larger than ${MAX_PACKAGE_BYTES / 1024 / 1024} MiB.`);
      }
    }
  };
  walk('');
  return files.sort();
}

/** SHA-256 (hex) of each of the package's files. */
export function digestFiles(dir: string, files: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    files.map((path) => [
      path,
      createHash('sha256')
        .update(readFileSync(join(dir, path)))
        .digest('hex'),
    ]),
  );
}
