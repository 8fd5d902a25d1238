import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { digestFiles, packageFiles } from './package-files.js';
import { readTarball } from './tarball.js';

/**
 * Installed adapters live in the data dir, under insurers/:
 *
 *   installed.json                      which folder holds each insurer's current package
 *   packages/<code>/<version>-<digest>/ one folder per installed package, never changed in place
 *   node_modules/@courtier/adapter-kit/ re-exports this Courtier's adapter kit, where the packages' imports find it
 *
 * A new install gets a new folder, so a running service imports it afresh (modules are cached by
 * URL) and a job still running keeps the code it started with.
 */
export function installedRoot(dataDir: string): string {
  return join(dataDir, 'insurers');
}

/** The file a running service watches: any write to it means "read the installed adapters again". */
export function installedIndexFile(dataDir: string): string {
  return join(installedRoot(dataDir), 'installed.json');
}

const indexSchema = z.strictObject({
  format: z.literal(1),
  packages: z.record(z.string(), z.string().regex(/^[A-Za-z0-9.+-]+$/)),
  /** When a reload was last asked for, so that asking writes the file even with nothing changed. */
  touched_at: z.string().optional(),
});
type InstalledIndex = z.infer<typeof indexSchema>;

export function readInstalledIndex(dataDir: string): InstalledIndex {
  const path = installedIndexFile(dataDir);
  if (!existsSync(path)) return { format: 1, packages: {} };
  return indexSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Written whole to a temporary file, then renamed over: a crash leaves the old index or the new, never half. */
export function writeInstalledIndex(dataDir: string, index: InstalledIndex): void {
  const path = installedIndexFile(dataDir);
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(index, null, 2)}\n`);
  renameSync(temporary, path);
}

/** The folder of an installed insurer's current package. */
export function installedPackageDir(dataDir: string, code: string, folder: string): string {
  return join(installedRoot(dataDir), 'packages', code, folder);
}

/**
 * Copies a package (a folder, or a gzipped tar as `npm pack` writes it) into a new staging folder
 * of the data dir, and returns it: the package's files only (see packageFiles), signature included.
 */
export function stagePackage(dataDir: string, source: string, isTarball: boolean): string {
  const staging = join(installedRoot(dataDir), 'staging', randomBytes(8).toString('hex'));
  mkdirSync(staging, { recursive: true });
  if (isTarball) {
    for (const [path, body] of readTarball(readFileSync(source))) {
      mkdirSync(dirname(join(staging, path)), { recursive: true });
      writeFileSync(join(staging, path), body);
    }
  } else {
    for (const path of [
      ...packageFiles(source),
      ...(existsSync(join(source, 'courtier-signature.json')) ? ['courtier-signature.json'] : []),
    ]) {
      mkdirSync(dirname(join(staging, path)), { recursive: true });
      cpSync(join(source, path), join(staging, path));
    }
  }
  return staging;
}

/** Moves a checked staging folder to its place, named by version and content. */
export function placePackage(dataDir: string, staging: string, code: string, version: string): string {
  const files = digestFiles(staging, packageFiles(staging));
  const digest = createDigest(files);
  const folder = `${version}-${digest}`;
  const target = installedPackageDir(dataDir, code, folder);
  if (existsSync(target)) rmSync(staging, { recursive: true, force: true });
  else {
    mkdirSync(dirname(target), { recursive: true });
    renameSync(staging, target);
  }
  return folder;
}

function createDigest(files: Record<string, string>): string {
  const text = Object.entries(files)
    .map(([path, digest]) => `${digest}  ${path}`)
    .join('\n');
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/**
 * Makes `import '@courtier/adapter-kit'` in an installed package find this Courtier's kit: a small
 * module under the data dir's insurers/node_modules that re-exports it by URL, so that adapters and
 * Courtier share one RobotError class and one zod.
 */
export function linkAdapterKit(dataDir: string): void {
  const kitUrl = pathToFileURL(createRequire(import.meta.url).resolve('@courtier/adapter-kit')).href;
  const dir = join(installedRoot(dataDir), 'node_modules', '@courtier', 'adapter-kit');
  const entry = `// Written by Courtier at each start: its own adapter kit, for the installed adapters.\nexport * from ${JSON.stringify(kitUrl)};\n`;
  const manifest = `${JSON.stringify({ name: '@courtier/adapter-kit', type: 'module', main: 'index.js' }, null, 2)}\n`;
  if (existsSync(join(dir, 'index.js')) && readFileSync(join(dir, 'index.js'), 'utf8') === entry) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), manifest);
  writeFileSync(join(dir, 'index.js'), entry);
}

/** Removes an insurer's package folders except the one named (the current one; all when undefined). */
export function prunePackages(dataDir: string, code: string, keep: string | undefined): void {
  const dir = join(installedRoot(dataDir), 'packages', code);
  if (!existsSync(dir)) return;
  if (keep === undefined) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  for (const folder of readdirSync(dir)) {
    if (folder !== keep) rmSync(join(dir, folder), { recursive: true, force: true });
  }
}
