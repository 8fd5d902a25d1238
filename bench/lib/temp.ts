import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerCleanup } from './cleanup.js';

export interface TempDir {
  path: string;
  /** A fresh sub-folder, removed with its parent. */
  sub(name: string): string;
  remove(): void;
}

/** A temp dir removed at the end of the run, on Ctrl-C, or on a crash. */
export function createTempDir(prefix: string): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  const removeNow = () => rmSync(path, { recursive: true, force: true });
  const unregister = registerCleanup({ run: async () => removeNow(), runSync: removeNow });
  let count = 0;
  return {
    path,
    sub(name) {
      count += 1;
      const dir = join(path, `${String(count).padStart(2, '0')}-${name}`);
      mkdirSync(dir);
      return dir;
    },
    remove() {
      unregister();
      removeNow();
    },
  };
}
